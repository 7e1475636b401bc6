"""``share_base`` on a tiny 4-bit Llama and a vLLM-layout twin built the way vLLM's bitsandbytes loader builds it
(per-shard nf4 with double quantization, fused q/k/v and gate/up packed back to back, absmax flattened to fp32,
padded embedding rows), under ``torch.inference_mode`` as vLLM may create weights. The real engine on vLLM's CPU
build is tests/integration/test_share_base.py; these are the cheap checks of the same function: where views point,
identical logits, vLLM untouched by the trainer's eval forward and backward, and every layout surprise refused
before anything changes."""

import math

import pytest
import torch
from bitsandbytes import matmul_4bit
from bitsandbytes.functional import dequantize_blockwise, has_avx512bf16, quantize_4bit
from bitsandbytes.nn import Linear4bit

from train.config import ConfigError
from train.engines.share_base_views import SharedLayoutError, share_base

PACKED = {"qkv_proj": ["q_proj", "k_proj", "v_proj"], "gate_up_proj": ["gate_proj", "up_proj"]}
VOCAB, PADDED_VOCAB = 96, 128  # vLLM pads the vocabulary to a multiple of 64
TOKENS = torch.tensor([[1, 5, 9, 17, 33, 65, 2, 3]])


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
    )
    path = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).to(torch.bfloat16).save_pretrained(path)
    return path


