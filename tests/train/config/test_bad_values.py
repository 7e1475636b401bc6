"""Bad values on the trainer's command line and in its config file: each refused in one paragraph that says where the
value was set, which key and what it needs; no argparse usage dump, no abbreviated option taken for a key, no
unbounded run, every range error of one run named at once (docs/training.md: "all at once")."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.helpers import CPU_CONFIG, REPO
from train.config import ConfigError, parse_config


def config_with(tmp_path, line: str) -> str:
    """The CPU config with one key's value replaced (the same key, so the file has it once)."""
    key = line.split(":")[0]
    text = open(CPU_CONFIG).read()
    text, n = re.subn(rf"^{key}:.*$", line, text, flags=re.M)
    path = tmp_path / "mine.yaml"
    path.write_text(text if n else f"{text}\n{line}\n")
    return str(path)


CASES = [
    # (command line after --config, a config line or None, what the one paragraph says)
    (["--max_steps", "-1"], None, r"max_steps must be >= 1, got -1: TRL reads -1 as 'train num_train_epochs"),
    (["--max_step", "1"], None, r"unknown command-line option\(s\) \['--max_step', '1'\]"),
    (["--max_s", "1"], None, r"unknown command-line option\(s\) \['--max_s', '1'\]"),
    (["--lora", "8"], None, r"unknown command-line option\(s\)"),
    (
        ["--max_completion_length", "forty"],
        None,
        r"^max_completion_length: 'forty' is not an integer \(set on the command line\)",
    ),
    ([], "max_completion_length: forty", r"^max_completion_length: 'forty' is not an integer \(set in .*mine.yaml\)"),
    ([], "learning_rate: fast", r"^learning_rate: 'fast' is not a number \(set in .*mine.yaml\)"),
    ([], "use_peft: maybe", r"^use_peft: 'maybe' is not true or false \(set in .*mine.yaml\)"),
    (["--seed", "1.5"], None, r"^seed: '1.5' is not an integer \(set on the command line\)"),
    (
        ["--learning_rate", "-1", "--max_completion_length", "0", "--lora_r", "0"],
        None,
        r"learning_rate must be > 0, got -1.0; max_completion_length must be >= 1 .*got 0; lora_r must be >= 1, got 0",
    ),
    (
        ["--num_shots", "9", "--temperature", "0", "--lora_alpha", "0", "--max_steps", "-1"],
        None,
        r"num_shots must be 0 to 3 .*temperature must be > 0 .*lora_alpha must be > 0.*max_steps must be >= 1, got -1",
    ),
]


@pytest.mark.parametrize(("argv", "line", "message"), CASES, ids=[" ".join(a) or str(c) for a, c, _ in CASES])
def test_a_bad_value_is_one_paragraph_naming_where_and_what(tmp_path, argv, line, message):
    config = config_with(tmp_path, line) if line else CPU_CONFIG
    with pytest.raises(ConfigError, match=message) as caught:
        parse_config(["--config", config, *argv])
    assert "\n" not in str(caught.value) and "usage:" not in str(caught.value)


def test_the_command_line_prints_no_usage_dump(tmp_path):
    """Through train/grpo.py: exit 2, stderr is the one paragraph (was 220 lines of usage before the line that counts)."""
    config = config_with(tmp_path, "max_completion_length: forty")
    result = subprocess.run(
        [sys.executable, "train/grpo.py", "--config", config], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [
        f"error: max_completion_length: 'forty' is not an integer (set in {config}). "
        "Give max_completion_length an integer."
    ]
