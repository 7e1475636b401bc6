"""The GPU check runs nothing its table does not report (issue #51, 2).

configs/base/gpu-lora.yaml asks for a 200-problem held-out eval at step 0 (``eval_on_start``) and every 50 steps:
transformers generation, minutes on a 16 GB card, inside ``trainer.train()`` where no row times or measures it. The
check turns the evals off and the GRPO steps row says what the config would run.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import REPO
from tests.helpers.fake_gpu import GIB, run_gpu_check
from tests.helpers.model_shapes import QWEN_1_5B
from train.config import parse_config
from train.gpu_check.verdicts import PASS


@pytest.fixture
def qwen_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    return tmp_path


def test_the_check_trains_without_the_configs_held_out_evals_and_says_so(monkeypatch, qwen_dir):
    check = run_gpu_check(monkeypatch, qwen_dir, 4.0 * GIB)
    ((_, training_args, _),) = check.built_with
    assert training_args.eval_strategy == "no" and not training_args.eval_on_start  # no eval inside train()
    steps = check.rows["GRPO steps"]
    assert steps.status == PASS, steps
    assert steps.verdict.endswith(
        "held-out evals off here: the config's 200 problems at step 0 and every 50 steps, not timed or measured here"
    )
    assert check.extra["held_out_evals_off"] == steps.data["held_out_evals_off"]


def test_a_config_without_evals_has_nothing_to_turn_off(cpu_model):
    from train.gpu_check.run import turn_off_held_out_evals

    script_args, training_args, _ = parse_config(["--config", str(REPO / "configs" / "cpu-smollm2-vllm.yaml")])
    assert turn_off_held_out_evals(script_args, training_args) is None
    assert training_args.eval_strategy == "no"
