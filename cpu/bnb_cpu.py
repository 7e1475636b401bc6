"""Keep a 4-bit (bitsandbytes) model computing on CPU the way it trains, also in eval mode.

On a CPU with AVX512-BF16, bitsandbytes' ``Linear4bit.forward`` repacks a layer's weights *in place* the
first time it runs in eval mode without gradients, and from then on multiplies with a bf16 kernel
(``gemv_4bit``), in eval and in train mode alike. Training computes something else: in train mode each layer
dequantizes its nf4 weights and multiplies in the compute dtype (``dequantize_4bit`` + ``linear``), which is
what TRL's rollouts, the logprob forward and the backward pass use. Measured on SmolLM2-135M: the two differ by
up to 0.07 in one layer's output and flip greedy tokens in 18 of 64 evals. Worse, the bf16 kernel has no
autograd, so after one eval-mode forward the base layers pass no gradient: the LoRA gradient norm fell from
8.8 to 0.7 (the held-out-eval drift that docs/training.md described before its cause was known).

``keep_training_kernel`` switches the repack off on every 4-bit layer (bitsandbytes reads the layer's own
flag before repacking; ``cpu/bnb_seams.py`` sets it). Hand-written because bitsandbytes has no public switch.

``dequantize_once`` makes an *inference-only* 4-bit model on CPU fast without changing what it computes: the
training path dequantizes every layer's weights on every call (for a decode step of a small batch that is
about half the work); this dequantizes each layer once and multiplies with the same weights. Each layer is
checked on a probe input against its own forward, bit for bit, and left as it is if they differ.

``dequantized(model, backward=True)`` does the same for a training step: the base's 4-bit weights are frozen (only
the LoRA adapter trains), yet bitsandbytes' autograd (``MatMul4Bit``) dequantizes each layer's whole weight in the
forward and again in the backward, for every call. Here each layer is dequantized once for the step, and the
``linear`` on those weights passes back, bit for bit, the input gradient bitsandbytes' backward computes (checked on
the probe too: forward output and input gradient). Measured on an AVX2-only CPU, where the step's forward and
backward are ~90 % of it: docs/benchmarks.md.
"""

from __future__ import annotations

from contextlib import contextmanager

from cpu.bnb_seams import forward_replaced, repacked_for_cpu, replace_forward, restore_forward, stop_cpu_repack


def keep_training_kernel(model) -> int:
    """Stop bitsandbytes repacking ``model``'s 4-bit layers for its CPU bf16 kernel; the number of layers
    switched (0 for a model without 4-bit layers, or without bitsandbytes installed).

    Raises ``RuntimeError`` when a layer was already repacked: its weights are in the kernel's layout, and
    only a reload gives the training computation back.
    """
    try:
        from bitsandbytes.nn import Linear4bit
    except ImportError:
        return 0
    switched = 0
    for name, module in model.named_modules():
        if not isinstance(module, Linear4bit):
            continue
        state = getattr(module.weight, "quant_state", None)
        if repacked_for_cpu(state):
            raise RuntimeError(
                f"{name}: bitsandbytes already repacked this 4-bit layer for its CPU bf16 kernel (an eval-mode "
                "forward ran before keep_training_kernel): load the model again and call it before any forward"
            )
        stop_cpu_repack(module)
        switched += 1
    return switched


def dequantize_once(model) -> int:
    """Give each 4-bit layer of an inference-only CPU ``model`` its weights dequantized once, computing bit for
    bit what the layer's training forward computes; the number of layers changed.

    The dequantized weights are the compute dtype's size (4 bytes a parameter in float32): for the models one
    evaluates on a CPU, a few hundred MB. Layers not on the CPU, and layers whose probe output differs from their
    own forward (another bitsandbytes version, another compute dtype), are left as they are. Calls
    ``keep_training_kernel`` first.
    """
    return len(_dequantize(model))


@contextmanager
def dequantized(model, backward: bool = False):
    """``dequantize_once`` for the length of a ``with`` block (a training run's generation; with ``backward``, a
    whole training step: each layer's probe must also give bitsandbytes' input gradient, bit for bit). The layers
    get their own forward back on exit; layers already dequantized by an enclosing block are left to it. Yields the
    number of layers changed."""
    layers = _dequantize(model, backward)
    try:
        yield len(layers)
    finally:
        for layer in layers:
            restore_forward(layer)  # the class's forward again


def _dequantize(model, backward: bool = False) -> list:
    try:
        import bitsandbytes.functional as bnb_functional
        import torch
        from bitsandbytes.nn import Linear4bit
    except ImportError:
        return []
    keep_training_kernel(model)
    changed = []
    generator = torch.Generator().manual_seed(0)
    for module in model.modules():
        if not isinstance(module, Linear4bit) or module.weight.device.type != "cpu" or forward_replaced(module):
            continue
        dtype = module.compute_dtype or torch.float32
        with torch.no_grad():
            weight = bnb_functional.dequantize_4bit(module.weight.data, module.weight.quant_state).to(dtype)
            bias = None if module.bias is None else module.bias.detach().to(dtype)
        forward = _dequantized_forward(weight, bias, dtype)
        probe = torch.randn(3, module.in_features, generator=generator).to(dtype)
        if not _same(module, forward, probe, backward):
            continue
        replace_forward(module, forward)
        changed.append(module)
    return changed


def _same(module, forward, probe, backward: bool) -> bool:
    """Whether ``forward`` gives ``module``'s training-mode output on ``probe`` bit for bit (with ``backward``: and
    the same input gradient for a fixed output gradient)."""
    import torch

    was_training = module.training
    module.train()  # the training forward (no repack: keep_training_kernel)
    try:
        with torch.enable_grad() if backward else torch.no_grad():
            ours, theirs = probe.clone().requires_grad_(backward), probe.clone().requires_grad_(backward)
            mine, expected = forward(ours), module(theirs)
            if not torch.equal(mine.detach(), expected.detach()):
                return False
            if not backward:
                return True
            upstream = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1)).to(expected.dtype)
            # autograd.grad: nothing accumulates into the layer's own parameters
            (mine_grad,) = torch.autograd.grad(mine, ours, upstream)
            (expected_grad,) = torch.autograd.grad(expected, theirs, upstream)
            return torch.equal(mine_grad, expected_grad)
    finally:
        module.train(was_training)


def _dequantized_forward(weight, bias, dtype):
    import torch

    def forward(x):
        return torch.nn.functional.linear(x.to(dtype), weight, bias).to(x.dtype)

    return forward
