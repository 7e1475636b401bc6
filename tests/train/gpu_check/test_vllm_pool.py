"""vLLM's pool: pre-flight's minimum in vLLM's own terms, and vLLM's refusal as a row of the table (issue #51, 5).

vLLM gives its KV cache what is left of its pool (gpu_memory_utilization x the card) after its weights, the activation
peak of a profile run at max_num_batched_tokens, the CUDA graph estimate and non-torch memory
(``vllm/v1/worker/gpu_worker.py`` ``determine_available_memory``); with nothing left it raises
``ValueError("No available memory for the cache blocks")`` (``vllm/v1/core/kv_cache_utils.py``), with less than one
max_model_len sequence another ValueError. Pre-flight used to ask only for the weights + 0.5 GiB, and the GPU check
caught RuntimeError only: vLLM's refusal reached the user as a traceback instead of the memory row.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import REPO
from tests.helpers.fake_gpu import GIB, FakeCard, run_gpu_check
from tests.helpers.model_shapes import QWEN_1_5B, QWEN_3B
from train.config import ConfigError, parse_config
from train.config import machine_checks as mc
from train.config.memory_model import CUDA_GRAPH_POOL, ModelShape, estimate_for
from train.gpu_check.verdicts import FAIL

T4 = 15_835_660_288  # what torch reports as a T4's memory with ECC on (train/gpu_check/memory.py T4_TOTAL_BYTES)
MAIN = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# vLLM 0.30's texts (vllm/v1/core/kv_cache_utils.py, vllm/v1/worker/utils.py)
NO_KV = (
    "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine "
    "(this flag also controls CPU memory reservation on the CPU backend, despite its name). See "
    "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
)
ONE_SEQUENCE = (
    "To serve at least one request with the model's max seq len (32768), (0.88 GiB KV cache is needed, which is "
    "larger than the available KV cache memory (0.41 GiB). Based on the available memory, the estimated maximum model "
    "length is 15232. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
    "decreasing `max_model_len` when initializing the engine."
)
NOT_FREE = (
    "Free memory on device cuda:0 (2.1/14.75 GiB) on startup is less than desired GPU memory utilization (0.9, 13.27 "
    "GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
)


@pytest.fixture
def qwen_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    return tmp_path


def recipe(model_dir, config=MAIN, *overrides):
    return parse_config(["--config", config, "--bf16", "false", "--model_name_or_path", str(model_dir), *overrides])


# ---- vLLM's refusal is a row --------------------------------------------------------------------------------------


def refusing(text: str):
    def build(card):
        card.allocate(1.5 * GIB)  # the trainer's model was loaded; vLLM then refused its pool
        raise ValueError(text)

    return build


@pytest.mark.parametrize(
    ("text", "verdict", "fix"),
    [
        (NO_KV, '("No available memory for the cache blocks")', "raise vllm_gpu_memory_utilization above 0.3: vLLM "
         "measured more for its weights, activations, CUDA graphs and non-torch memory than pre-flight's"),
        (ONE_SEQUENCE, "KV cache is needed, which is larger than the available KV cache memory",
         "or lower vllm_max_model_length (one sequence's KV cache must fit)."),
        (NOT_FREE, "on startup is less than desired GPU memory utilization",
         "lower vllm_gpu_memory_utilization: vLLM asks for its whole pool when it starts"),
    ],
    ids=["no-kv-cache", "one-sequence", "not-free-at-start"],
)  # fmt: skip
def test_vllms_refusal_of_its_pool_is_the_memory_row_with_the_fix(monkeypatch, qwen_dir, text, verdict, fix):
    check = run_gpu_check(monkeypatch, qwen_dir, 4.0 * GIB, build=refusing(text))
    row = check.rows["memory"]
    assert row.status == FAIL and row.verdict.startswith("does not fit: vLLM refused its pool"), row
    assert verdict in row.verdict and fix in row.fix
    assert row.data["vllm_refusal"] == text and row.data["peak"] > 0  # what the card held until then
    assert check.rows["GRPO steps"].status == "NOT RUN"


def test_other_value_errors_while_loading_stay_errors(monkeypatch, qwen_dir):
    with pytest.raises(ValueError, match="Unknown quantization method"):
        run_gpu_check(monkeypatch, qwen_dir, 4.0 * GIB, build=refusing("Unknown quantization method: bitsandbytes"))


# ---- pre-flight's minimum, in vLLM's terms ------------------------------------------------------------------------


def test_the_minimum_holds_vllms_non_kv_memory_and_one_sequence(qwen_dir):
    from train.config.memory_model import VLLM_BATCHED_TOKENS

    _, training_args, model_args = recipe(qwen_dir)
    found = estimate_for(training_args, model_args, T4)
    minimum = found.vllm_minimum
    shape = ModelShape.from_config(QWEN_1_5B)
    assert minimum["weights"] == found.base_bytes  # vLLM's layout of the 4-bit base (fp32 block scales)
    assert minimum["CUDA graphs"] == CUDA_GRAPH_POOL  # the same assumption as the estimate's
    assert minimum[f"activations of {VLLM_BATCHED_TOKENS:,} batched tokens"] > 0
    assert minimum["sampler (16 sequences)"] > 0  # TRL's max_num_seqs: the batch x steps_per_generation
    assert minimum["KV cache of one 1,024-token sequence"] == 1024 * 2 * 28 * 2 * 128 * 2  # vllm_max_model_length
    assert minimum["LoRA slots"] == 28 * 16 * 2 * sum(a + b for a, b in shape.projections.values())
    # without vllm_max_model_length vLLM serves the model's own 32,768 tokens: one sequence needs 0.88 GiB of KV
    _, unset, _ = recipe(qwen_dir, MAIN, "--vllm_max_model_length", "0")
    unset.vllm_max_model_length = None
    assert estimate_for(unset, model_args, T4).vllm_minimum["KV cache of one 32,768-token sequence"] / GIB == (
        pytest.approx(0.875)
    )


def test_pre_flight_refuses_a_pool_vllm_would_refuse(monkeypatch, qwen_dir):
    """0.13 of a T4 is 1.92 GiB: more than the weights + 0.5 GiB pre-flight used to ask (1.62), less than what vLLM
    holds before any KV cache (weights, activations of 4,096 tokens, CUDA graphs, non-torch memory: ~2.2 GiB)."""
    FakeCard(T4).install(monkeypatch)
    _, training_args, model_args = recipe(qwen_dir, MAIN, "--vllm_gpu_memory_utilization", "0.13")
    with pytest.raises(ConfigError) as refused:
        mc.check_gpu_memory(training_args, model_args)
    message = str(refused.value)
    assert "vllm_gpu_memory_utilization 0.13 gives vLLM 1.92 GiB of this GPU, less than the" in message
    assert 'loading ("No available memory for the cache blocks")' in message
    assert "raise vllm_gpu_memory_utilization to at least" in message
    needed = float(message.split("to at least ")[1].split(",")[0])
    _, enough, _ = recipe(qwen_dir, MAIN, "--vllm_gpu_memory_utilization", str(needed))
    mc.check_gpu_memory(enough, model_args)  # the utilization it names passes


def test_the_gpu_check_stops_before_loading_with_the_utilization_to_set(monkeypatch, qwen_dir):
    check = run_gpu_check(monkeypatch, qwen_dir, 4.0 * GIB, 14.5, "--vllm_gpu_memory_utilization", "0.13")
    row = check.rows["memory"]
    assert check.built_with == [] and row.status == FAIL, row  # nothing loaded
    assert "smaller than what vLLM holds before its KV cache" in row.verdict
    assert row.fix.startswith("raise vllm_gpu_memory_utilization to at least 0.16 of the card (vLLM needs 2.2")


@pytest.mark.parametrize(
    ("config", "shape"),
    [("qwen2.5-1.5b-qlora-vllm.yaml", QWEN_1_5B), ("qwen2.5-3b-qlora-vllm.yaml", QWEN_3B),
     ("qwen2.5-1.5b-lora-vllm.yaml", QWEN_1_5B), ("qwen2.5-1.5b-qlora-vllm-tools.yaml", QWEN_1_5B)],
)  # fmt: skip
def test_the_shipped_colocated_recipes_pass_pre_flight_on_a_t4(monkeypatch, tmp_path, config, shape):
    """A "16 GB" T4 offers 14.75 GiB: every colocated recipe's vLLM pool (0.3 of it) holds what vLLM needs first."""
    (tmp_path / "config.json").write_text(json.dumps(shape))
    FakeCard(T4).install(monkeypatch)
    _, training_args, model_args = recipe(tmp_path, str(REPO / "configs" / config))
    mc.check_gpu_memory(training_args, model_args)
