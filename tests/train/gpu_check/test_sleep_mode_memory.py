"""Sleep mode's savings are measured, and counted against the cap as a smaller card would (issue #51, 1).

vLLM's sleep-mode pool (weights, KV cache) is a torch ``MemPool`` on vLLM's cumem allocator: torch counts it in its
reserved bytes and its per-process fraction, and level-1 sleep releases the card's memory behind torch's back. The
GPU check used to take the peak as torch's ``max_memory_reserved`` (+ the CUDA context) at least, which is the peak
without sleep mode, and under ``--memory-cap`` the sleeping pool kept counting against the trainer's allocations. A
stand-in card (``tests/helpers/fake_gpu.py``) keeps torch's count and the card's memory apart; the check is the real
one (``train.gpu_check.run.check`` on the main recipe), the engine the real ``_AdapterLLM`` around a stand-in vLLM.
"""

from __future__ import annotations

import json
import sys

import pytest

import train.vllm_seams
from tests.helpers.fake_gpu import GENERATION, GIB, H200, KV_CACHE, RESIDENT, WEIGHTS, FakeCard, run_gpu_check
from tests.helpers.model_shapes import QWEN_1_5B
from train.config.memory_model import CUDA_CONTEXT
from train.gpu_check.verdicts import FAIL, PASS

CAP = 14.5 * GIB


@pytest.fixture
def qwen_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    return tmp_path


def on_card(card: FakeCard) -> float:
    """What the check must report: the card's peak for this process, the stand-in's 0.5 GiB context replaced by the
    0.9 GiB the check assumes."""
    return card.physical_peak - 0.5 * GIB + CUDA_CONTEXT


def test_the_peak_is_what_the_card_held_not_torchs_count_of_the_sleeping_pool(monkeypatch, qwen_dir):
    training = 5.0 * GIB
    check = run_gpu_check(monkeypatch, qwen_dir, training)  # make gpu-check: --memory-cap 14.5
    row = check.rows["memory"]
    assert row.status == PASS, row
    assert check.card.peak == pytest.approx(RESIDENT + WEIGHTS + KV_CACHE + training)  # torch did count the pool
    assert row.data["peak"] == pytest.approx(on_card(check.card))  # 7.4 GiB: the training phase, the pool asleep
    assert row.data["peak"] == pytest.approx(RESIDENT + training + CUDA_CONTEXT)
    # pre-flight's sleep-mode estimate (6.7 GiB for this recipe) is within 20 % of it: no call to recalibrate
    assert "off by more than" not in row.verdict


def test_the_generation_phase_counts_when_it_is_the_larger(monkeypatch, qwen_dir):
    """With a small loss the peak is while vLLM is awake: its pool, the trainer's model and vLLM's activations."""
    check = run_gpu_check(monkeypatch, qwen_dir, 0.5 * GIB)
    awake = RESIDENT + WEIGHTS + KV_CACHE + GENERATION
    assert check.card.physical_peak - 0.5 * GIB == pytest.approx(awake)
    assert check.rows["memory"].data["peak"] == pytest.approx(awake + CUDA_CONTEXT)


def test_under_the_cap_the_sleeping_pool_does_not_count_against_the_trainer(monkeypatch, qwen_dir):
    """8 GiB of loss activations: the card holds 1.5 + 8 + the 0.9 GiB context = 10.4 GiB of 14.5 while vLLM sleeps,
    but torch's count with the pool (13.85 GiB) passes the cap's old fraction (14.5 - 0.9): it ran out of memory where
    a 16 GB card would not."""
    check = run_gpu_check(monkeypatch, qwen_dir, 8.0 * GIB)
    row, card = check.rows["memory"], check.card
    assert row.status == PASS, row
    assert row.data["peak"] == pytest.approx(on_card(card)) == pytest.approx(RESIDENT + 8.0 * GIB + CUDA_CONTEXT)
    capped = (CAP - CUDA_CONTEXT) / H200
    asleep = (CAP - CUDA_CONTEXT + WEIGHTS + KV_CACHE) / H200
    assert card.fractions[0] == pytest.approx(capped)  # --memory-cap, before anything loads
    assert any(f == pytest.approx(asleep) for f in card.fractions)  # raised by the pool while it sleeps
    assert any(f == pytest.approx(capped) for f in card.fractions[1:])  # and back while vLLM is awake


def test_under_the_cap_a_loss_the_card_cannot_hold_still_runs_out_of_memory(monkeypatch, qwen_dir):
    """12.5 GiB of activations: 1.5 + 12.5 + 0.9 = 14.9 GiB on the card, over the 14.5 GiB cap: the cap still holds."""
    row = run_gpu_check(monkeypatch, qwen_dir, 12.5 * GIB).rows["memory"]
    assert row.status == FAIL and row.verdict.startswith("does not fit: out of memory"), row


def test_without_vllms_sleep_pool_loaded_nothing_is_asleep(monkeypatch):
    """No sleep mode, vLLM's CPU build, or no vLLM: the cumem module is not loaded, and nothing is asleep."""
    monkeypatch.delitem(sys.modules, "vllm.device_allocator.cumem", raising=False)
    assert train.vllm_seams.sleeping_pool_bytes() == 0
