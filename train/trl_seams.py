"""The TRL (and transformers Trainer) names verigrpo needs that are not public API: the one place an upgrade breaks.

Written against trl 1.16.0 and transformers 5.20.2 (pinned in pyproject.toml). Everything else in
``train/`` reaches these only through the hooks and helpers below. Each name, what verigrpo does with it,
and the test that pins it (``tests/train/test_trl_seams.py`` unless said otherwise):

* ``GRPOTrainer._generate_and_score_completions(inputs) -> dict``: each generation batch, scored.
  ``SeamedGRPOTrainer`` calls ``on_batch_start(inputs)`` before it and ``on_batch_scored(inputs, output)``
  after it (the rollout recorder), and runs it inside ``generating()`` (the CPU 4-bit speed-up).
* ``GRPOTrainer._log_completion_extra(column, values)``: the ``log_extra`` hook TRL hands to every reward
  function (a column of its completions table). ``SeamedGRPOTrainer`` passes each call on to
  ``on_completion_extra(column, values)`` after TRL has recorded it (the rollout logs' answer/explanation).
* ``GRPOTrainer._logs``: TRL's record of the last generation batch (``prompt``, ``completion``,
  ``rewards`` by function, ``advantages``), kept for its completions table; ``batch_logs`` reads it.
* ``GRPOTrainer._metrics[mode][name]``: the per-step metric lists TRL averages into each log line;
  ``SeamedGRPOTrainer.add_step_metric`` appends to them (the tool metrics, python_tool/trl_environment.py).
* ``Trainer._load_from_checkpoint(resume_from_checkpoint, model=None)`` (transformers): loads a checkpoint's
  weights on resume. ``SeamedGRPOTrainer`` runs it inside ``loading_checkpoint(model)`` (the dtype fix);
  tests/integration/test_resume.py checks the result.
* ``Trainer._load_optimizer_and_scheduler(checkpoint)`` (transformers; TRL overrides it): loads a checkpoint's
  optimizer and scheduler state on resume; ``SeamedGRPOTrainer.load_optimizer_and_scheduler`` (replay of a step after a checkpoint).
* ``VLLMGeneration._init_vllm()``: starts vLLM when the generation object is built. ``SeamedVLLMGeneration``
  replaces it with ``start_engine()``.
* ``VLLMGeneration._dist.gather_params(params)``: gathers sharded parameters (a collective under ZeRO-3);
  ``SeamedVLLMGeneration.gather_params``.
* ``VLLMGeneration._llm_weights_sleeping``: TRL re-pushes the weights before generating when it is true
  (its level-2 sleep discards them). ``SeamedVLLMGeneration.mark_weights_resident`` sets it false for an
  engine whose base never leaves vLLM.
* ``trl.extras.profiling.ProfilingContext._log_metrics(duration)`` (and its ``name``, ``Class.method``): called as
  each phase TRL profiles ends. ``profiled_phases(record)`` passes every one to ``record`` too
  (``scripts/bench_train.py``'s per-phase timings).
* ``trl.trainer.grpo_trainer.VLLMGeneration``: the name ``GRPOTrainer.__init__`` constructs its vLLM
  generation object from (it takes no argument for it). ``generation_class`` swaps it for one ``__init__``.

* ``GRPOTrainer._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations, ...)`` and
  ``GRPOTrainer._calculate_rewards(inputs, prompts, completions, completion_ids_list)``: the sampler and the reward
  call inside ``_generate_and_score_completions``. ``train/counterfactual.py`` replaces the first with a step's
  recorded ids and wraps the second, so TRL's own scoring re-scores a recorded step (tests/train/test_counterfactual.py).
* ``trl.trainer.utils._use_triton(device)``: decides whether TRL's fused LM head (``add_fused_lm_head``) projects
  only the labelled (completion) positions onto the vocabulary; ``lm_head_on_labelled_positions`` makes it true on
  CPU too, inside ``RecordingGRPOTrainer.training_step`` (tests/cpu/test_lm_head_on_labelled_positions.py).

The one private name the tool's eval turns need (``GRPOTrainer._get_tool_suffix_ids``) is in ``python_tool/seams.py``,
below ``train`` and ``evals``. Public TRL API is used everywhere else (``VLLMGeneration.generate``/``sync_weights``, ``GRPOTrainer``'s
arguments, ``trl.trainer.utils.ensure_master_addr_port``); the engines' docstrings list the contracts of
those they depend on (tests/train/test_trl_seams.py checks them too).
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext

from trl import GRPOTrainer
from trl.generation.vllm_generation import VLLMGeneration

TRL_VERSION = "1.16.0"  # the version every name here was read in


class SeamedGRPOTrainer(GRPOTrainer):
    """GRPOTrainer with the private steps verigrpo extends turned into named hooks (no-ops here)."""

    def _generate_and_score_completions(self, inputs):
        self.on_batch_start(inputs)
        with self.generating():
            output = super()._generate_and_score_completions(inputs)
        self.on_batch_scored(inputs, output)
        return output

    def on_batch_start(self, inputs: list[dict]) -> None:
        """A generation batch is about to be generated and scored."""

    def generating(self):
        """A context around generating and scoring a batch (TRL takes no gradient inside it)."""
        return nullcontext()

    def on_batch_scored(self, inputs: list[dict], output: dict) -> None:
        """A generation batch was generated and scored (training and evaluation alike)."""

    def _log_completion_extra(self, column: str, values: list):
        super()._log_completion_extra(column, values)
        self.on_completion_extra(column, values)

    def on_completion_extra(self, column: str, values: list) -> None:
        """A reward function logged a column (one value per local completion) through TRL's ``log_extra``."""

    def _load_from_checkpoint(self, resume_from_checkpoint, model=None):
        with self.loading_checkpoint(model or self.model):
            super()._load_from_checkpoint(resume_from_checkpoint, model)

    def load_checkpoint_weights(self, checkpoint: str) -> None:
        """Load a checkpoint's weights (and adapter) into the model as a resume does, without resuming the run."""
        self._load_from_checkpoint(checkpoint)

    def load_optimizer_and_scheduler(self, checkpoint: str) -> None:
        """Load a checkpoint's optimizer and scheduler state as a resume does (transformers' private loader)."""
        self._load_optimizer_and_scheduler(checkpoint)

    def loading_checkpoint(self, model):
        """A context around loading a checkpoint's weights into ``model`` on resume."""
        return nullcontext()

    def add_step_metric(self, name: str, value: float) -> None:
        """A value for this step's log line (TRL averages each metric's values at logging time)."""
        self._metrics["train" if self.model.training else "eval"][name].append(value)

    def batch_logs(self) -> dict:
        """TRL's record of the last generation batch: ``prompt``, ``completion`` (gathered over processes),
        ``rewards`` (function name -> values) and ``advantages``, each holding the latest batch last."""
        return self._logs


