"""cpu/bnb_cpu.py: a 4-bit layer computes in eval mode what it computes in training, and an eval-mode
forward leaves the gradient intact. Real bitsandbytes layers on this CPU; the layer without the switch shows
the defect the switch exists for (only where bitsandbytes has its AVX512-BF16 path)."""

import pytest
import torch

from cpu.bnb_cpu import dequantize_once, dequantized, keep_training_kernel
from tests.helpers.cpu_policy import load_4bit_base

bnb = pytest.importorskip("bitsandbytes")
from bitsandbytes.functional import has_avx512bf16  # noqa: E402
from bitsandbytes.nn import Linear4bit  # noqa: E402

REPACKS_HERE = has_avx512bf16()


def quantized_layer(seed: int = 0) -> Linear4bit:
    """An nf4 layer (nested statistics, as the configs quantize) from a seeded full-precision one."""
    torch.manual_seed(seed)
    full = torch.nn.Linear(128, 64)
    layer = Linear4bit(128, 64, bias=True, compute_dtype=torch.float32, quant_type="nf4", compress_statistics=True)
    layer.load_state_dict(full.state_dict())
    return layer.to("cpu")  # quantizes


def train_forward(layer: Linear4bit, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The layer's output in train mode and the gradient it passes back to its input."""
    layer.train()
    x = x.clone().requires_grad_(True)
    y = layer(x)
    (y * torch.linspace(-1, 1, y.size(-1))).sum().backward()
    return y.detach(), x.grad


def eval_forward(layer: Linear4bit, x: torch.Tensor) -> torch.Tensor:
    layer.eval()
    with torch.no_grad():
        return layer(x.detach())


X = torch.randn(5, 128, generator=torch.Generator().manual_seed(1))


def test_eval_mode_computes_what_training_computes():
    layer = quantized_layer()
    assert keep_training_kernel(torch.nn.Sequential(layer)) == 1
    trained_output, _ = train_forward(quantized_layer(), X)
    assert torch.equal(eval_forward(layer, X), trained_output)


def test_an_eval_forward_leaves_the_gradient_as_it_was():
    fresh_output, fresh_grad = train_forward(quantized_layer(), X)
    layer = quantized_layer()
    keep_training_kernel(layer)
    eval_forward(layer, X)
    output, grad = train_forward(layer, X)
    assert torch.equal(output, fresh_output)
    assert torch.equal(grad, fresh_grad)


@pytest.mark.skipif(not REPACKS_HERE, reason="bitsandbytes repacks for its bf16 kernel only on AVX512-BF16 CPUs")
def test_without_the_switch_an_eval_forward_changes_the_layer():
    """The defect, so this test file fails if bitsandbytes stops doing it (then the switch can go)."""
    layer = quantized_layer()
    trained_output, _ = train_forward(quantized_layer(), X)
    assert not torch.equal(eval_forward(layer, X), trained_output)  # bf16 kernel
    assert layer.weight.quant_state.packing_format_for_cpu  # repacked in place
    with pytest.raises(RuntimeError, match="bitsandbytes already repacked"):
        keep_training_kernel(layer)


def test_a_model_without_4bit_layers_is_left_alone():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    assert keep_training_kernel(model) == 0


def test_dequantized_once_computes_what_the_training_forward_computes():
    reference = quantized_layer()
    expected, _ = train_forward(reference, X)
    layer = quantized_layer()
    assert dequantize_once(torch.nn.Sequential(layer)) == 1
    layer.eval()
    with torch.no_grad():
        assert torch.equal(layer(X), expected)
        assert torch.equal(layer(X[:2, None].expand(2, 7, 128)), reference(X[:2, None].expand(2, 7, 128)))


def test_a_layer_whose_probe_differs_is_left_alone(monkeypatch):
    """Another bitsandbytes whose dequantization differs from its forward: the layer keeps its own forward."""
    import bitsandbytes.functional as bnb_functional

    real = bnb_functional.dequantize_4bit
    monkeypatch.setattr(bnb_functional, "dequantize_4bit", lambda *a, **k: real(*a, **k) * 1.001)
    layer = quantized_layer()
    assert dequantize_once(layer) == 0
    assert "forward" not in vars(layer)


def test_dequantized_gives_each_layer_its_own_forward_back():
    layer = quantized_layer()
    expected, _ = train_forward(quantized_layer(), X)
    with dequantized(layer) as changed:
        assert changed == 1 and "forward" in vars(layer)
    assert "forward" not in vars(layer)
    output, _ = train_forward(layer, X)
    assert torch.equal(output, expected)


def test_sampling_from_the_real_4bit_policy_is_unchanged_by_dequantizing(cpu_model):
    """What the trainer's generation relies on: the same seeded sampling from SmolLM2 in 4-bit + LoRA gives the
    same tokens with each layer dequantized once as with bitsandbytes dequantizing on every step."""
    from peft import LoraConfig, get_peft_model

    base = load_4bit_base(cpu_model)
    policy = get_peft_model(base, LoraConfig(r=8, target_modules=["q_proj", "v_proj", "down_proj"]))
    torch.manual_seed(0)
    for name, param in policy.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(param, std=0.02)
    policy.train()  # as TRL generates
    prompt = torch.tensor([[1, 504, 3458, 314, 216, 33, 1232, 216, 34, 47]] * 3)

    def sample():
        torch.manual_seed(1)
        with torch.no_grad():
            return policy.generate(input_ids=prompt, max_new_tokens=8, do_sample=True, temperature=1.0, top_k=0)

    expected = sample()
    with dequantized(policy) as changed:
        assert changed == 30 * 7  # every 4-bit projection of the 30 layers
        assert torch.equal(sample(), expected)
    assert torch.equal(sample(), expected)


@pytest.mark.parametrize("shape", [(5, 128), (2, 7, 128)])
def test_dequantized_for_a_training_step_gives_bitsandbytes_output_and_input_gradient(shape):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(2))
    expected_output, expected_grad = train_forward(quantized_layer(), x)
    layer = quantized_layer()
    with dequantized(layer, backward=True) as changed:
        assert changed == 1
        output, grad = train_forward(layer, x)
    assert torch.equal(output, expected_output)
    assert torch.equal(grad, expected_grad)
    assert "forward" not in vars(layer)


