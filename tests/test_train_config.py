"""Every bad configuration fails before a model is loaded, with the key and the fix in the message."""

from pathlib import Path

import pytest
from conftest import REPO

from train.config import ConfigError, parse_config, validate
from train.grpo import cli

CPU_CONFIG = str(REPO / "configs" / "cpu-smollm2.yaml")


def parse(*overrides: str):
    return parse_config(["--config", CPU_CONFIG, *overrides])


def test_cpu_config_parses_and_validates():
    script_args, training_args, model_args = parse()
    assert script_args.reward_funcs == ["correctness", "format"]
    assert model_args.load_in_4bit and model_args.use_peft and training_args.use_cpu
    assert training_args.generation_batch_size % training_args.num_generations == 0
    if Path(REPO, model_args.model_name_or_path, "config.json").is_file():
        validate(script_args, training_args, model_args)


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
    validate(script_args, training_args, model_args)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ("--reward_funcs", "correctness", "accuracy"),
            r"reward_funcs: unknown reward function\(s\) \['accuracy'\]. Valid names are \['code_tests', 'correctness', 'format'\]",
        ),
        (("--reward_weights", "1.0"), r"reward_weights has 1 entries but reward_funcs has 2"),
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
        validate(script_args, training_args, model_args)


def test_malformed_dataset_record_names_file_and_line(tmp_path, capsys, fake_model):
    data = tmp_path / "d.jsonl"
    data.write_text('{"question": "q", "answer": "1"}\n{"question": "q2"}\n')
    # fake_model is not a real model: the data error must come before any loading
    code = cli(
        ["--config", CPU_CONFIG, "--dataset", "jsonl", "--dataset_path", str(data), "--model_name_or_path", fake_model]
    )
    assert code == 2
    assert f"error: {data}:2: missing field(s) ['answer']" in capsys.readouterr().err


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
        validate(script_args, training_args, model_args)


def test_code_training_without_a_sandbox_is_refused_with_the_fix(fake_model, monkeypatch):
    import rewards.sandbox

    monkeypatch.setattr(
        rewards.sandbox, "_probe", lambda: "bubblewrap (`bwrap`) is not installed: `apt-get install bubblewrap`"
    )
    script_args, training_args, model_args = parse_config(["--config", CODE_CONFIG])
    model_args.model_name_or_path = fake_model
    with pytest.raises(ConfigError, match=r"dataset: code runs unit tests in a sandbox.*apt-get install bubblewrap"):
        validate(script_args, training_args, model_args)


def test_malformed_code_record_names_file_and_line(tmp_path, capsys, fake_model, monkeypatch):
    import rewards.sandbox

    monkeypatch.setattr(rewards.sandbox, "_probe", lambda: None)  # the data check is under test; nothing runs
    data = tmp_path / "code.jsonl"
    data.write_text(
        '{"id": "a", "prompt": "p", "tests": {"asserts": ["assert f(1) == 1"], "entry_point": "f"}}\n{"id": "b", "prompt": "p", "tests": {"asserts": ["x = 1"], "entry_point": "f"}}\n'
    )
    code = cli(["--config", CODE_CONFIG, "--dataset_path", str(data), "--model_name_or_path", fake_model])
    assert code == 2
    assert f"error: {data}:2: field 'tests': assert 1 must be a single assert statement" in capsys.readouterr().err