class SeamedVLLMGeneration(VLLMGeneration):
    """TRL's vLLM generation object with its private start-up and helpers behind named methods."""

    def _init_vllm(self) -> None:
        self.start_engine()

    def start_engine(self) -> None:
        """Start (or connect to) vLLM; called from TRL's ``__init__``."""
        raise NotImplementedError

    def gather_params(self, params):
        """A context in which ``params`` are whole on every process (a collective: every process must enter)."""
        return self._dist.gather_params(params)

    def mark_weights_resident(self) -> None:
        """Tell TRL that vLLM still holds the weights, so it never re-pushes them before generating."""
        self._llm_weights_sleeping = False


@contextmanager
def generation_class(factory):
    """While ``GRPOTrainer.__init__`` runs, build its vLLM generation object with ``factory`` (same arguments).

    ``GRPOTrainer`` has no argument for its generation backend; it constructs the module-level name
    ``VLLMGeneration``. This swaps that one name and restores it on exit, also on error.
    """
    from trl.trainer import grpo_trainer

    original = grpo_trainer.VLLMGeneration
    if original is not VLLMGeneration:
        raise RuntimeError(
            "trl.trainer.grpo_trainer.VLLMGeneration is not trl.generation.vllm_generation.VLLMGeneration: "
            f"this TRL version builds its vLLM backend differently; train/trl_seams.py (read in trl {TRL_VERSION}) "
            "needs updating."
        )
    grpo_trainer.VLLMGeneration = factory
    try:
        yield
    finally:
        grpo_trainer.VLLMGeneration = original


