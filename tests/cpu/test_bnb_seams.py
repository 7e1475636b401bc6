"""cpu/bnb_seams.py: the bitsandbytes names it sets and reads are where bitsandbytes 0.50 had them, and they still do
what the seam says, on a real 4-bit layer. On a bitsandbytes upgrade these fail first (docs/testing.md)."""

import inspect
import logging
import subprocess
import sys

import pytest
import torch

from cpu import bnb_seams
from tests.helpers import REPO

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


# ---- the import-time "No module named 'kernels'" warning (issue #52: it failed the suite on AVX512-BF16 machines) ----


def test_the_hub_kernel_warning_is_where_the_seam_filters_it():
    """bitsandbytes' CPU ops module logs through the logger the filter sits on, with the message it matches, and only
    when the optional ``kernels`` import fails: moved, the filter would silence nothing."""
    from bitsandbytes.backends.cpu import ops

    source = inspect.getsource(ops)
    assert ops.logger.name == bnb_seams.HUB_KERNEL_LOGGER, moved("the CPU ops module's logger", "HUB_KERNEL_LOGGER")
    assert f'"{bnb_seams.HUB_KERNEL_NOTICE}: %s.' in source, moved("the kernels-community warning", "HUB_KERNEL_NOTICE")
    assert "from kernels import get_kernel" in source, moved(
        "the optional `kernels` import", "quiet_missing_hub_kernel"
    )


def record(message: str, cause: BaseException) -> logging.LogRecord:
    return logging.LogRecord(bnb_seams.HUB_KERNEL_LOGGER, logging.WARNING, "ops.py", 253, message, (cause,), None)


def test_the_filter_drops_only_the_missing_kernels_package():
    bnb_seams.quiet_missing_hub_kernel()
    bnb_seams.quiet_missing_hub_kernel()  # idempotent: one filter
    logger = logging.getLogger(bnb_seams.HUB_KERNEL_LOGGER)
    (quiet,) = [f for f in logger.filters if type(f).__name__ == "_MissingKernelsPackage"]
    notice = bnb_seams.HUB_KERNEL_NOTICE + ": %s. Please make sure you already `pip install kernels`"
    assert not quiet.filter(record(notice, ModuleNotFoundError("No module named 'kernels'", name="kernels")))
    # the package is there but the kernel failed (no Hub, a version mismatch): that still prints
    assert quiet.filter(record(notice, RuntimeError("cannot reach the Hub")))
    assert quiet.filter(
        record(notice, ModuleNotFoundError("No module named 'huggingface_hub'", name="huggingface_hub"))
    )
    assert quiet.filter(record("another warning: %s", ModuleNotFoundError("x", name="kernels")))


def test_a_project_process_that_imports_bitsandbytes_prints_nothing():
    """The inspect plugin (``evals``: every ``inspect`` command) imports bitsandbytes through peft when a checkpoint
    loads; stderr stays empty. On an AVX512-BF16 CPU this printed the kernels-community warning (so did train/grpo.py:
    tests/train/config/test_bad_values.py's stderr started with it); on an AVX2 one bitsandbytes never tries that
    kernel."""
    result = subprocess.run(
        [sys.executable, "-c", "import evals; import peft"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
