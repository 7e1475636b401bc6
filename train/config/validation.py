"""Every check on a parsed config that does not need the model: ``validate`` runs them all before
anything heavy loads, and each impossible or risky combination becomes one ``ConfigError`` paragraph
naming the key and the fix. What depends on the machine (device, vLLM build, GPU memory) is in
``train/config/machine_checks.py``; LoRA targets and what vLLM can serve of an adapter in ``train/config/lora_checks.py``.
"""

from __future__ import annotations

from pathlib import Path

from problems.domains import HOW_TO_REGISTER, Domain, RunDomain
from problems.math_data import OPERATIONS as ARITHMETIC_OPERATIONS
from problems.math_data import DatasetError
from rewards import ANSWER_FORMATS, DEFAULT_ANSWER_FORMAT, THINK_MODES
from rewards.sandbox import sandbox_problem
from train.config.arguments import (
    GRPO_BOUNDS,
    MODEL_BOUNDS,
    SCRIPT_BOUNDS,
    ConfigError,
    ScriptArguments,
    finite_number,
    out_of_range,
    refuse,
)
from train.config.distributed_checks import check_distributed
from train.config.lora_checks import check_lora
from train.config.machine_checks import check_machine
from train.config.share_base_checks import check_share_base
from train.config.tool_checks import TOOL_MODEL_NAME, ToolSetup, check_tools
from train.engines.choice import Engine, rollout_engine
from train.engines.vllm_server_api import normalize_url
from train.guards.sampling import biased_correction

MAX_LINE_BYTES = 1 << 20  # one jsonl record (a problem): 1 MiB is ~250k tokens, past any model's context


def validate(script_args: ScriptArguments, training_args, model_args, chosen: RunDomain) -> ToolSetup | None:
    """Every check that does not need the model: run before anything heavy is loaded. ``chosen``: the dataset's domain
    and the config's rewards, looked up once (problems/domains.py ``run_domain``). Returns the tool setup the tool
    check built (None without tools)."""
    cross_field = _cross_field_problems(script_args, training_args)
    refuse(
        out_of_range(script_args, SCRIPT_BOUNDS)
        + out_of_range(training_args, GRPO_BOUNDS)
        + out_of_range(model_args, MODEL_BOUNDS)
        + cross_field
        + biased_correction(training_args)  # train/guards/sampling.py: truncation the IS correction cannot undo
    )
    check_distributed(script_args, training_args, model_args)  # accelerate's launch: sharding, ranks' waits
    check_rewards(script_args, training_args, chosen)
    domain = check_data(script_args, chosen)
    check_held_out_eval(script_args, training_args, domain)
    check_model_and_resume(training_args, model_args)
    check_quantization(model_args)
    check_servers(script_args, training_args, model_args)
    # targets on the configured model; what vLLM cannot serve; room for the colocated engine's adapter versions
    check_lora(training_args, model_args, adapter_root=script_args.adapter_root)
    check_share_base(script_args, training_args, model_args)  # vllm_share_base: what it cannot serve
    check_machine(script_args, training_args, model_args)  # device, vLLM build, GPU memory
    # tools: loads the tokenizer (no weights) to check its template; the run trains with that tokenizer
    return check_tools(script_args, training_args, model_args, domain)


def _cross_field_problems(script_args: ScriptArguments, training_args) -> list[str]:
    problems = []
    if script_args.arithmetic_min_value > script_args.arithmetic_max_value:
        problems.append(
            f"arithmetic_min_value ({script_args.arithmetic_min_value}) must be <= arithmetic_max_value "
            f"({script_args.arithmetic_max_value})"
        )
    unknown_ops = sorted(set(script_args.arithmetic_operations) - set(ARITHMETIC_OPERATIONS))
    if unknown_ops or not script_args.arithmetic_operations:
        problems.append(
            f"arithmetic_operations must be a non-empty list from {list(ARITHMETIC_OPERATIONS)}, got {unknown_ops or '[]'}"
        )
    weights = training_args.reward_weights
    if weights is not None:
        bad = [w for w in weights if not finite_number(w) or w < 0]
        if bad:
            problems.append(
                f"reward_weights must be finite and >= 0 (a penalty belongs in the reward function, where the logs "
                f"record it), got {bad}"
            )
        elif not any(weights):
            problems.append("reward_weights are all 0: nothing would be learned; give at least one a positive weight")
    return problems