@contextmanager
def profiled_phases(record):
    """While the block runs, each phase TRL profiles also calls ``record(name, seconds)`` as it ends (``name`` as TRL
    names it: ``GRPOTrainer._generate_and_score_completions`` ...); TRL's own logging of it is unchanged."""
    from trl.extras import profiling

    original = profiling.ProfilingContext._log_metrics

    def log_metrics(context, duration: float) -> None:
        record(context.name, duration)
        original(context, duration)

    profiling.ProfilingContext._log_metrics = log_metrics
    try:
        yield
    finally:
        profiling.ProfilingContext._log_metrics = original


def generate_and_score(trainer, inputs) -> dict:
    """TRL's own ``GRPOTrainer._generate_and_score_completions`` on ``inputs``, called on the class so the project
    trainer's override (which logs rollouts and records replay rows) is skipped: the replay's counterfactual
    (``train/counterfactual.py``) re-scores a recorded batch through exactly TRL's scoring and advantages."""
    from trl import GRPOTrainer

    return GRPOTrainer._generate_and_score_completions(trainer, inputs)


@contextmanager
def lm_head_on_labelled_positions():
    """While the block runs, TRL's fused LM head (``trl.trainer.utils.add_fused_lm_head``) projects only the positions
    that have a label on CPU too, as it does on CUDA: the same per-token logprobs, entropies and gradients (each kept
    position's row is computed by the same kernel; tests/cpu/test_lm_head_on_labelled_positions.py checks them bit for
    bit on the real model), without projecting every prompt position onto the vocabulary in the forward, the
    backward's recomputation and the input gradient (0.70x a CPU loss forward + backward, docs/benchmarks.md).

    TRL decides with the module-level name ``trl.trainer.utils._use_triton(device)`` (``compact = ...`` in its fused
    forward: on devices without Triton it scores every position, to keep tile shapes fixed for compilers, which eager
    CPU does not need). This swaps that one name for one that is also true on CPU, and restores it on exit; the
    backward needs no swap (the compaction is plain autograd indexing). Other devices are left as TRL decides."""
    from trl.kernels.chunked_logprob import _use_triton
    from trl.trainer import utils

    original = getattr(utils, "_use_triton", None)
    if getattr(original, "verigrpo_seam", False):  # already inside the block
        yield
        return
    if original is not _use_triton or not _reads_use_triton(utils.add_fused_lm_head):
        raise RuntimeError(
            "trl.trainer.utils no longer decides the fused LM head's compaction with _use_triton(device): this TRL "
            f"version scores positions differently; train/trl_seams.py (read in trl {TRL_VERSION}) needs updating."
        )

    def use_compact(device) -> bool:
        return original(device) or device.type == "cpu"

    use_compact.verigrpo_seam = True
    utils._use_triton = use_compact
    try:
        yield
    finally:
        utils._use_triton = original


def _reads_use_triton(add_fused_lm_head) -> bool:
    """Whether the fused forward TRL's ``add_fused_lm_head`` defines (a closure inside it) reads ``_use_triton``."""
    inner = [const for const in add_fused_lm_head.__code__.co_consts if hasattr(const, "co_names")]
    return any("_use_triton" in code.co_names for code in inner)
