"""Every bad configuration fails before a model is loaded, with the key and the fix in the message."""

from pathlib import Path

import pytest

from tests.helpers import CPU_CONFIG, REPO
from train.config import ConfigError, parse_config, resolve_run
from train.grpo import cli


def parse(*overrides: str):
    return parse_config(["--config", CPU_CONFIG, *overrides])


def test_cpu_config_parses_and_validates():
    script_args, training_args, model_args = parse()
    assert script_args.reward_funcs == ["correctness", "format"]
    assert model_args.load_in_4bit and model_args.use_peft and training_args.use_cpu
    assert training_args.generation_batch_size % training_args.num_generations == 0
    if Path(REPO, model_args.model_name_or_path, "config.json").is_file():
        resolve_run(script_args, training_args, model_args)


def test_cli_overrides_the_config():
    _, training_args, _ = parse("--max_steps", "5", "--learning_rate", "1e-5")
    assert training_args.max_steps == 5 and training_args.learning_rate == 1e-5


def test_unknown_config_key_is_an_error(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(Path(CPU_CONFIG).read_text() + "\nlearning_rat: 0.1\n")
    with pytest.raises(ConfigError, match=r"Unknown arguments from config file: \['--learning_rat', '0.1'\].*--help"):
        parse_config(["--config", str(config)])


def test_unknown_cli_flag_is_an_error():
    with pytest.raises(ConfigError, match=r"unknown command-line option\(s\) \['--max_stepz', '3'\].*--help"):
        parse_config(["--config", CPU_CONFIG, "--max_stepz", "3"])


def test_num_generations_must_divide_the_batch():
    with pytest.raises(ConfigError, match=r"divisible by num_generations \(3\).*multiple of num_generations"):
        parse("--num_generations", "3")


@pytest.fixture
def fake_model(tmp_path):
    """A directory that passes the checkpoint check (config.json) but holds no model: nothing may load it."""
    path = tmp_path / "fake-model"
    path.mkdir()
    (path / "config.json").write_text("{}")
    return str(path)


def run_validate(fake_model, *overrides):
    script_args, training_args, model_args = parse(*overrides)
    model_args.model_name_or_path = fake_model
    resolve_run(script_args, training_args, model_args)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ("--reward_funcs", "correctness", "accuracy"),
            r"reward_funcs: unknown reward function\(s\) \['accuracy'\]. Valid names are \['code_tests', 'correctness', 'format'\]",
        ),
        (("--reward_weights", "1.0"), r"reward_weights has 1 entries but reward_funcs has 2"),
        (
            ("--think", "before"),
            r"think: 'before' is not an answer-extraction setting. Valid values are none \| after_last_close",
        ),
        (
            ("--answer_format", "lm-eval"),
            r"answer_format: 'lm-eval' is not an answer format. Valid values are answer_line \| minerva \| gsm8k",
        ),
        (
            ("--dataset", "code", "--reward_funcs", "code_tests", "--reward_weights", "1.0", "--num_shots", "0")
            + ("--answer_format", "gsm8k"),
            r"answer_format: 'gsm8k': the code domain's prompt teaches no named answer format",
        ),
        (("--dataset", "jsonl"), r"dataset: 'jsonl' needs dataset_path"),
        (("--dataset", "jsonl", "--dataset_path", "nope.jsonl"), r"dataset_path: nope.jsonl does not exist"),
        (("--dataset", "mnist"), r"dataset: 'mnist' is not one of"),
        (("--fp16", "true"), r"fp16: mixed precision fp16 needs a GPU"),
        (("--use_peft", "false"), r"load_in_4bit/load_in_8bit needs use_peft: true"),
        (
            ("--dataset", "code"),
            r"reward_funcs \['correctness', 'format'\] cannot score dataset 'code'.*\[code_tests\]",
        ),
        (
            ("--reward_funcs", "code_tests", "--reward_weights", "1.0"),
            r"reward_funcs \['code_tests'\] cannot score dataset 'arithmetic'",
        ),
        (
            ("--dataset", "code", "--reward_funcs", "code_tests", "--reward_weights", "1.0"),
            r"num_shots: worked examples are math-only",
        ),
    ],
)
def test_bad_configs_are_refused_before_loading(fake_model, overrides, message):
    with pytest.raises(ConfigError, match=message):
        run_validate(fake_model, *overrides)


