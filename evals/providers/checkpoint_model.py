"""Evaluate a training checkpoint as it was trained: ``--model verigrpo/<run dir>``.

    inspect eval evals/math_task.py@math_verified --model verigrpo/runs/demo
    inspect eval evals/math_task.py@math_verified --model verigrpo/runs/demo -M precision=full
    inspect eval evals/math_task.py@math_verified --model verigrpo/runs/demo@best
    inspect eval my_task.py --model verigrpo/runs/demo   # the run's completion length, greedy

The policy GRPO trains is the base *as loaded for training* plus the LoRA adapter: with
``load_in_4bit`` that is the 4-bit base. ``hf/<run dir>`` loads the adapter on the full-precision
base instead (transformers reads ``adapter_config.json`` and knows nothing of the quantization), so it
scores a different model from the one the rewards shaped. This provider reads the run's ``run.json``
(train/artifacts/manifest.py) and loads the base the way training did: TRL's own ``get_quantization_config``
on the recorded model config, and the recorded ``dtype``. ``-M precision=full`` drops the
quantization (the adapter on the unquantized base, in the recorded ``dtype``), for comparison.
``verigrpo/<run>@best`` loads the checkpoint that scored best on the run's held-out evals
(``best_checkpoint.json``, train/guards/best_checkpoint.py).

Generation defaults are the run's own, so a task that sets none (Inspect's default is 2,048 sampled tokens) does
not stall a CPU: at most the run's ``max_completion_length`` new tokens, greedy. A task's or ``--max-tokens``'s
``max_tokens`` wins, and so does sampling asked for with ``--temperature`` above 0 (or ``-M do_sample=true``;
``-M do_sample=false`` is always greedy). The provider's first line says what it loads and with which defaults. The
weights load when the model first generates, not when Inspect builds the model (before the task): a task argument
that cannot work stops the eval before any weights load (``evals/task_errors.py``).

Everything else is Inspect's ``hf`` provider (batching, chat template, ``-M device=cpu``); any other ``-M`` argument
still goes to ``from_pretrained`` and wins over what run.json says. One addition: a greedy batch is decoded by
``cpu.greedy_batch`` (the prompts' shared prefix once, finished rows dropped; the same greedy
tokens up to floating-point near-ties), which makes an eval of the one-shot math task ~1.6x cheaper;
``-M shared_prefix=false`` keeps transformers' own ``generate``. Inspect batches up to
``--max-connections`` requests: set it to the number of problems for one batch, so the batch (and
with it every greedy token) does not depend on timing.

A run trained with tools (run.json: ``tools: [python]``) evaluated on a task that offers the tool
(``-T tools=true``, with the run's ``tool_*`` limits) is answered as training's tool loop generates:
the run's tool template, the training tool's schema, TRL's ids and parser, its rounds and completion
budget (``python_tool/turns.py``, through the provider the held-out evals use, ``evals/providers/policy_model.py``;
each conversation alone, greedy: ``-M do_sample=false`` is required). Inspect's ``hf`` provider would
render the tool from Inspect's ``ToolInfo`` and parse calls with its own handler.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass
from logging import getLogger
from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, ModelAPI
from rich.markup import escape

from cpu.bnb_cpu import dequantize_once
from cpu.greedy_batch import install
from evals.providers.model_info import register_model_info
from evals.providers.policy_model import PolicyAPI
from python_tool.trl_environment import tool_config
from python_tool.turns import ToolSetting
from records.best_checkpoint import BEST_SUFFIX, NoBestCheckpoint, best_checkpoint_dir
from records.inspect_seams import PrerequisiteError, hf_model_api
from records.run_manifest import RUN_JSON, RunManifestError, read_run_manifest

logger = getLogger(__name__)

PROVIDER = "verigrpo"  # the provider's name in model strings (evals/inspect_plugin registers it)
PRECISIONS = ("trained", "full")
"""``trained``: load the base as run.json says training did (quantization included); ``full``: unquantized."""

_WEIGHTS = ("adapter_config.json", "config.json")  # a LoRA adapter, or a full fine-tune
_TOKENIZER = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")


class CheckpointError(ValueError, PrerequisiteError):
    """A run directory that cannot be evaluated as trained: says which file is missing and what to do (``inspect eval``
    prints it alone and exits 1, as Inspect does a ``PrerequisiteError``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.message = escape(f"error: {text}")


def _checkpoints(run_dir: Path) -> list[Path]:
    found = [p for p in run_dir.glob("checkpoint-*") if p.is_dir() and p.name.split("-", 1)[1].isdigit()]
    return sorted(found, key=lambda p: int(p.name.split("-", 1)[1]))


def resolve_run_dir(name: str) -> Path:
    """The directory a ``verigrpo/`` model name loads: the name itself, or for ``<run>@best`` the checkpoint that
    scored best on the run's held-out evals (``records/best_checkpoint.py``)."""
    if not name.endswith(BEST_SUFFIX):
        return Path(name)
    run_dir = Path(name.removesuffix(BEST_SUFFIX))
    if not run_dir.is_dir():
        raise CheckpointError(f"{run_dir}: no such directory (resolved to {run_dir.resolve()})")
    try:
        return best_checkpoint_dir(run_dir)
    except NoBestCheckpoint as exc:
        raise CheckpointError(str(exc)) from None


def read_run(run_dir: str | Path) -> dict:
    """The run.json of ``run_dir``, after checking the directory holds something loadable next to it."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"{run_dir}: no such directory (resolved to {run_dir.resolve()})")
    try:
        run = read_run_manifest(run_dir)
    except RunManifestError as exc:
        raise CheckpointError(f"{exc}: not a run manifest") from None
    if run is None:
        saved = _checkpoints(run_dir)
        hint = (
            f"the run has not finished; its newest checkpoint is {saved[-1]}: --model verigrpo/{saved[-1]}"
            if saved
            else "it is not a train/grpo.py output directory; evaluate a plain model with --model hf/<path>"
        )
        raise CheckpointError(f"{run_dir / RUN_JSON} not found: {hint}")
    if not any((run_dir / name).is_file() for name in _WEIGHTS):
        raise CheckpointError(
            f"{run_dir} has run.json but no adapter_config.json (nor config.json): training did not save here "
            "yet; use one of its checkpoint-N folders"
        )
    try:
        run["config"]["model"]["model_name_or_path"]
    except (KeyError, TypeError) as exc:
        raise CheckpointError(f"{run_dir / RUN_JSON}: not a run manifest with config.model ({exc!r})") from None
    return run


def quantization_config(model_config: dict):
    """TRL's own ``BitsAndBytesConfig`` for the recorded ``ModelConfig`` (None when training did not quantize).

    Built through ``trl.get_quantization_config``, the call train/grpo.py makes, so the two cannot drift.
    Keys this TRL version does not know are ignored (run.json may come from another version).
    """
    from trl import ModelConfig, get_quantization_config

    known = {f.name for f in dataclasses.fields(ModelConfig) if f.init}
    return get_quantization_config(ModelConfig(**{k: v for k, v in model_config.items() if k in known}))


def loading_args(run_dir: str | Path, precision: str = "trained") -> dict[str, Any]:
    """``from_pretrained`` arguments that load ``run_dir`` as trained (or unquantized with ``precision="full"``)."""
    if precision not in PRECISIONS:
        raise CheckpointError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    run_dir = Path(run_dir)
    model = read_run(run_dir)["config"]["model"]
    args: dict[str, Any] = {}
    if model.get("dtype") not in (None, "auto"):
        args["dtype"] = model["dtype"]
    if model.get("attn_implementation"):
        args["attn_implementation"] = model["attn_implementation"]
    if precision == "trained":
        quantization = quantization_config(model)
        if quantization is not None:
            args["quantization_config"] = quantization
    if not any((run_dir / name).is_file() for name in _TOKENIZER):
        args["tokenizer"] = _base_model(run_dir) or model["model_name_or_path"]
    return args


def _base_model(run_dir: Path) -> str | None:
    adapter = run_dir / "adapter_config.json"
    return json.loads(adapter.read_text()).get("base_model_name_or_path") if adapter.is_file() else None


def _check_base(run_dir: Path) -> None:
    """A LoRA adapter names its base by path: a run moved from another machine points nowhere."""
    base = _base_model(run_dir)
    if base and base.startswith(("/", "./", "../")) and not Path(base).exists():
        raise CheckpointError(
            f"{run_dir / 'adapter_config.json'}: its base model {base} does not exist on this machine; "
            "set base_model_name_or_path there to where the base model is"
        )


def describe(args: dict[str, Any]) -> str:
    """One line saying how the base is loaded, for the log."""
    quantization = args.get("quantization_config")
    if quantization is None:
        return f"unquantized, dtype {args.get('dtype', 'auto')}"
    if getattr(quantization, "load_in_4bit", False):
        nested = ", double quant" if quantization.bnb_4bit_use_double_quant else ""
        return f"4-bit {quantization.bnb_4bit_quant_type}{nested}, compute dtype {quantization.bnb_4bit_compute_dtype}"
    return "8-bit"


def _flag(value: Any, name: str) -> bool:
    """A boolean ``-M`` argument (Inspect passes YAML-parsed values: true/false, or a string from Python)."""
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "1", "yes"):
        return True
    if str(value).lower() in ("false", "0", "no"):
        return False
    raise CheckpointError(f"-M {name}= takes true or false, got {value!r}")


@dataclass(frozen=True)
class GenerationDefaults:
    """How a ``verigrpo/`` model generates unless the task or the command line says otherwise: the run's completion
    length, greedy. ``sampling``: ``-M do_sample`` as given (None: greedy unless ``--temperature`` is above 0)."""

    max_tokens: int | None
    sampling: bool | None

    @classmethod
    def of_run(cls, run: dict, do_sample: Any = None) -> GenerationDefaults:
        length = (run["config"].get("training") or {}).get("max_completion_length")
        sampling = None if do_sample is None else _flag(do_sample, "do_sample")
        return cls(length if isinstance(length, int) and length > 0 else None, sampling)

    def do_sample(self, config: GenerateConfig) -> bool:
        """Sample for this request? ``-M do_sample`` when given, else only for a temperature above 0."""
        return self.sampling if self.sampling is not None else bool(config.temperature)

    def describe(self) -> str:
        tokens = (
            f"max_tokens {self.max_tokens} (its max_completion_length)" if self.max_tokens else "Inspect's max_tokens"
        )
        how = {None: "greedy", False: "greedy (-M do_sample=false)", True: "sampling (-M do_sample=true)"}[
            self.sampling
        ]
        override = "; a task's or --max-tokens' max_tokens wins" + (
            ", --temperature above 0 samples" if self.sampling is None else ""
        )
        return f"{tokens}, {how}{override}"


def context_length(run_dir: Path, model: dict) -> int | None:
    """The context length the checkpoint's config declares, read without its weights (None if it cannot be read)."""
    from transformers import AutoConfig

    source = run_dir if (run_dir / "config.json").is_file() else _base_model(run_dir) or model["model_name_or_path"]
    try:
        return getattr(AutoConfig.from_pretrained(source), "max_position_embeddings", None)
    except (OSError, ValueError):
        return None


def checkpoint_api() -> type:
    """The provider class: Inspect's ``HuggingFaceAPI`` with run.json's loading arguments filled in, built without its
    weights (they load at the first generation, ``load``).

    Asked for only when a ``verigrpo/`` model is (evals/inspect_plugin imports this module then): it needs torch,
    transformers and trl.
    """
    hf_api = hf_model_api()

    class CheckpointAPI(hf_api):
        def __init__(
            self,
            model_name: str,
            base_url: str | None = None,
            api_key: str | None = None,
            config: GenerateConfig | None = None,
            **model_args: Any,
        ) -> None:
            precision = str(model_args.pop("precision", "trained"))
            self.shared_prefix = _flag(model_args.pop("shared_prefix", True), "shared_prefix")
            run_dir = resolve_run_dir(model_name)  # <run>@best: the run's best checkpoint
            args = loading_args(run_dir, precision)
            _check_base(run_dir)
            run = read_run(run_dir)
            self.run_dir = run_dir
            self.generation = GenerationDefaults.of_run(run, model_args.get("do_sample"))
            config = config or GenerateConfig()
            ModelAPI.__init__(self, str(run_dir), base_url, api_key, ["HF_TOKEN"], config)
            self.tool_api = None
            self._weights = (str(run_dir), base_url, api_key, config, {**args, **model_args})  # load()'s, until then
            self._load_error: Exception | None = None
            # registered under the name the model events carry, or Inspect builds the provider again (model_info.py)
            register_model_info(PROVIDER, self.model_name, context_length(run_dir, run["config"]["model"]))
            print(
                f"verigrpo: {model_name if Path(model_name) == run_dir else f'{model_name} = {run_dir}'} as "
                f"{precision} ({describe(args)}); defaults from its run.json: "
                f"{self.generation.describe()}",
                file=sys.stderr,
                flush=True,
            )

        # Inspect's hf provider sets and reads these two; here they load the weights the first time they are read
        @property
        def model(self):
            self.load()
            return self.__dict__.get("_hf_model")

        @model.setter
        def model(self, value) -> None:
            self.__dict__["_hf_model"] = value

        @property
        def tokenizer(self):
            self.load()
            return self.__dict__.get("_hf_tokenizer")

        @tokenizer.setter
        def tokenizer(self, value) -> None:
            self.__dict__["_hf_tokenizer"] = value

        def load(self) -> None:
            """Load the weights as run.json says (once; a failure is raised again, not retried)."""
            if self._load_error is not None:
                raise self._load_error
            if self._weights is None:
                return
            name, base_url, api_key, config, kwargs = self._weights
            self._weights = None
            try:
                logger.info("verigrpo: loading %s", name)
                hf_api.__init__(self, name, base_url, api_key, config, **kwargs)
                dequantize_once(self.model)  # 4-bit layers compute as in training, dequantized once (cpu/bnb_cpu.py)
                if self.shared_prefix:
                    install(self.model, self.tokenizer)
                self.tool_api = _tool_api(self.run_dir, self.model, self.tokenizer, self.model_name)
            except Exception as exc:
                self._load_error = exc
                raise

        def max_tokens(self) -> int | None:
            """The run's completion length where neither the task nor the command line sets max_tokens."""
            return self.generation.max_tokens or super().max_tokens()

        async def generate(self, input, tools, tool_choice, config):
            self.load()
            self.do_sample = self.generation.do_sample(config)  # read by the hf provider's generate below
            if tools and self.tool_api is not None:  # a tool-trained run: tool turns as training builds them
                if self.do_sample:
                    raise CheckpointError(
                        f"{self.model_name} was trained with tools; its tool evals are greedy, turn by turn as "
                        "training's held-out evals: leave out --temperature and -M do_sample=true"
                    )
                return await self.tool_api.generate(input, tools, tool_choice, config)
            return await super().generate(input, tools, tool_choice, config)

    return CheckpointAPI


def _tool_api(run_dir: Path, model, tokenizer, model_name: str):
    """For a run trained with tools (run.json), the held-out evals' provider over this model: it renders, parses and
    limits tool turns as training did. None for a run without tools."""
    config = read_run(run_dir)["config"]
    values = tool_config({**config.get("script", {}), **config.get("training", {})})
    if values is None:
        return None
    setting = ToolSetting.from_config(values)
    logger.info("verigrpo: %s was trained with tools %s: tool turns as in training", run_dir, values["tools"])
    return PolicyAPI(model_name, policy=model, tokenizer=tokenizer, batch_size=1, tools=setting)