def check_rewards(script_args: ScriptArguments, training_args, chosen: RunDomain) -> None:
    """Reward names (``chosen``: problems/domains.py ``run_domain``), the think setting, and one weight per reward."""
    if chosen.unknown_rewards:
        raise ConfigError(
            f"reward_funcs: unknown reward function(s) {list(chosen.unknown_rewards)}. Valid names are "
            f"{list(chosen.reward_choices)}, "
            f"e.g. `reward_funcs: [correctness, format]`; {HOW_TO_REGISTER}."
        )
    if script_args.think not in THINK_MODES:
        raise ConfigError(
            f"think: {script_args.think!r} is not an answer-extraction setting. Valid values are "
            f"{' | '.join(THINK_MODES)} (after_last_close for models that reason inside <think>...</think>)."
        )
    weights = training_args.reward_weights
    if weights is not None and len(weights) != len(script_args.reward_funcs):
        raise ConfigError(
            f"reward_weights has {len(weights)} entries but reward_funcs has {len(script_args.reward_funcs)}: "
            "give one weight per reward function (e.g. `reward_weights: [1.0, 0.0]` to log format without training on it)."
        )
    check_answer_format(script_args, chosen)
    if chosen.not_built:  # a registered reward that refuses the think setting
        raise ConfigError(f"reward_funcs: {chosen.not_built}")


def check_answer_format(script_args: ScriptArguments, chosen: RunDomain) -> None:
    """``answer_format``: a named format, one the dataset's domain takes, and the default with the python tool."""
    fmt = getattr(script_args, "answer_format", DEFAULT_ANSWER_FORMAT)
    if fmt not in ANSWER_FORMATS:
        raise ConfigError(
            f"answer_format: {fmt!r} is not an answer format. Valid values are {' | '.join(ANSWER_FORMATS)} "
            "(answer_line: ANSWER: <value>; minerva: Final Answer: The final answer is $<value>$. I hope it is "
            "correct.; gsm8k: #### <value>)."
        )
    if fmt == DEFAULT_ANSWER_FORMAT:
        return
    if chosen.domain is not None and fmt not in chosen.domain.answer_formats:
        raise ConfigError(
            f"answer_format: {fmt!r}: the {chosen.domain.name} domain's prompt teaches no named answer format; "
            f"remove the key (answer formats are for the math datasets)"
        )
    if getattr(script_args, "tools", None):
        raise ConfigError(
            f"answer_format: {fmt!r} with tools: the python tool's prompt and warm start teach the "
            f"{DEFAULT_ANSWER_FORMAT} format (ANSWER: <value>); use answer_format: {DEFAULT_ANSWER_FORMAT} with tools"
        )


def check_data(script_args: ScriptArguments, chosen: RunDomain) -> Domain:
    """The dataset source, its domain against the rewards (``chosen``: problems/domains.py ``run_domain``), and the
    local file if any: returns the domain."""
    domain = chosen.domain
    if domain is None:
        raise ConfigError(f"dataset: {script_args.dataset!r} is not one of {list(chosen.sources)}.")
    is_code = domain.name == "code"
    mismatched = list(chosen.rewards_elsewhere)
    if mismatched:
        kind = "a code dataset (dataset: code)" if not is_code else "a math dataset"
        fix = (
            "Use `reward_funcs: [code_tests]` for code."
            if is_code
            else "Use `reward_funcs: [correctness, format]` for math."
        )
        raise ConfigError(
            f"reward_funcs {mismatched} cannot score dataset {script_args.dataset!r}: they need {kind}. {fix}"
        )
    if is_code and script_args.num_shots:
        raise ConfigError("num_shots: worked examples are math-only; set `num_shots: 0` with dataset: code.")
    if is_code:
        problem = sandbox_problem()
        if problem:
            raise ConfigError(f"dataset: code runs unit tests in a sandbox, which is unavailable here: {problem}")
    path = script_args.dataset_path
    if script_args.dataset in ("jsonl", "json") and not path:
        raise ConfigError(f"dataset: {script_args.dataset!r} needs dataset_path pointing at the file.")
    if path and not Path(path).is_file():
        raise ConfigError(f"dataset_path: {path} does not exist (resolved: {Path(path).resolve()}).")
    if path and Path(path).suffix != ".json":  # .json: one array, any layout
        check_line_lengths(path)
    return domain


def check_line_lengths(path: str | Path, limit: int = MAX_LINE_BYTES) -> None:
    """Refuse a line-per-record file with a line over ``limit`` bytes, before anything reads it whole.

    One problem is a question and its answer (or a code prompt and its tests): a line of megabytes
    is a broken export, and would otherwise be loaded, tokenized into a prompt far past any model's
    context and fail (or exhaust memory) only in the first generation. Streams in 1 MiB chunks.
    """
    lineno, length = 1, 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            pieces = chunk.split(b"\n")
            for index, piece in enumerate(pieces):
                length += len(piece)
                if length > limit:
                    raise ConfigError(
                        f"{path}:{lineno}: this line is over {limit:,} bytes (the limit for one record); a problem "
                        "this long is a broken export and would exceed the model's context. Fix or remove the record."
                    )
                if index < len(pieces) - 1:
                    lineno, length = lineno + 1, 0


