"""TRL's fused LM head on CPU projecting only the labelled (completion) positions, as it does on CUDA
(train/trl_seams.py ``lm_head_on_labelled_positions``, entered by RecordingGRPOTrainer.training_step): the same
logprobs, entropies and LoRA gradients bit for bit on the real 4-bit policy, fewer rows projected, and a clear error
when a TRL upgrade moves the decision the seam swaps."""

import pytest
import torch
from trl.trainer import utils
from trl.trainer.utils import add_fused_lm_head

from tests.helpers.cpu_policy import load_4bit_base
from train.trl_seams import lm_head_on_labelled_positions


def tiny_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=40, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2)
    model = LlamaForCausalLM(config)
    add_fused_lm_head(model, temperature=0.7, outputs=("log_probs", "entropy"))
    return model


def prompt_and_completion(batch: int, prompt: int, completion: int, vocab: int, lengths: list[int]):
    """Right-padded rows of ``prompt`` prompt tokens and up to ``completion`` completion tokens; labels only on the
    completion, as TRL's ``_get_per_token_logps_and_entropies`` builds them."""
    ids = torch.randint(0, vocab, (batch, prompt + completion), generator=torch.Generator().manual_seed(3))
    mask = (torch.arange(prompt + completion) < torch.tensor(lengths)[:, None]).long()
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :prompt] = -100
    return ids, mask, labels


def projected_rows(monkeypatch, model, ids, mask, labels) -> list[int]:
    """How many positions each call of TRL's chunked LM-head kernel was given."""
    rows = []
    kernel = utils._ChunkedLogProbFunction

    class Spy:
        @staticmethod
        def apply(hidden, *args):
            rows.append(hidden.shape[0])
            return kernel.apply(hidden, *args)

    monkeypatch.setattr(utils, "_ChunkedLogProbFunction", Spy)
    model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    return rows


def test_only_the_labelled_positions_are_projected_inside_the_block(monkeypatch):
    model = tiny_model()
    ids, mask, labels = prompt_and_completion(3, 9, 5, 40, [14, 12, 10])
    labelled = int((labels[:, 1:] != -100).sum())  # the fused head scores next-token labels
    assert labelled == 5 + 3 + 1
    assert projected_rows(monkeypatch, model, ids, mask, labels) == [3 * 13]  # TRL on CPU: every position
    with lm_head_on_labelled_positions():
        assert projected_rows(monkeypatch, model, ids, mask, labels) == [labelled]
    assert projected_rows(monkeypatch, model, ids, mask, labels) == [3 * 13]  # restored on exit


def test_the_block_restores_trl_on_error_and_nests():
    original = utils._use_triton
    with pytest.raises(KeyError):
        with lm_head_on_labelled_positions():
            assert utils._use_triton(torch.device("cpu"))
            with lm_head_on_labelled_positions():
                assert utils._use_triton(torch.device("cpu"))
            assert utils._use_triton(torch.device("cpu"))  # the inner block left the outer one's swap in place
            raise KeyError
    assert utils._use_triton is original and not original(torch.device("cpu"))


def test_other_devices_are_left_as_trl_decides():
    with lm_head_on_labelled_positions():
        assert utils._use_triton(torch.device("meta")) is False  # e.g. Neuron/XLA: fixed tile shapes for the compiler


def add_head_without_the_decision(model):
    """A fused head that compacts by another rule (what a TRL upgrade could ship)."""

    def forward(hidden, mask):
        return hidden[mask] if hidden.device.type == "cuda" else hidden

    model.forward = forward


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda monkeypatch: monkeypatch.delattr(utils, "_use_triton"), id="name-gone"),
        pytest.param(lambda monkeypatch: monkeypatch.setattr(utils, "_use_triton", lambda device: True), id="other"),
        pytest.param(
            lambda monkeypatch: monkeypatch.setattr(utils, "add_fused_lm_head", add_head_without_the_decision),
            id="decided-elsewhere",
        ),
    ],
)
def test_a_trl_that_decides_differently_is_a_clear_error(monkeypatch, change):
    """What a TRL upgrade that renames, replaces or stops consulting ``_use_triton`` does: an error naming the seam."""
    change(monkeypatch)
    with pytest.raises(RuntimeError, match=r"_use_triton.*train/trl_seams.py \(read in trl 1\.16\.0\) needs updating"):
        with lm_head_on_labelled_positions():
            pass


@pytest.fixture(scope="module")
def real_policy(cpu_model):
    """SmolLM2-135M as the CPU default trains it: 4-bit nf4 (double quantization), fp32 compute, LoRA on every
    projection with nonzero B, TRL's fused LM head added before PEFT as GRPOTrainer adds it (temperature 0.7)."""
    from peft import LoraConfig, get_peft_model

    base = load_4bit_base(cpu_model)
    add_fused_lm_head(base, temperature=0.7, outputs=("log_probs", "entropy"))
    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    policy = get_peft_model(base, LoraConfig(r=8, target_modules=targets))
    torch.manual_seed(0)
    for name, param in policy.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(param, std=0.02)
    policy.train()
    return policy


def test_the_real_policy_scores_and_learns_bit_for_bit_the_same(real_policy):
    """The loss forward and backward of the CPU default's policy on 4 completions of 1-6 tokens after a 12-token
    prompt: logprobs, entropies and every LoRA gradient equal bit for bit with only the labelled positions projected,
    the backward run after the block is left (as the trainer's runs after compute_loss returns)."""
    ids, mask, labels = prompt_and_completion(4, 12, 6, 49152, [18, 15, 13, 18])

    def forward():
        real_policy.zero_grad(set_to_none=True)
        return real_policy(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)

    def backward(out):
        (out.log_probs.sum() + 0.1 * out.entropy.sum()).backward()
        return (
            out.log_probs.detach(),
            out.entropy.detach(),
            {name: param.grad.clone() for name, param in real_policy.named_parameters() if param.requires_grad},
        )

    expected_logps, expected_entropy, expected = backward(forward())
    with lm_head_on_labelled_positions():
        out = forward()
    logps, entropy, got = backward(out)
    assert torch.equal(logps, expected_logps) and torch.equal(entropy, expected_entropy)
    assert bool((logps != 0).sum() == (labels[:, 1:] != -100).sum())  # a logprob at every label, zero elsewhere
    assert got.keys() == expected.keys() and len(got) == 30 * 7 * 2
    assert all(torch.equal(got[name], expected[name]) for name in expected)
    assert any(bool(grad.abs().sum() > 0) for grad in expected.values())