def load_policy(path):
    """The trainer's side: transformers' 4-bit load (nf4, double quant, bf16 compute) + LoRA on all 7 projections."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    quantization = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.bfloat16,
    )
    model = AutoModelForCausalLM.from_pretrained(
        path, quantization_config=quantization, dtype=torch.bfloat16, device_map="cpu"
    )
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    return get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=targets, init_lora_weights=False))


class VLLMTwin(torch.nn.Module):
    packed_modules_mapping = PACKED


def _child(root: torch.nn.Module, dotted: str) -> torch.nn.Module:
    module = root
    for part in dotted.split("."):
        if part not in module._modules:
            module.add_module(part, torch.nn.Module())
        module = module._modules[part]
    return module


def build_vllm(path) -> VLLMTwin:
    """vLLM's layout of the same checkpoint (model_loader/bitsandbytes_loader.py, quantization/bitsandbytes.py)."""
    from safetensors.torch import load_file

    weights = load_file(str(path / "model.safetensors"))
    twin = VLLMTwin()
    layers = sorted({int(name.split(".")[2]) for name in weights if name.startswith("model.layers.")})
    with torch.inference_mode():
        for i in layers:
            for parent, fused in (("self_attn", ["qkv_proj", "o_proj"]), ("mlp", ["gate_up_proj", "down_proj"])):
                for leaf in fused:
                    prefix = f"model.layers.{i}.{parent}"
                    bytes_, states = [], {}
                    for index, sub in enumerate(PACKED.get(leaf, [leaf])):
                        packed, state = quantize_4bit(
                            weights[f"{prefix}.{sub}.weight"], compress_statistics=True, quant_type="nf4"
                        )
                        absmax = dequantize_blockwise(state.absmax, state.state2)  # vLLM's _dequantize_dq
                        absmax += state.offset
                        state.absmax, state.nested, state.offset, state.state2 = absmax.float(), False, None, None
                        bytes_.append(packed)
                        states[index] = state
                    weight = torch.nn.Parameter(torch.cat(bytes_), requires_grad=False)
                    sizes = [math.prod(s.shape) // 2 for s in states.values()]
                    weight.bnb_quant_state = states
                    weight.bnb_shard_offsets = torch.tensor([0, *torch.tensor(sizes).cumsum(0).tolist()])
                    _child(twin, f"{prefix}.{leaf}.base_layer").register_parameter("weight", weight)
        embed = weights["model.embed_tokens.weight"]
        padded = torch.cat([embed, torch.zeros(PADDED_VOCAB - VOCAB, embed.shape[1], dtype=embed.dtype)])
        table = torch.nn.Parameter(padded, requires_grad=False)
        _child(twin, "model.embed_tokens.base_layer").register_parameter("weight", table)
        _child(twin, "lm_head").register_parameter("weight", table)  # tied, as vLLM ties it
    return twin


def vllm_forward(twin: VLLMTwin, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """What vLLM computes with each packed layer (``_apply_bnb_4bit``: one matmul per shard), under inference mode."""
    out = {}
    with torch.inference_mode():
        for name, module in twin.named_modules():
            weight = module._parameters.get("weight")
            if weight is None or not hasattr(weight, "bnb_quant_state"):
                continue
            offsets, states = weight.bnb_shard_offsets, weight.bnb_quant_state
            inputs = x[..., : states[0].shape[1]].to(torch.bfloat16)
            parts = [
                matmul_4bit(inputs, weight[offsets[i] : offsets[i + 1]].t(), states[i]) for i in range(len(states))
            ]
            out[name] = torch.cat(parts, dim=-1)
    return out


def snapshot(twin: VLLMTwin) -> dict:
    """vLLM's bytes, constants and QuantState fields, copied."""
    snap = {}
    for name, p in twin.named_parameters(remove_duplicate=False):
        snap[name] = p.clone()
        for index, state in getattr(p, "bnb_quant_state", {}).items():
            fields = {k: v for k, v in vars(state).items() if not isinstance(v, torch.Tensor)}
            snap[f"{name}#{index}"] = (state.absmax.clone(), state.code.clone(), repr(sorted(fields.items())))
    return snap


def same(a: dict, b: dict) -> bool:
    def eq(x, y):
        if isinstance(x, tuple):
            return all(eq(u, v) for u, v in zip(x, y))
        return torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y

    return a.keys() == b.keys() and all(eq(a[k], b[k]) for k in a)


def no_fast_path(policy):
    """bitsandbytes' CPU fast path off everywhere, so a forward before sharing computes as the shared one does."""
    for module in policy.modules():
        if isinstance(module, Linear4bit):
            module.support_avx512bf16_for_cpu = False


def eval_logits(policy) -> torch.Tensor:
    policy.eval()
    with torch.no_grad():
        return policy(input_ids=TOKENS).logits


@pytest.fixture
def policy(checkpoint):
    return load_policy(checkpoint)


@pytest.fixture
def twin(checkpoint):
    return build_vllm(checkpoint)


def test_every_trainer_layer_views_vllms_bytes_at_its_shard_offset(policy, twin):
    before = {n: p.untyped_storage().nbytes() for n, p in policy.named_parameters() if not p.requires_grad}
    shared = share_base(policy, twin)
    assert [t.kind for t in shared.tensors].count("4bit") == 2 * 7 and shared.not_shared == {}
    assert {t.kind for t in shared.tensors} == {"4bit", "embedding"}  # the tied head is the embedding's tensor
    for t in shared.tensors:
        weight, theirs = t.owner.weight, t.vllm_weight
        assert weight.data_ptr() == theirs.data_ptr() + t.offset
        assert (
            weight.data_ptr() + weight.numel() * weight.element_size()
            <= theirs.data_ptr() + theirs.untyped_storage().nbytes()
        )
        if t.kind == "4bit":
            index = next(
                i
                for i, (a, b) in enumerate(zip(theirs.bnb_shard_offsets, theirs.bnb_shard_offsets[1:]))
                if a == t.offset
            )
            assert weight.numel() == int(theirs.bnb_shard_offsets[index + 1]) - t.offset
            assert weight.quant_state is not theirs.bnb_quant_state[index]  # the trainer's own QuantState ...
            assert weight.quant_state.absmax is theirs.bnb_quant_state[index].absmax  # ... over the same constants
            assert t.owner.support_avx512bf16_for_cpu is False
        assert theirs.is_inference() and not weight.is_inference() and not weight.requires_grad
    head = policy.get_base_model().get_output_embeddings().weight
    assert head.data_ptr() == twin.model.embed_tokens.base_layer.weight.data_ptr()
    assert not any(p.is_inference() for p in policy.parameters())
    # what the trainer held of the base is gone: packed bytes, nested constants, embeddings (weak references died)
    assert shared.kept == [] and shared.freed_bytes >= sum(before.values()) - 64 * 1024
    assert shared.problems() == []


def test_the_trainers_logits_are_identical_before_and_after_sharing(policy, twin):
    no_fast_path(policy)
    before = eval_logits(policy)
    share_base(policy, twin)
    assert torch.equal(eval_logits(policy), before)


def test_a_trainer_eval_forward_and_a_backward_leave_vllm_as_it_was(policy, twin):
    shared = share_base(policy, twin)
    x = torch.randn(3, 256)
    snap, outputs = snapshot(twin), vllm_forward(twin, x)
    eval_logits(policy)  # eval + no grad: where bitsandbytes' CPU fast path would repack
    policy.train()
    policy(input_ids=TOKENS).logits.float().logsumexp(-1).mean().backward()
    lora = [p for n, p in policy.named_parameters() if p.requires_grad]
    assert lora and all(p.grad is not None for p in lora)
    assert all(t.owner.weight.grad is None for t in shared.tensors)  # no gradient reaches vLLM's storage
    optimizer = torch.optim.AdamW(p for p in policy.parameters() if p.requires_grad)
    optimizer.step()
    held = {p.data_ptr() for group in optimizer.param_groups for p in group["params"]}
    assert not held & {t.owner.weight.data_ptr() for t in shared.tensors}
    assert same(snapshot(twin), snap)
    assert all(torch.equal(a, b) for a, b in zip(vllm_forward(twin, x).values(), outputs.values()))
    assert shared.problems() == []


@pytest.mark.skipif(not has_avx512bf16(), reason="bitsandbytes' CPU fast path needs AVX512-BF16")
def test_without_its_guards_a_trainer_eval_forward_corrupts_vllm(policy, twin):
    """The control: sharing vLLM's own QuantState with the fast path on, one eval forward rewrites vLLM's state (and
    the guarded test above would have seen it)."""
    shared = share_base(policy, twin)
    for t in shared.tensors:
        if t.kind == "4bit":
            offsets = t.vllm_weight.bnb_shard_offsets.tolist()
            t.owner.weight.quant_state = t.vllm_weight.bnb_quant_state[offsets.index(t.offset)]
            t.owner.support_avx512bf16_for_cpu = True
    snap = snapshot(twin)
    eval_logits(policy)
    assert not same(snapshot(twin), snap)


def test_a_policy_computing_in_another_dtype_keeps_its_own_embeddings(policy, twin):
    embed = policy.get_base_model().get_input_embeddings()
    embed.weight.data = embed.weight.data.float()
    shared = share_base(policy, twin)
    assert shared.not_shared == {"model.embed_tokens": "trainer torch.float32 on cpu, vLLM torch.bfloat16 on cpu"}
    assert [t.kind for t in shared.tensors].count("4bit") == 14


def _layer(twin, name="model.layers.1.self_attn.qkv_proj"):
    return twin.get_submodule(f"{name}.base_layer").weight


def _short_offsets(twin):
    _layer(twin).bnb_shard_offsets = torch.tensor([0, 100, 200, 300])


def _shifted_offsets(twin):
    _layer(twin).bnb_shard_offsets = torch.tensor([0, 100, 200, _layer(twin).shape[0]])


def _nested_state(twin):
    _layer(twin).bnb_quant_state[0].nested = True


def _float_weight(twin):
    module = twin.get_submodule("model.layers.0.mlp.down_proj.base_layer")
    old = module.weight
    module.weight = torch.nn.Parameter(old.data.float(), requires_grad=False)
    module.weight.bnb_quant_state, module.weight.bnb_shard_offsets = old.bnb_quant_state, old.bnb_shard_offsets


def _one_byte_differs(twin):
    with torch.inference_mode():
        _layer(twin)[7] ^= 1


def _absmax_differs(twin):
    state = _layer(twin, "model.layers.0.mlp.gate_up_proj").bnb_quant_state[1]
    state.absmax = state.absmax * 1.001


def _missing_layer(twin):
    del twin.get_submodule("model.layers.1.mlp")._modules["down_proj"]


def _unfused_names(twin):
    VLLMTwin.packed_modules_mapping = {}  # restored by the test


@pytest.mark.parametrize(
    ("surprise", "message"),
    [
        (_short_offsets, r"qkv_proj: shard offsets \[0, 100, 200, 300\] do not cut"),
        (_shifted_offsets, r"qkv_proj shard 0: fp32 absmax and \d+ bytes expected"),
        (_nested_state, r"qkv_proj shard 0: not a flat .* nf4 QuantState"),
        (_float_weight, r"down_proj: weight is torch.float32 .*not contiguous packed uint8"),
        (_one_byte_differs, r"q_proj: the packed 4-bit bytes differ"),
        (_absmax_differs, r"up_proj: the quantization constants \(absmax or code\) differ"),
        (_missing_layer, r"no 4-bit vLLM shard for the trainer's model.layers.1.mlp.down_proj"),
        (_unfused_names, r"qkv_proj: its quantization states are not one QuantState per shard 0..0"),
    ],
)
def test_a_layout_surprise_is_refused_and_nothing_is_rebound(policy, twin, surprise, message):
    pointers = {n: p.data_ptr() for n, p in policy.named_parameters()}
    try:
        surprise(twin)
        with pytest.raises(SharedLayoutError, match=message) as refused:
            share_base(policy, twin)
    finally:
        VLLMTwin.packed_modules_mapping = PACKED
    assert isinstance(refused.value, ConfigError) and "vllm_share_base: false" in str(refused.value)
    assert {n: p.data_ptr() for n, p in policy.named_parameters()} == pointers


def test_a_trainer_tensor_something_still_holds_is_kept_and_its_memory_untouched(policy, twin):
    """Freed memory is handed back (the heap trimmed, a dead view of the mapped checkpoint released page by page)
    only where the trainer's storage died: a tensor another reference holds keeps its bytes."""
    held = policy.get_base_model().get_input_embeddings().weight.data
    copy = held.clone()
    shared = share_base(policy, twin)
    assert shared.kept == ["model.embed_tokens"]
    assert torch.equal(held, copy)