def test_a_layer_whose_backward_differs_is_left_alone_for_training(monkeypatch):
    """Another bitsandbytes whose backward is not the ``linear``'s: the training step keeps its own forward, while
    generation (no backward) may still dequantize it."""
    from bitsandbytes.autograd._functions import MatMul4Bit

    original = MatMul4Bit.backward

    def skewed(ctx, grad_output):
        grad_a, *rest = original(ctx, grad_output)
        return (grad_a * 1.001, *rest)

    monkeypatch.setattr(MatMul4Bit, "backward", staticmethod(skewed))
    layer = quantized_layer()
    with dequantized(layer, backward=True) as changed:
        assert changed == 0 and "forward" not in vars(layer)
    with dequantized(layer) as changed:
        assert changed == 1


def test_a_training_step_of_the_real_4bit_policy_is_unchanged_by_dequantizing(cpu_model):
    """What the trainer's loss forward and backward rely on (RecordingGRPOTrainer.computing_loss): SmolLM2 in 4-bit +
    LoRA gives the same loss and the same LoRA gradients, bit for bit, with each layer dequantized once for the step
    as with bitsandbytes dequantizing in every forward and backward; the backward runs after the block is left."""
    from peft import LoraConfig, get_peft_model

    base = load_4bit_base(cpu_model)
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    policy = get_peft_model(base, LoraConfig(r=8, target_modules=targets))
    torch.manual_seed(0)
    for name, param in policy.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(param, std=0.02)
    policy.train()
    ids = torch.tensor([[1, 504, 3458, 314, 216, 33, 1232, 216, 34, 47, 28, 216], [2, 33, 1232, 216, 34, 47] + [0] * 6])
    mask = (torch.arange(12) < torch.tensor([[12], [6]])).long()

    def step():
        logits = policy(input_ids=ids, attention_mask=mask, logits_to_keep=8).logits
        return torch.log_softmax(logits.float(), dim=-1)[..., :5].mean()

    def grads():
        policy.zero_grad(set_to_none=True)
        loss = step()
        loss.backward()
        return loss.detach(), {n: p.grad.clone() for n, p in policy.named_parameters() if p.requires_grad}

    expected_loss, expected = grads()
    policy.zero_grad(set_to_none=True)
    with dequantized(policy, backward=True) as changed:
        assert changed == 30 * 7  # every 4-bit projection of the 30 layers
        loss = step()
    loss.backward()  # outside the block, as the trainer's backward runs after compute_loss
    assert torch.equal(loss.detach(), expected_loss)
    got = {n: p.grad for n, p in policy.named_parameters() if p.requires_grad}
    assert got.keys() == expected.keys() and len(got) == 30 * 7 * 2
    assert all(torch.equal(got[n], expected[n]) for n in expected)
    assert any(bool(g.abs().sum() > 0) for g in expected.values())