def evaluates_held_out(training_args) -> bool:
    """Whether the trainer evaluates (``eval_strategy`` steps or epoch): its evaluation is the held-out Inspect eval."""
    return training_args.eval_strategy != "no"


def check_held_out_eval(script_args: ScriptArguments, training_args, domain: Domain) -> None:
    """With ``eval_strategy`` on: the dataset's ``domain`` (the one ``check_data`` resolved) has an eval task and
    problems training does not see (``problems/domains.py``), and ``eval_dataset_path``, if given, is a readable file
    of them."""
    if not evaluates_held_out(training_args):
        return
    strategy = getattr(training_args.eval_strategy, "value", training_args.eval_strategy)
    if domain.eval_task is None or domain.held_out is None:
        raise ConfigError(
            f"eval_strategy: {strategy}: dataset {script_args.dataset!r} ({domain.name}) has "
            "no Inspect eval task to run held-out evals with. Set `eval_strategy: no`."
        )
    try:
        domain.held_out(script_args, script_args.eval_problems, 1)
    except DatasetError as exc:
        raise ConfigError(f"eval_strategy: {strategy}: {exc}.") from None
    path = script_args.eval_dataset_path
    if path and not Path(path).is_file():
        raise ConfigError(f"eval_dataset_path: {path} does not exist (resolved: {Path(path).resolve()}).")
    if path and Path(path).suffix != ".json":
        check_line_lengths(path)


def check_model_and_resume(training_args, model_args) -> None:
    """The checkpoint to resume from and the base model: directories that hold what they must."""
    resume = training_args.resume_from_checkpoint
    if resume and not Path(resume, "trainer_state.json").is_file():
        raise ConfigError(
            f"resume_from_checkpoint: {resume} is not a checkpoint (no trainer_state.json; resolved: "
            f"{Path(resume).resolve()}). Give a <output_dir>/checkpoint-N directory of the run to continue."
        )
    if not model_args.model_name_or_path:
        raise ConfigError("model_name_or_path is required (a local checkpoint directory or a Hub model id).")
    path = model_args.model_name_or_path
    if (path.startswith((".", "/", "models/")) or Path(path).exists()) and not Path(path, "config.json").is_file():
        if Path(path).name == TOOL_MODEL_NAME:
            how = (
                "It is the CPU model after the tool-format warm start: run `make setup` (or `python "
                "scripts/prepare_cpu_model.py`, then `python scripts/prepare_tool_model.py`) first."
            )
        else:
            how = "For the CPU default run `python scripts/prepare_cpu_model.py` (or `make setup`) first."
        where = "" if Path(path).is_absolute() else f", resolved from the working directory: {Path(path).resolve()}"
        repository = Path(__file__).resolve().parents[2]
        if not Path(path).is_absolute() and (repository / path / "config.json").is_file():  # the cause: the directory
            how = f"It is in the repository: give --model_name_or_path {repository / path}, or run from {repository}."
        raise ConfigError(f"model_name_or_path: {path} is not a checkpoint directory (no config.json{where}). {how}")


def check_servers(script_args: ScriptArguments, training_args, model_args) -> None:
    """vllm_server_urls: well-formed, and only where the server engine uses them (not yet whether they answer)."""
    urls = script_args.vllm_server_urls
    if not urls:
        return
    if rollout_engine(training_args, model_args) is not Engine.SERVER:
        raise ConfigError(
            "vllm_server_urls is set but this run does not roll out on vLLM servers: they are used with "
            "`use_vllm: true`, `vllm_mode: server` and `use_peft: true`. Set those, or remove vllm_server_urls."
        )
    problems, seen = [], set()
    for url in urls:
        try:
            normal = normalize_url(url)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if normal in seen:
            problems.append(f"vllm_server_urls: {url!r} is listed twice")
        seen.add(normal)
    refuse(problems)


def check_quantization(model_args) -> None:
    """A quantized base is trained through a LoRA adapter, with one quantization."""
    if model_args.load_in_4bit and model_args.load_in_8bit:
        raise ConfigError("load_in_4bit and load_in_8bit are both set: choose one.")
    if (model_args.load_in_4bit or model_args.load_in_8bit) and not model_args.use_peft:
        raise ConfigError(
            "load_in_4bit/load_in_8bit needs use_peft: true: quantized weights cannot be trained directly, only a "
            "LoRA adapter on top of them."
        )
