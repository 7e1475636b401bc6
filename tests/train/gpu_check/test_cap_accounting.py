"""One accounting of the CUDA context under ``--memory-cap`` (issue #51, 4).

The cap sets torch's per-process fraction to (cap - context) / total: the context is on the card beside torch's
allocations. Pre-flight then compared its estimate, which counts the context, with total x fraction, counting the
context a second time: under ``make gpu-check``'s 14.5 GiB cap it refused estimates above 13.6 GiB while the memory
row's budget is 14.5, so a config between the two failed the check and would have run on the card.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import REPO
from tests.helpers.fake_gpu import GIB, H200, FakeCard, run_gpu_check
from tests.helpers.model_shapes import QWEN_1_5B
from train.config import ConfigError, parse_config
from train.config import machine_checks as mc
from train.config.memory_model import CUDA_CONTEXT
from train.gpu_check import memory
from train.gpu_check.verdicts import FAIL, PASS

CAP = 14.5


@pytest.fixture
def qwen_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    return tmp_path


def utilization_for(qwen_dir, target_gib: float) -> str:
    """The recipe's vllm_gpu_memory_utilization (without sleep mode) whose estimate under the cap is ``target_gib``:
    the estimate is the trainer's parts plus the pool, and the pool is utilization x the cap."""
    config = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")
    argv = ["--config", config, "--bf16", "false", "--model_name_or_path", str(qwen_dir)]
    _, training_args, model_args = parse_config([*argv, "--vllm_enable_sleep_mode", "false"])
    found = memory.estimate(training_args, model_args, gpu=True, device_bytes=CAP * GIB)
    trainer = found.total - found.parts["vLLM pool"]
    return f"{(target_gib * GIB - trainer) / (CAP * GIB):.4f}"


@pytest.mark.parametrize("target_gib", [13.9, 14.4])
def test_pre_flight_lets_through_what_fits_the_memory_rows_budget(monkeypatch, qwen_dir, target_gib):
    """An estimate between the cap less the context (13.6 GiB) and the cap: the check measures it, not refuses it."""
    util = utilization_for(qwen_dir, target_gib)
    check = run_gpu_check(
        monkeypatch, qwen_dir, 4.0 * GIB, CAP, "--vllm_enable_sleep_mode", "false", "--vllm_gpu_memory_utilization",
        util, preflight=True,
    )  # fmt: skip
    memory_row, steps = check.rows["memory"], check.rows["GRPO steps"]
    assert memory_row.data["estimate"] / GIB == pytest.approx(target_gib, abs=0.01)
    assert steps.status == PASS, steps  # train/grpo.py's pre-flight did not refuse it
    assert memory_row.status == PASS, memory_row


def test_above_the_cap_both_refuse_it(monkeypatch, qwen_dir):
    util = utilization_for(qwen_dir, 14.7)
    check = run_gpu_check(
        monkeypatch, qwen_dir, 4.0 * GIB, CAP, "--vllm_enable_sleep_mode", "false", "--vllm_gpu_memory_utilization",
        util, preflight=True,
    )  # fmt: skip
    assert check.rows["memory"].status == FAIL and check.built_with == []  # stopped before loading
    assert "more than the budget" in check.rows["memory"].verdict


def test_pre_flight_under_the_caps_fraction_gives_the_cap_back(monkeypatch, qwen_dir):
    """The same arithmetic in pre-flight alone: the fraction --memory-cap sets, read back by check_gpu_memory."""
    from train.config.memory_model import usable_bytes

    card = FakeCard(H200).install(monkeypatch)
    config = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")
    util = utilization_for(qwen_dir, 14.2)
    argv = ["--config", config, "--bf16", "false", "--model_name_or_path", str(qwen_dir)]
    _, training_args, model_args = parse_config(
        [*argv, "--vllm_enable_sleep_mode", "false", "--vllm_gpu_memory_utilization", util]
    )
    memory.apply_cap(CAP, training_args, gpu=True, device_bytes=H200)
    assert card.fraction * H200 + CUDA_CONTEXT == pytest.approx(CAP * GIB)
    assert usable_bytes(H200, card.fraction) == pytest.approx(CAP * GIB)
    mc.check_gpu_memory(training_args, model_args)  # 14.2 GiB of a 14.5 GiB cap: fits
    training_args.per_device_train_batch_size = 64
    with pytest.raises(ConfigError, match=r"exceeds this GPU's 14.5 GiB"):
        mc.check_gpu_memory(training_args, model_args)
    assert usable_bytes(16 * GIB, 1.0) == 16 * GIB  # no fraction: the whole card, context included
