"""The bf16 LoRA adapter's rank-sized products on a CPU without native bf16: the same bits, several times faster.

TRL casts a QLoRA adapter to bf16 (``GRPOTrainer.__init__``), so on CPU every LoRA layer multiplies in bf16. Where the
CPU has no native bf16 (no AVX512-BF16/AMX: oneDNN's bf16 GEMM is not used), torch computes a bf16 matrix product with
its reference kernel (``aten/src/ATen/native/cpu/BlasKernel.cpp``): each output element is a separate fp32 dot product
with a fixed summation order, rounded to bf16 once. With an inner dimension of the LoRA rank (16) that kernel is slow:
the up-projection ``lora_B`` of every layer's forward and the input gradient of ``lora_A`` in its backward took ~270 ms
a call for the demo's 3,120 tokens x 1,536 outputs on the AVX2 machine, against ~2 ms for the same product in fp32:
most of a CPU GRPO step's loss forward, backward and generation prefill.

Every product of two bf16 numbers is exact in fp32, so only the order of the fp32 additions decides the result, and it
is fixed in torch's kernel. ``exact_bf16_lora`` computes the same sums in the same order with fp32 tensor operations
(pairs of products as fp32 batched products with an inner dimension of 2, whose single rounding cannot depend on
order, then the kernel's own addition tree), and rounds to bf16 once, as the kernel does:

- ``F.linear(x, w)`` (the transposed-A path, a vectorized dot): lane ``l`` of 8 sums products ``l, l+8, l+16, ...`` in
  order; the lanes are added as ``(l, l+4)``, then ``(l, l+2)``, then ``(l, l+1)`` (AVX2's horizontal sum).
- ``torch.mm(g, a)`` (the no-transpose path, a scalar dot): four partial sums of products ``k, k+4, k+8, ...`` in order,
  then ``((s0 + s1) + s2) + s3``.

Each layer's replacement is checked once per shape on a probe (forward output, input gradient and weight gradient, bit
for bit against the layer's own computation, on numbers spread over 2^-12..2^12 so any other order shows); a layer
whose probe differs (another torch version, oneDNN's bf16 kernel on an AVX512-BF16 CPU) keeps torch's computation.
torch only; nothing of train/ or evals/.
"""

from __future__ import annotations

from contextlib import contextmanager

from cpu.bnb_seams import forward_replaced, replace_forward, restore_forward

LANES = 8  # fp32 lanes of an AVX2 vector: the transposed-A dot's accumulator width
PARTIALS = 4  # the scalar dot's independent partial sums (ilp_factor)
MIN_OUTPUTS = 1 << 16  # below this many outputs (a decoding step: 16 rows) torch's own kernel is as fast: left to it
CHUNK_BYTES = 1 << 25  # fp32 scratch per chunk of rows: few chunks (each op is a parallel region, costly on a busy CPU)

_probed: dict[tuple, bool] = {}  # (in_features, out_features) -> whether the replacement equals torch's, bit for bit


@contextmanager
def exact_bf16_lora(model):
    """Inside the block, each bf16 ``nn.Linear`` of ``model`` without a bias whose rank-sized products this module
    reproduces (inner dimension a multiple of 8 below 64 for the forward, of 4 below 64 for the input gradient) computes them
    with fp32 operations, bit for bit as torch's own kernel; the number of layers changed. Layers get their own forward
    back on exit; an autograd graph built inside keeps the replacement's backward."""
    layers = _replace(model)
    try:
        yield len(layers)
    finally:
        for layer in layers:
            restore_forward(layer)  # the class's forward again