def test_missing_cpu_model_says_how_to_make_it(tmp_path):
    script_args, training_args, model_args = parse()
    model_args.model_name_or_path = str(tmp_path / "models" / "nothing")
    (tmp_path / "models" / "nothing").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"prepare_cpu_model.py"):
        resolve_run(script_args, training_args, model_args)


def test_malformed_dataset_record_names_file_and_line(tmp_path, capsys, fake_model):
    data = tmp_path / "d.jsonl"
    data.write_text('{"question": "q", "answer": "1"}\n{"question": "q2"}\n')
    # fake_model is not a real model: the data error must come before any loading
    code = cli(
        ["--config", CPU_CONFIG, "--dataset", "jsonl", "--dataset_path", str(data), "--model_name_or_path", fake_model]
    )
    assert code == 2
    assert capsys.readouterr().err.startswith(
        f"error: {data}: 1 of 2 rows cannot be read:\n  {data}:2: missing field(s) ['answer']"
    )


def test_cli_prints_one_paragraph_and_exits_2(capsys):
    code = cli(["--config", CPU_CONFIG, "--reward_funcs", "nope", "--reward_weights", "1.0"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: reward_funcs: unknown reward function(s) ['nope']") and err.count("\n") == 1


CODE_CONFIG = str(REPO / "configs" / "cpu-smollm2-code.yaml")


def test_code_config_parses_and_names_the_code_reward(fake_model):
    script_args, training_args, model_args = parse_config(["--config", CODE_CONFIG])
    assert (script_args.dataset, script_args.reward_funcs, script_args.num_shots) == ("code", ["code_tests"], 0)
    from rewards.sandbox import sandbox_available

    if sandbox_available():
        model_args.model_name_or_path = fake_model
        resolve_run(script_args, training_args, model_args)


def test_code_training_without_a_sandbox_is_refused_with_the_fix(fake_model, monkeypatch):
    import rewards.sandbox

    monkeypatch.setattr(
        rewards.sandbox, "_probe", lambda: "bubblewrap (`bwrap`) is not installed: `apt-get install bubblewrap`"
    )
    script_args, training_args, model_args = parse_config(["--config", CODE_CONFIG])
    model_args.model_name_or_path = fake_model
    with pytest.raises(ConfigError, match=r"dataset: code runs unit tests in a sandbox.*apt-get install bubblewrap"):
        resolve_run(script_args, training_args, model_args)


def test_malformed_code_record_names_file_and_line(tmp_path, capsys, fake_model, monkeypatch):
    import rewards.sandbox

    monkeypatch.setattr(rewards.sandbox, "_probe", lambda: None)  # the data check is under test; nothing runs
    data = tmp_path / "code.jsonl"
    data.write_text(
        '{"id": "a", "prompt": "p", "tests": {"asserts": ["assert f(1) == 1"], "entry_point": "f"}}\n{"id": "b", "prompt": "p", "tests": {"asserts": ["x = 1"], "entry_point": "f"}}\n'
    )
    code = cli(["--config", CODE_CONFIG, "--dataset_path", str(data), "--model_name_or_path", fake_model])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {data}: 1 of 2 rows cannot be read:\n")
    assert f"\n  {data}:2: field 'tests': assert 1 must be a single assert statement" in err


# ---- pre-flight: every numeric key, one row per case ------------------------------------------
# (overrides, the start of the paragraph's clause for that key). Each row would otherwise crash
# late (after the model loaded), crash with a traceback, or train on nonsense.
BAD_VALUES = [
    # -1 is TRL's "train num_train_epochs over the dataset": a run whose length nobody chose (#42 item 4)
    (("--max_steps", "-1"), r"max_steps must be >= 1, got -1"),
    # TRL GRPOConfig: checked before TRL's own __post_init__ (num_generations 0 divided by zero there)
    (("--num_generations", "0"), r"num_generations must be >= 2 .*got 0"),
    (("--learning_rate", "0"), r"learning_rate must be > 0, got 0.0"),
    (("--learning_rate", "nan"), r"learning_rate must be > 0, got nan"),
    (("--per_device_train_batch_size", "0"), r"per_device_train_batch_size must be >= 1, got 0"),
    (("--gradient_accumulation_steps", "0"), r"gradient_accumulation_steps must be >= 1, got 0"),
    (("--generation_batch_size", "0"), r"generation_batch_size must be >= 1, got 0"),
    (("--steps_per_generation", "0"), r"steps_per_generation must be >= 1, got 0"),
    (("--num_iterations", "0"), r"num_iterations must be >= 1, got 0"),
    (("--max_completion_length", "0"), r"max_completion_length must be >= 1 .*got 0"),
    (("--max_completion_length", "-5"), r"max_completion_length must be >= 1 .*got -5"),
    (("--max_steps", "-2"), r"max_steps must be >= 1, got -2"),
    (("--max_steps", "0"), r"max_steps must be >= 1, got 0"),
    (("--num_train_epochs", "0"), r"num_train_epochs must be > 0, got 0.0"),
    (("--temperature", "-1"), r"temperature must be > 0 .*got -1.0"),
    (("--temperature", "0"), r"temperature must be > 0 .*got 0.0"),
    (("--top_p", "0"), r"top_p must be in \(0, 1\], got 0.0"),
    (("--top_p", "1.5"), r"top_p must be in \(0, 1\], got 1.5"),
    (("--top_k", "-1"), r"top_k must be >= 0 .*got -1"),
    (("--min_p", "2"), r"min_p must be in \[0, 1\], got 2.0"),
    (("--repetition_penalty", "0"), r"repetition_penalty must be > 0 .*got 0.0"),
    (("--epsilon", "-0.1"), r"epsilon must be > 0 .*got -0.1"),
    (("--epsilon_high", "0"), r"epsilon_high must be > 0, got 0.0"),
    (("--delta", "0.5"), r"delta must be > 1 .*got 0.5"),
    (("--beta", "-0.1"), r"beta must be >= 0 .*got -0.1"),
    (("--max_grad_norm", "-1"), r"max_grad_norm must be >= 0 .*got -1.0"),
    (("--weight_decay", "-1"), r"weight_decay must be >= 0, got -1.0"),
    (("--warmup_steps", "-1"), r"warmup_steps must be >= 0, got -1.0"),
    (("--adam_beta1", "1"), r"adam_beta1 must be in \[0, 1\), got 1.0"),
    (("--adam_beta2", "-0.1"), r"adam_beta2 must be in \[0, 1\), got -0.1"),
    (("--adam_epsilon", "0"), r"adam_epsilon must be > 0, got 0.0"),
    (("--save_steps", "0"), r"save_steps must be > 0 .*got 0.0"),
    (("--logging_steps", "0"), r"logging_steps must be > 0, got 0.0"),
    (("--save_total_limit", "0"), r"save_total_limit must be >= 1, got 0"),
    (("--seed", "-1"), r"seed must be in \[0, 4294967295\], got -1"),
    (("--data_seed", "-1"), r"data_seed must be in \[0, 4294967295\], got -1"),
    # the project's own keys (ScriptArguments)
    (("--dataset_size", "-1"), r"dataset_size must be >= 1 .*got -1"),
    (("--dataset_size", "0"), r"dataset_size must be >= 1 .*got 0"),
    (("--dataset_seed", "-1"), r"dataset_seed must be in \[0, 4294967295\], got -1"),
    (("--arithmetic_min_value", "-1"), r"arithmetic_min_value must be >= 0, got -1"),
    (("--arithmetic_min_value", "11"), r"arithmetic_min_value \(11\) must be <= arithmetic_max_value \(10\)"),
    (("--arithmetic_steps", "0"), r"arithmetic_steps must be >= 1, got 0"),
    (("--arithmetic_operations", "add", "pow"), r"arithmetic_operations must be a non-empty list .*got \['pow'\]"),
    (("--num_shots", "9"), r"num_shots must be 0 to 3 \(rewards.WORKED_EXAMPLES\), got 9"),
    (("--num_shots", "-1"), r"num_shots must be 0 to 3 .*got -1"),
    (("--rollout_log_steps", "0"), r"rollout_log_steps must be >= 1, got 0"),
    (("--eval_problems", "0"), r"eval_problems must be >= 1 .*got 0"),
    (("--eval_max_tokens", "0"), r"eval_max_tokens must be >= 1 .*got 0"),
    # the trainer's evaluation (transformers' keys) is the held-out eval: its schedule and batch
    (("--eval_strategy", "steps", "--eval_steps", "0"), r"eval_steps must be > 0 .*got 0.0"),
    (("--eval_steps", "-2"), r"eval_steps must be > 0 .*got -2.0"),
    (("--eval_delay", "-1"), r"eval_delay must be >= 0, got -1.0"),
    (("--per_device_eval_batch_size", "0"), r"per_device_eval_batch_size must be >= 1 .*got 0"),
    # reward weights
    (("--reward_weights", "-1", "0.25"), r"reward_weights must be finite and >= 0 .*got \[-1.0\]"),
    (("--reward_weights", "1", "inf"), r"reward_weights must be finite and >= 0 .*got \[inf\]"),
    (("--reward_weights", "0", "0"), r"reward_weights are all 0: nothing would be learned"),
    # TRL ModelConfig: the LoRA shape
    (("--lora_r", "0"), r"lora_r must be >= 1, got 0"),
    (("--lora_alpha", "0"), r"lora_alpha must be > 0, got 0"),
    (("--lora_dropout", "1"), r"lora_dropout must be in \[0, 1\), got 1.0"),
]


def preflight(fake_model, *overrides):
    """parse + validate, as cli() runs them: both must refuse before anything loads."""
    script_args, training_args, model_args = parse(*overrides)
    model_args.model_name_or_path = fake_model
    resolve_run(script_args, training_args, model_args)


@pytest.mark.parametrize(("overrides", "message"), BAD_VALUES, ids=[" ".join(o) for o, _ in BAD_VALUES])
def test_every_bad_value_is_refused_before_loading(fake_model, overrides, message):
    with pytest.raises(ConfigError, match=message) as caught:
        preflight(fake_model, *overrides)
    assert "\n" not in str(caught.value) and str(caught.value).endswith("on the command line.")


GOOD_EDGES = [
    ("--num_shots", "0"),
    ("--num_shots", "3"),
    ("--top_p", "1"),
    ("--beta", "0"),
    ("--reward_weights", "1", "0"),
    ("--temperature", "0.01"),
    ("--arithmetic_min_value", "0"),
    ("--max_grad_norm", "0"),
    ("--eval_strategy", "steps", "--eval_steps", "1", "--eval_problems", "1"),
    ("--eval_strategy", "steps", "--eval_steps", "0.5"),  # a share of max_steps, as for save_steps
    ("--eval_steps", "5"),  # ignored without eval_strategy, as in transformers (train/grpo.py says so)
    # prompts per greedy generate call: any count, not TRL's multiple of num_generations (one completion each)
    ("--eval_strategy", "steps", "--eval_steps", "5", "--per_device_eval_batch_size", "5"),
]


@pytest.mark.parametrize("overrides", GOOD_EDGES, ids=[" ".join(o) for o in GOOD_EDGES])
def test_values_at_the_edge_of_each_range_pass(fake_model, overrides):
    preflight(fake_model, *overrides)


def test_every_bad_value_is_named_in_one_paragraph(fake_model):
    with pytest.raises(ConfigError) as caught:
        preflight(fake_model, "--num_shots", "9", "--dataset_size", "-1", "--lora_r", "0")
    message = str(caught.value)
    assert "num_shots must be" in message and "dataset_size must be" in message and "lora_r must be" in message
    assert "\n" not in message


def test_resume_from_a_directory_that_is_not_a_checkpoint_is_refused(tmp_path, fake_model):
    (tmp_path / "checkpoint-2").mkdir()  # e.g. a checkpoint whose save was interrupted
    for path in (tmp_path / "checkpoint-2", tmp_path / "checkpoint-9"):
        with pytest.raises(ConfigError, match=rf"resume_from_checkpoint: {path} is not a checkpoint"):
            preflight(fake_model, "--resume_from_checkpoint", str(path))
    (tmp_path / "checkpoint-2" / "trainer_state.json").write_text("{}")
    preflight(fake_model, "--resume_from_checkpoint", str(tmp_path / "checkpoint-2"))


def test_missing_config_file_is_refused_with_the_bundled_ones_named(tmp_path):
    with pytest.raises(ConfigError, match=r"--config: .*nope.yaml does not exist .*configs/cpu-smollm2.yaml"):
        parse_config(["--config", str(tmp_path / "nope.yaml")])


def test_a_50_mb_question_line_is_refused_naming_file_and_line(tmp_path, fake_model):
    data = tmp_path / "huge.jsonl"
    with data.open("w") as handle:
        handle.write('{"question": "1+1", "answer": "2"}\n')
        handle.write('{"question": "' + "x" * (50 << 20) + '", "answer": "2"}\n')
    with pytest.raises(ConfigError, match=rf"{data}:2: this line is over 1,048,576 bytes"):
        preflight(fake_model, "--dataset", "jsonl", "--dataset_path", str(data))


def test_line_limit_counts_across_read_chunks(tmp_path):
    from train.config import check_line_lengths

    data = tmp_path / "d.jsonl"
    data.write_bytes(b"a" * 10 + b"\n" + b"b" * 3_000_000 + b"\n" + b"c\n")
    with pytest.raises(ConfigError, match=rf"{data}:2: "):
        check_line_lengths(data)
    check_line_lengths(data, limit=3_000_000)  # exactly at the limit passes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--config", CPU_CONFIG, "--num_generations", "0"], "error: num_generations must be >= 2"),
        (["--config", "configs/nope.yaml"], "error: --config: configs/nope.yaml does not exist"),
    ],
)
def test_grpo_script_exits_2_with_one_paragraph_and_no_traceback(args, message):
    """As the user's shell sees it (a fresh process: exit status, stderr); the checks after parsing are the same
    ``cli`` in this process (below), which spares a second import of torch and TRL."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, str(REPO / "train" / "grpo.py"), *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(message)
    assert out.stderr.rstrip("\n").endswith(errors[0])  # the paragraph is the last thing printed


def one_paragraph(err: str, starts: str) -> str:
    """The one ``error:`` line of ``err``, which starts with ``starts`` and is the last thing printed."""
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(starts), err[-3000:]
    assert err.rstrip("\n").endswith(errors[0])
    return errors[0]


def test_a_check_after_parsing_exits_2_with_one_paragraph(capsys):
    assert cli(["--config", CPU_CONFIG, "--num_shots", "9"]) == 2
    one_paragraph(capsys.readouterr().err, "error: num_shots must be 0 to 3")


def test_a_hub_dataset_offline_exits_2_with_one_paragraph(tmp_path, monkeypatch, capsys):
    """dataset: gsm8k with the Hub offline and nothing cached: the data step refuses it like any bad input."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv(
        "HF_DATASETS_CACHE", str(tmp_path / "hf")
    )  # nothing cached (as tests/problems/test_math_data.py)
    code = cli(["--config", CPU_CONFIG, "--dataset", "gsm8k", "--output_dir", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2, err[-3000:]
    error = one_paragraph(err, "error: could not load openai/gsm8k (split 'train')")
    assert "dataset_path: <file.jsonl>" in error
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_help_lists_config_and_the_project_options_first_fast():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-X", "importtime", str(REPO / "train" / "grpo.py"), "--config", CPU_CONFIG, "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("usage: python train/grpo.py --config FILE.yaml")
    # was 1,357 lines in 19 s; one line per project key (60 with the six tool keys, 80 with the six inspect_task keys)
    assert len(lines) < 85
    # fast (was 19 s) because only the parser's own imports load (TRL's dataclasses need transformers and torch):
    # no engine, no Inspect, no dataset library. Checked by what loads, not by a clock a busy machine moves
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "train.config" in imported
    assert not imported & {"vllm", "inspect_ai", "datasets"}
    flags = [line.split()[0] for line in lines if line.startswith("  --")]
    assert flags[:2] == ["--config", "--help-all"]
    import dataclasses

    from train.config import ScriptArguments

    for f in dataclasses.fields(ScriptArguments):
        (row,) = [line for line in lines if line.split()[:1] == [f"--{f.name}"]]
        assert len(row.split("[")[0].split()) > 1, f"--{f.name} has no help text"
    # the value shown is the config's, not TRL's or the dataclass default
    assert any(line.split()[:1] == ["--max_steps"] and "cpu-smollm2.yaml: 20]" in line for line in lines)
    assert any(line.split()[:1] == ["--arithmetic_max_value"] and "cpu-smollm2.yaml: 10]" in line for line in lines)


def test_model_card_names_the_base_model_and_the_run(tmp_path):
    from train.artifacts.manifest import build_manifest, write_manifest

    script_args, training_args, model_args = parse("--output_dir", str(tmp_path / "run"))
    model_args.model_name_or_path = str(REPO / "models" / "smollm2-135m-instruct")
    write_manifest(build_manifest(script_args, training_args, model_args), tmp_path / "run", step=7)
    card = (tmp_path / "run" / "README.md").read_text()
    assert "[None]" not in card and "huggingface.co/None" not in card
    assert f"base_model: {model_args.model_name_or_path}\n" in card
    assert f"A fine-tuned version of the local checkpoint `{model_args.model_name_or_path}`" in card
    assert "LoRA adapter (r=16, alpha=32) on a 4-bit (bitsandbytes nf4) base" in card
    assert "| steps | 7 (max_steps 20) |" in card and "| rewards | correctness x 1, format x 0.25 |" in card

    model_args.model_name_or_path = "HuggingFaceTB/SmolLM2-135M-Instruct"  # a Hub id links to the Hub
    write_manifest(build_manifest(script_args, training_args, model_args), tmp_path / "hub", step=1)
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "[HuggingFaceTB/SmolLM2-135M-Instruct](https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct)" in card


def test_think_reaches_the_rewards_and_run_json(tmp_path):
    """The trainer pays with the think setting the config names, and run.json records the same
    fingerprint an eval scored with ``-S think=`` reports (tests/rewards/math/test_verifier_think.py checks the scorer)."""
    import json

    from problems.domains import reward_funcs
    from rewards import verifier_id
    from train.artifacts.manifest import build_manifest, write_manifest

    script_args, training_args, model_args = parse("--think", "after_last_close", "--output_dir", str(tmp_path))
    correctness, fmt = reward_funcs(script_args.reward_funcs, think=script_args.think)
    reasoning = "<think>is it \\boxed{3}?</think>\nANSWER: 4"
    assert correctness([reasoning], answer=["4"]) == [1.0] and fmt(["<think>ANSWER: 4"]) == [0.0]
    plain_correctness, _ = reward_funcs(script_args.reward_funcs, think="none")
    assert plain_correctness([reasoning], answer=["4"]) == [0.0]  # without it, the boxed 3 is a hedge
    write_manifest(build_manifest(script_args, training_args, model_args), tmp_path, step=1)
    recorded = json.loads((tmp_path / "run.json").read_text())
    assert recorded["verifier_fingerprint"] == verifier_id("after_last_close")["verifier_fingerprint"]
    assert recorded["verifier_fingerprint"] != verifier_id()["verifier_fingerprint"]
    assert recorded["answer_extraction_think"] == "after_last_close"


def test_answer_format_reaches_the_prompt_rewards_run_json_rollout_logs_and_held_out_eval(tmp_path):
    """``answer_format: gsm8k``: the training prompt teaches ``#### <answer>``, the rewards read it, run.json and each
    rollout log record it (with its fingerprint), and the held-out eval task gets the same ``-T answer_format``."""
    import json

    from problems.domains import reward_funcs
    from problems.math_data import MathProblem
    from problems.math_domain import MATH
    from rewards import ANSWER_FORMATS, verifier_id
    from train.artifacts.held_out import held_out_task_args
    from train.artifacts.manifest import build_manifest, rollout_metadata, write_manifest
    from train.data.rows import to_dataset

    script_args, training_args, model_args = parse("--answer_format", "gsm8k", "--output_dir", str(tmp_path))
    correctness, fmt = reward_funcs(script_args.reward_funcs, think="none", answer_format=script_args.answer_format)
    assert correctness(["24 - 5 = 19\n#### 19", "ANSWER: 19"], answer=["19", "19"]) == [1.0, 0.0]
    assert fmt(["#### 19", "ANSWER: 19"]) == [1.0, 0.0]
    (row,) = to_dataset([MathProblem("q", "What is 2+3?", "5")], 1, answer_format=script_args.answer_format)
    assert row["prompt"][0]["content"] == ANSWER_FORMATS["gsm8k"].instruction
    assert row["prompt"][2]["content"].endswith("\n#### 3") and row["prompt"][-1]["content"] == "What is 2+3?"
    manifest = build_manifest(script_args, training_args, model_args)
    write_manifest(manifest, tmp_path, step=1)
    recorded = json.loads((tmp_path / "run.json").read_text())
    assert recorded["answer_format"] == "gsm8k" and recorded["config"]["script"]["answer_format"] == "gsm8k"
    assert recorded["verifier_fingerprint"] == verifier_id("none", "gsm8k")["verifier_fingerprint"]
    assert recorded["verifier_fingerprint"] != verifier_id()["verifier_fingerprint"]
    assert rollout_metadata(manifest)["answer_format"] == "gsm8k"
    assert held_out_task_args(script_args, 20, 96, MATH)["answer_format"] == "gsm8k"


def test_the_arithmetic_defaults_are_the_generators_and_the_eval_tasks():
    """Training's arithmetic_* keys, the eval task's -T options and the generator draw the same problems by default."""
    import inspect

    from evals.math_task import math_verified
    from problems.math_data import ARITHMETIC_DEFAULTS, procedural_arithmetic
    from train.config import ScriptArguments
    from train.data.rows import arithmetic_settings

    task = {name: p.default for name, p in inspect.signature(math_verified).parameters.items()}
    generator = {name: p.default for name, p in inspect.signature(procedural_arithmetic).parameters.items()}
    training = arithmetic_settings(ScriptArguments())
    assert training == {**vars(ARITHMETIC_DEFAULTS), "operations": list(ARITHMETIC_DEFAULTS.operations)}
    assert task["operations"].split(",") == training["operations"] == list(generator["operations"])
    for key in ("min_value", "max_value", "steps"):
        assert task[key] == training[key] == generator[key]


# ---- held-out evals (eval_strategy on): a dataset with an eval task and problems training does not see ---------
FIXTURES = REPO / "tests" / "fixtures"
EVAL_ON = ("--eval_strategy", "steps", "--eval_steps", "10")
HELD_OUT_REFUSALS = [
    (
        ("--dataset", "jsonl", "--dataset_path", str(FIXTURES / "problems.jsonl")),
        r"eval_strategy: steps: dataset 'jsonl' has no split that training leaves out: give the held-out "
        r"problems in a file of the same format with eval_dataset_path",
    ),
    (
        ("--dataset", "jsonl", "--dataset_path", str(FIXTURES / "problems.jsonl"))
        + ("--eval_dataset_path", str(FIXTURES / "problems.jsonl")),
        r"eval_dataset_path is the training file",
    ),
    (
        ("--dataset", "jsonl", "--dataset_path", str(FIXTURES / "problems.jsonl"))
        + ("--eval_dataset_path", "nope.jsonl"),
        r"eval_dataset_path: nope.jsonl does not exist",
    ),
    (
        ("--dataset", "math500", "--dataset_path", str(FIXTURES / "math500_sample.jsonl")),
        r"dataset 'math500' has no split",
    ),
    (("--dataset_split", "test"), r"dataset_split is 'test', the split held-out evals use: train on 'train'"),
    (
        ("--dataset", "gsm8k", "--dataset_path", str(FIXTURES / "gsm8k_sample.jsonl"), "--dataset_split", "test"),
        r"dataset_split is 'test'",
    ),
    (
        ("--eval_dataset_path", str(FIXTURES / "problems.jsonl")),
        r"eval_dataset_path: arithmetic's held-out problems are its generated 'test' split",
    ),
]


@pytest.mark.parametrize(("overrides", "message"), HELD_OUT_REFUSALS, ids=[m[:40] for _, m in HELD_OUT_REFUSALS])
def test_held_out_evals_without_held_out_problems_are_refused(fake_model, overrides, message):
    with pytest.raises(ConfigError, match=message):
        run_validate(fake_model, *EVAL_ON, *overrides)
    run_validate(fake_model, *overrides)  # the same data trains without evals


def test_held_out_evals_on_code_need_a_held_out_file(tmp_path, fake_model, monkeypatch):
    import rewards.sandbox

    monkeypatch.setattr(rewards.sandbox, "_probe", lambda: None)  # the config check is under test; nothing runs
    script_args, training_args, model_args = parse_config(["--config", CODE_CONFIG, *EVAL_ON])
    model_args.model_name_or_path = fake_model
    with pytest.raises(ConfigError, match=r"dataset 'code' has no split that training leaves out"):
        resolve_run(script_args, training_args, model_args)
    held_out = tmp_path / "held_out.jsonl"
    held_out.write_text('{"id": "a", "prompt": "p", "tests": {"asserts": ["assert f(1) == 1"], "entry_point": "f"}}\n')
    script_args.eval_dataset_path = str(held_out)
    resolve_run(script_args, training_args, model_args)


def test_held_out_task_args_are_the_demos_and_follow_the_domain():
    """The arguments the trainer's evals and the demo build their task from (train/artifacts/held_out.py)."""
    from problems.code_domain import CODE
    from problems.math_domain import MATH
    from train.artifacts.held_out import held_out_task_args

    arithmetic = held_out_task_args(parse()[0], 20, 96, MATH)
    assert arithmetic == {
        "dataset": "arithmetic", "limit": 20, "num_shots": 1, "think": "none", "split": "test", "seed": 0,
        "operations": "add,sub", "min_value": 1, "max_value": 10, "steps": 1, "max_tokens": 96,
    }  # fmt: skip
    gsm8k = parse("--dataset", "gsm8k", "--num_shots", "0", "--think", "after_last_close")[0]
    assert held_out_task_args(gsm8k, 200, 512, MATH) == {
        "dataset": "gsm8k", "limit": 200, "num_shots": 0, "think": "after_last_close", "split": "test", "max_tokens": 512
    }  # fmt: skip
    code = parse_config(["--config", CODE_CONFIG, "--eval_dataset_path", "held.jsonl"])[0]
    assert held_out_task_args(code, None, 384, CODE) == {"path": "held.jsonl", "limit": None, "max_tokens": 384}
