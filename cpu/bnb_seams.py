"""The bitsandbytes names verigrpo touches that are not public API: the one place an upgrade breaks.

Written against bitsandbytes 0.50.2 (pinned in pyproject.toml). Everything else reaches these only through the
functions below; tests/cpu/test_bnb_seams.py pins each name and fails first on an upgrade that moves it
(tests/test_seams.py checks that no other module names it). ``Linear4bit``, ``QuantState``, ``dequantize_4bit`` and
``dequantize_blockwise`` are public and used directly.

* ``Linear4bit.support_avx512bf16_for_cpu`` (set in ``__init__``, read by ``forward``): when true, the first
  eval-mode forward on CPU without gradients repacks the layer's weights in place for a bf16 kernel.
  ``stop_cpu_repack`` sets it false (``cpu/bnb_cpu.py``, ``train/engines/share_base_views.py``).
* ``QuantState.packing_format_for_cpu`` (set by that repack): ``repacked_for_cpu`` reads it.
* ``Linear4bit.quant_state``: the module's fallback copy of its weight's state, which ``forward`` restores the
  weight's from (``fix_4bit_weight_quant_state_from_module``); ``set_quant_state`` keeps both the same.
* ``Linear4bit.forward`` looked up on the instance (torch's ``Module.__call__``): ``replace_forward`` gives one layer
  its own computation and ``restore_forward`` the class's back (``cpu/bnb_cpu.py``'s dequantized layers).
* the logger of ``bitsandbytes.backends.cpu.ops`` and its import-time warning "Failed to load CPU gemm_4bit_forward
  from kernels-community: No module named 'kernels'", printed by every process that imports bitsandbytes (peft
  does, and transformers' Trainer imports peft) on a CPU with AVX512-BF16 when the optional ``kernels`` package is
  not installed. That Hub kernel serves only the bf16 gemv of repacked layers, which verigrpo switches off
  (``stop_cpu_repack``) and which falls back to bitsandbytes' own kernel anyway; installing ``kernels`` would fetch
  it from the Hub. ``quiet_missing_hub_kernel`` drops exactly that record (any other failure of the kernel still
  prints); the packages that import bitsandbytes call it from their ``__init__``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

BITSANDBYTES_VERSION = "0.50.2"  # the version every name here was read in


def stop_cpu_repack(layer) -> None:
    """Keep ``layer`` (a ``Linear4bit``) from repacking its weights for bitsandbytes' CPU bf16 kernel."""
    layer.support_avx512bf16_for_cpu = False


def cpu_repack_allowed(layer) -> bool:
    """Whether ``layer`` would still repack its weights in an eval-mode CPU forward (``stop_cpu_repack`` not called)."""
    return bool(layer.support_avx512bf16_for_cpu)


def repacked_for_cpu(quant_state) -> bool:
    """Whether a ``QuantState`` (or None) belongs to weights already repacked for the CPU bf16 kernel."""
    return bool(getattr(quant_state, "packing_format_for_cpu", False))


def set_quant_state(layer, state) -> None:
    """Give ``layer`` (a ``Linear4bit``) the quantization state ``state``: its weight's and the module's fallback copy."""
    layer.weight.quant_state = state
    layer.quant_state = state


def replace_forward(layer, forward: Callable) -> None:
    """``layer`` computes ``forward(x)`` instead of its class's forward until ``restore_forward``."""
    layer.forward = forward


def restore_forward(layer) -> None:
    """Give ``layer`` its class's forward back (undo ``replace_forward``)."""
    del layer.forward


def forward_replaced(layer) -> bool:
    """Whether ``replace_forward`` gave ``layer`` a forward of its own."""
    return "forward" in vars(layer)


HUB_KERNEL_LOGGER = "bitsandbytes.backends.cpu.ops"  # the module's ``logging.getLogger(__name__)``
HUB_KERNEL_NOTICE = "Failed to load CPU gemm_4bit_forward from kernels-community"  # its warning's format starts so


class _MissingKernelsPackage(logging.Filter):
    """Drops bitsandbytes' warning that the optional ``kernels`` package is not installed; passes every other record."""

    def filter(self, record: logging.LogRecord) -> bool:
        cause = record.args[0] if isinstance(record.args, tuple) and record.args else None
        missing = isinstance(cause, ModuleNotFoundError) and cause.name == "kernels"
        return not (missing and str(record.msg).startswith(HUB_KERNEL_NOTICE))


def quiet_missing_hub_kernel() -> None:
    """Silence bitsandbytes' import-time "No module named 'kernels'" warning (above) in this process; call it before
    bitsandbytes is imported (logging's loggers exist before the module that logs to them). Idempotent."""
    logger = logging.getLogger(HUB_KERNEL_LOGGER)
    if not any(isinstance(f, _MissingKernelsPackage) for f in logger.filters):
        logger.addFilter(_MissingKernelsPackage())
