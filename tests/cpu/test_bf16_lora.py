"""The bf16 LoRA adapter's rank-sized products computed in fp32 in torch's own summation order (cpu/bf16_lora.py,
entered by RecordingGRPOTrainer.generating and computing_loss): the same bits as torch's bf16 kernel for the shapes
the CPU default multiplies, the same logits, sampled tokens and LoRA gradients on the real 4-bit policy, and torch's
own computation wherever the probe finds another order."""

import pytest
import torch
import torch.nn.functional as F

from cpu import bf16_lora
from cpu.bf16_lora import exact_bf16_lora, linear_bf16, mm_bf16
from cpu.capability import detect
from tests.helpers.cpu_policy import load_4bit_base

pytestmark = pytest.mark.skipif(
    detect().native_bf16, reason="native bf16: torch multiplies bf16 with oneDNN, whose order this does not reproduce"
)


def spread(*shape, seed=0):
    """bf16 numbers of magnitudes 2^-12..2^12: another summation order changes some roundings."""
    generator = torch.Generator().manual_seed(seed)
    scale = torch.exp2(torch.randint(-12, 13, shape, generator=generator).float())
    return (torch.randn(*shape, generator=generator) * scale).to(torch.bfloat16)


@pytest.mark.parametrize(
    ("rows", "rank", "outputs"),
    [(3120, 16, 1536), (2352, 16, 576), (300, 16, 192), (16, 16, 1536), (1, 16, 576), (500, 32, 200), (77, 48, 64)],
)
def test_the_up_projection_is_torchs_bf16_linear_bit_for_bit(rows, rank, outputs):
    x, weight = spread(rows, rank), spread(outputs, rank, seed=1)
    assert torch.equal(linear_bf16(x, weight), F.linear(x, weight))


@pytest.mark.parametrize(
    ("rows", "rank", "outputs"), [(3120, 16, 576), (3120, 16, 1536), (300, 16, 192), (5, 16, 576), (400, 8, 100)]
)
def test_the_input_gradient_product_is_torchs_bf16_mm_bit_for_bit(rows, rank, outputs):
    g, a = spread(rows, rank), spread(rank, outputs, seed=1)
    assert torch.equal(mm_bf16(g, a), torch.mm(g, a))


def test_another_summation_order_is_refused_and_torch_keeps_the_layer(monkeypatch):
    """What another torch (or oneDNN's kernel) looks like to the probe: the layer keeps torch's computation."""
    layer = torch.nn.Linear(16, 192, bias=False).to(torch.bfloat16)
    monkeypatch.setattr(bf16_lora, "_probed", {})
    monkeypatch.setattr(bf16_lora, "linear_bf16", lambda x, w: x.float().mm(w.float().t()).to(torch.bfloat16))
    with exact_bf16_lora(layer) as changed:
        assert changed == 0 and "forward" not in vars(layer)
    monkeypatch.setattr(bf16_lora, "_probed", {})
    monkeypatch.undo()
    with exact_bf16_lora(layer) as changed:
        assert changed == 1 and "forward" in vars(layer)
    assert "forward" not in vars(layer)  # its own forward back on exit


@pytest.fixture(scope="module")
def real_policy(cpu_model):
    """SmolLM2-135M as the CPU default trains it: 4-bit nf4 (double quantization), fp32 compute, LoRA r16 on every
    projection with nonzero B, the adapter cast to bf16 as TRL's GRPOTrainer casts a QLoRA adapter."""
    from peft import LoraConfig, get_peft_model

    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    policy = get_peft_model(load_4bit_base(cpu_model), LoraConfig(r=16, lora_alpha=32, target_modules=targets))
    torch.manual_seed(0)
    for name, param in policy.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(param, std=0.02)
        if param.requires_grad:
            param.data = param.data.to(torch.bfloat16)
    return policy


def test_the_real_policy_scores_samples_and_learns_bit_for_bit_the_same(real_policy):
    """A loss forward and backward of 12 rows of 40 tokens (enough rows for the fp32 path), and 6 sampled tokens of
    4 rows: logits, every LoRA gradient and the sampled tokens equal bit for bit with the block entered."""
    ids = torch.randint(0, 49152, (12, 40), generator=torch.Generator().manual_seed(3))
    mask = torch.ones_like(ids)
    mask[3, :7] = 0  # a left-padded row

    def step():
        real_policy.train()
        real_policy.zero_grad(set_to_none=True)
        logits = real_policy(input_ids=ids, attention_mask=mask).logits
        torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[:, 1:, None]).mean().backward()
        grads = {name: p.grad.clone() for name, p in real_policy.named_parameters() if p.requires_grad}
        return logits.detach(), grads

    def sample():
        real_policy.eval()
        torch.manual_seed(5)
        with torch.no_grad():
            return real_policy.generate(
                input_ids=ids[:4, :30], attention_mask=mask[:4, :30], do_sample=True, max_new_tokens=6, top_k=0
            )

    expected_logits, expected = step()
    expected_tokens = sample()
    with exact_bf16_lora(real_policy) as changed:
        logits, grads = step()
        tokens = sample()
    assert changed == 30 * 7 * 2  # every lora_A and lora_B
    assert torch.equal(logits, expected_logits) and torch.equal(tokens, expected_tokens)
    assert grads.keys() == expected.keys() and len(grads) == 30 * 7 * 2
    assert all(torch.equal(grads[name], expected[name]) for name in expected)
    assert all(bool(grad.abs().sum() > 0) for grad in expected.values())
    assert not any("forward" in vars(module) for module in real_policy.modules() if isinstance(module, torch.nn.Linear))