def linear_bf16(x, weight):
    """``torch.nn.functional.linear(x, weight)`` for 2-D bf16 ``x`` [T, K] and ``weight`` [N, K], K = 8 m < 64, in
    the summation order of torch's vectorized dot (see the module docstring)."""
    import torch

    rows, inner = x.shape
    outputs = weight.shape[0]
    xf, wf = x.float(), weight.float()
    chunks = inner // LANES
    out = torch.empty(rows, outputs, dtype=torch.bfloat16)
    step = max(1, CHUNK_BYTES // (4 * LANES * outputs))
    first = 2 if chunks >= 2 else 1
    # lane l: products l and l + 8 summed by one batched product of inner dimension 2 (one rounding: order-free)
    xp = torch.stack([xf[:, c * LANES : (c + 1) * LANES] for c in range(first)], dim=2).transpose(0, 1)  # [8, T, 1|2]
    wp = torch.stack([wf[:, c * LANES : (c + 1) * LANES] for c in range(first)], dim=2).permute(1, 2, 0).contiguous()
    for start in range(0, rows, step):
        end = min(rows, start + step)
        lanes = torch.bmm(xp[:, start:end].contiguous(), wp)  # [8, r, N]
        for c in range(first, chunks):  # further chunks of 8, in order, one rounding each
            block = xf[start:end, c * LANES : (c + 1) * LANES].t()
            lanes.addcmul_(block[:, :, None], wf[:, c * LANES : (c + 1) * LANES].t()[:, None, :])
        half = lanes[:4] + lanes[4:]  # (l, l+4)
        quarter = half[:2] + half[2:]  # (l, l+2)
        out[start:end] = quarter[0] + quarter[1]  # (l, l+1), rounded to bf16 once
    return out


def mm_bf16(g, a):
    """``torch.mm(g, a)`` for 2-D bf16 ``g`` [T, K] and ``a`` [K, N], K = 4 m, in the summation order of torch's
    scalar dot (see the module docstring)."""
    import torch

    rows, inner = g.shape
    outputs = a.shape[1]
    gf, af = g.float(), a.float()
    steps = inner // PARTIALS
    out = torch.empty(rows, outputs, dtype=torch.bfloat16)
    step = max(1, CHUNK_BYTES // (4 * PARTIALS * outputs))
    first = 2 if steps >= 2 else 1
    gp = torch.stack([gf[:, s * PARTIALS : (s + 1) * PARTIALS] for s in range(first)], dim=2).transpose(0, 1)
    ap = torch.stack([af[s * PARTIALS : (s + 1) * PARTIALS] for s in range(first)], dim=1)  # [4, 1|2, N]
    for start in range(0, rows, step):
        end = min(rows, start + step)
        partial = torch.bmm(gp[:, start:end].contiguous(), ap)  # [4, r, N]: products k and k + 4
        for s in range(first, steps):  # products k + 4 s, in order, one rounding each
            block = gf[start:end, s * PARTIALS : (s + 1) * PARTIALS].t()
            partial.addcmul_(block[:, :, None], af[s * PARTIALS : (s + 1) * PARTIALS][:, None, :])
        out[start:end] = ((partial[0] + partial[1]) + partial[2]) + partial[3]
    return out


def _forward_fits(inner: int) -> bool:
    return inner % LANES == 0 and inner < 64


def _input_grad_fits(inner: int) -> bool:
    # the rank only: for a long inner dimension (lora_B's input gradient) the sequential sums are slower than torch
    return inner % PARTIALS == 0 and inner < 64


def _function():
    import torch

    class ExactBf16Linear(torch.autograd.Function):
        """``F.linear(x, weight)`` without a bias, its rank-sized products reproduced (forward and input gradient);
        the weight gradient is torch's own product, as the autograd of ``linear`` computes it."""

        @staticmethod
        def forward(ctx, x, weight):
            x2d = x.reshape(-1, x.shape[-1])
            inner, outputs = weight.shape[1], weight.shape[0]
            if _forward_fits(inner) and x2d.shape[0] * outputs >= MIN_OUTPUTS:
                out = linear_bf16(x2d, weight)
            else:
                out = x2d.mm(weight.t())
            ctx.save_for_backward(x2d, weight)
            ctx.input_shape = x.shape
            return out.view(*x.shape[:-1], outputs)

        @staticmethod
        def backward(ctx, grad):
            x2d, weight = ctx.saved_tensors
            g2d = grad.reshape(-1, grad.shape[-1])
            grad_x = grad_w = None
            if ctx.needs_input_grad[0]:
                if _input_grad_fits(weight.shape[0]) and g2d.shape[0] * weight.shape[1] >= MIN_OUTPUTS:
                    grad_x = mm_bf16(g2d, weight)
                else:
                    grad_x = g2d.mm(weight)
                grad_x = grad_x.view(ctx.input_shape)
            if ctx.needs_input_grad[1]:
                grad_w = g2d.t().mm(x2d)
            return grad_x, grad_w

    return ExactBf16Linear


def _replace(model) -> list:
    try:
        import torch
    except ImportError:
        return []
    function = _function()
    changed = []
    for module in model.modules():
        if not isinstance(module, torch.nn.Linear) or module.bias is not None or forward_replaced(module):
            continue
        weight = module.weight
        if weight.dtype != torch.bfloat16 or weight.device.type != "cpu":
            continue
        if not (_forward_fits(module.in_features) or _input_grad_fits(module.out_features)):
            continue
        if not _same_as_torch(module.in_features, module.out_features, function):
            continue
        replace_forward(module, _forward(module, function))
        changed.append(module)
    return changed


def _forward(module, function):
    def forward(x):
        return function.apply(x, module.weight)

    return forward


def _same_as_torch(inner: int, outputs: int, function) -> bool:
    """Whether the replacement gives torch's bf16 ``linear`` bit for bit on a probe of this shape: forward output,
    input gradient and weight gradient (checked once per shape and process)."""
    key = (inner, outputs)
    if key not in _probed:
        _probed[key] = _probe(inner, outputs, function)
    return _probed[key]


def _probe(inner: int, outputs: int, function) -> bool:
    import torch

    generator = torch.Generator().manual_seed(0)
    rows = max(MIN_OUTPUTS // max(1, min(inner, outputs)) // 2 + 1, 64)  # 2 x rows: just enough that the fast paths run

    def spread(*shape):  # magnitudes 2^-12..2^12: any other summation order changes some roundings
        scale = torch.exp2(torch.randint(-12, 13, shape, generator=generator).float())
        return (torch.randn(*shape, generator=generator) * scale).to(torch.bfloat16)

    x, weight, upstream = spread(2, rows, inner), spread(outputs, inner), spread(2, rows, outputs)
    results = []
    for compute in (lambda a, w: torch.nn.functional.linear(a, w), function.apply):
        a, w = x.clone().requires_grad_(), weight.clone().requires_grad_()
        with torch.enable_grad():
            out = compute(a, w)
            out.backward(upstream)
        results.append((out.detach(), a.grad, w.grad))
    return all(torch.equal(mine, theirs) for mine, theirs in zip(*results))
