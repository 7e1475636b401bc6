"""cpu/bnb_seams.py: the bitsandbytes names it sets and reads are where bitsandbytes 0.50 had them, and they still do
what the seam says, on a real 4-bit layer. On a bitsandbytes upgrade these fail first (docs/testing.md)."""

import inspect

import pytest
import torch

from cpu import bnb_seams

bnb = pytest.importorskip("bitsandbytes")
from bitsandbytes import functional  # noqa: E402
from bitsandbytes.nn import Linear4bit, modules  # noqa: E402


def moved(what: str, seam: str) -> str:
    return (
        f"bitsandbytes no longer has {what} as bitsandbytes {bnb_seams.BITSANDBYTES_VERSION} had: cpu/bnb_seams.py's "
        f"{seam} needs updating (then run tests/cpu/test_bnb_cpu.py and tests/train/engines/test_share_base_views.py)"
    )


def layer() -> Linear4bit:
    torch.manual_seed(0)
    four_bit = Linear4bit(64, 32, bias=False, compute_dtype=torch.float32, quant_type="nf4")
    four_bit.load_state_dict(torch.nn.Linear(64, 32, bias=False).state_dict())
    return four_bit.to("cpu")  # quantizes


def test_the_cpu_repack_flag_is_read_by_forward():
    forward = inspect.getsource(Linear4bit.forward)
    assert "self.support_avx512bf16_for_cpu" in forward, moved(
        "Linear4bit.forward reading support_avx512bf16_for_cpu", "stop_cpu_repack"
    )
    assert "packing_format_for_cpu" in forward, moved(
        "Linear4bit.forward reading QuantState.packing_format_for_cpu", "repacked_for_cpu"
    )
    assert "packing_format_for_cpu = True" in inspect.getsource(functional), moved(
        "the repack marking its QuantState packing_format_for_cpu", "repacked_for_cpu"
    )
    four_bit = layer()
    assert isinstance(bnb_seams.cpu_repack_allowed(four_bit), bool), moved(
        "Linear4bit.support_avx512bf16_for_cpu", "stop_cpu_repack"
    )
    bnb_seams.stop_cpu_repack(four_bit)
    assert bnb_seams.cpu_repack_allowed(four_bit) is False
    four_bit.eval()
    with torch.no_grad():
        four_bit(torch.randn(2, 64))
    assert not bnb_seams.repacked_for_cpu(four_bit.weight.quant_state)  # stopped: no repack in eval mode


def test_the_modules_fallback_quant_state():
    assert "module.quant_state" in inspect.getsource(modules.fix_4bit_weight_quant_state_from_module), moved(
        "Linear4bit.quant_state as the weight's fallback state", "set_quant_state"
    )
    four_bit = layer()
    state = four_bit.weight.quant_state
    four_bit.weight.quant_state = None
    bnb_seams.set_quant_state(four_bit, state)
    assert four_bit.weight.quant_state is state and four_bit.quant_state is state


def test_a_replaced_forward_is_called_until_restored():
    four_bit = layer()
    x = torch.randn(2, 64)
    own = four_bit(x)
    assert not bnb_seams.forward_replaced(four_bit)
    bnb_seams.replace_forward(four_bit, lambda inputs: torch.zeros(inputs.shape[0], 32))
    assert bnb_seams.forward_replaced(four_bit)
    assert torch.equal(four_bit(x), torch.zeros(2, 32)), moved(
        "a layer's forward looked up on the instance", "replace_forward"
    )
    bnb_seams.restore_forward(four_bit)
    assert not bnb_seams.forward_replaced(four_bit)
    assert torch.equal(four_bit(x), own)
