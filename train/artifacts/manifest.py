"""run.json: what a checkpoint needs to be matched to its config, code and verifier.

Written into the output directory and into every ``checkpoint-N`` folder, next to the adapter
and tokenizer. ``verifier_fingerprint`` is the same value the eval logs record. It is read back by
``records/run_manifest.py`` (the one reader, importable without the trainer). The trainer callback that writes it
at each save is ``train/artifacts/manifest_callback.py`` (it needs transformers; this module does not).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from importlib import metadata
from pathlib import Path

from records.run_manifest import RUN_JSON
from rewards import DEFAULT_ANSWER_FORMAT, verifier_id

PACKAGES = ("verigrpo", "torch", "transformers", "trl", "peft", "accelerate", "datasets", "bitsandbytes", "sympy")


def package_versions() -> dict[str, str | None]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


REPO = Path(__file__).resolve().parent.parent


def git_commit(repo: Path = REPO) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, timeout=10)
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def _plain(obj):
    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)


def build_manifest(script_args, training_args, model_args) -> dict:
    return {
        "config": {
            "script": _plain(script_args),
            "training": _plain(training_args.to_dict()),
            "model": _plain(model_args),
        },
        "packages": package_versions(),
        "git_commit": git_commit(),
        **verifier_id(script_args.think, script_args.answer_format),
    }


def write_manifest(manifest: dict, directory: str | Path, step: int | None = None) -> Path:
    """run.json and, next to it, README.md: the model card with the run's facts."""
    path = Path(directory) / RUN_JSON
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**manifest, "global_step": step}, indent=2, sort_keys=True))
    (path.parent / "README.md").write_text(model_card(manifest, step))
    return path


def _base_model_line(base: str | None) -> str:
    """The base model as a reader can find it: a Hub link for a Hub id, the path (and its source) for a local one.

    TRL's generated card leaves a local base out ("fine-tuned version of [None](https://huggingface.co/None)").
    """
    if not base:
        return "an unrecorded base model"
    if not Path(base).is_dir():
        return f"[{base}](https://huggingface.co/{base})"
    source = Path(base, "verigrpo_source.json")  # written by scripts/prepare_cpu_model.py
    origin = ""
    if source.is_file():
        facts = json.loads(source.read_text())
        origin = f" (converted from {facts.get('gguf', '?')}, package {facts.get('package', '?')})"
    return f"the local checkpoint `{base}`{origin}"


def model_card(manifest: dict, step: int | None) -> str:
    """A model card written from run.json, replacing TRL's (which has no base model for a local path)."""
    script, training, model = (manifest["config"][k] for k in ("script", "training", "model"))
    quant = "4-bit (bitsandbytes nf4)" if model.get("load_in_4bit") else "8-bit" if model.get("load_in_8bit") else ""
    adapter = (
        f"LoRA adapter (r={model.get('lora_r')}, alpha={model.get('lora_alpha')})" if model.get("use_peft") else ""
    )
    trained = " on a ".join(part for part in (adapter or "full fine-tune", f"{quant} base" if quant else "") if part)
    weights = training.get("reward_weights")
    rewards = ", ".join(
        f"{name} x {w:g}" if weights else name
        for name, w in zip(script.get("reward_funcs") or [], weights or [None] * len(script.get("reward_funcs") or []))
    )
    base = model.get("model_name_or_path")
    return f"""---
base_model: {base}
library_name: peft
tags: [grpo, trl, verigrpo]
---

# {Path(training.get("output_dir") or "model").name}

A fine-tuned version of {_base_model_line(base)}, trained with GRPO (TRL) by verigrpo: {trained}.

| | |
|---|---|
| steps | {step} (max_steps {training.get("max_steps")}) |
| dataset | {script.get("dataset")}{f" ({script.get('dataset_path')})" if script.get("dataset_path") else ""} |
| rewards | {rewards} |
| generations per prompt | {training.get("num_generations")}, up to {training.get("max_completion_length")} tokens |
| learning rate | {training.get("learning_rate")} ({training.get("lr_scheduler_type")}) |
| seed | {training.get("seed")} |
| verifier | {manifest.get("verifier_fingerprint")} (verigrpo {manifest.get("verigrpo_version")}) |
| code | {manifest.get("git_commit")} |

Everything else is in `run.json` next to this file. Every rollout the policy was paid for is in
`rollouts/` (Inspect logs); `python scripts/audit_rollouts.py <this directory>` re-scores them.
"""


def rollout_metadata(manifest: dict) -> dict:
    """The run facts each rollout log carries: enough to match it to run.json and the verifier."""
    script, model = manifest["config"]["script"], manifest["config"]["model"]
    training = manifest["config"]["training"]
    return {
        "verigrpo_version": manifest["verigrpo_version"],
        "verifier_fingerprint": manifest["verifier_fingerprint"],
        "answer_format": script.get("answer_format", DEFAULT_ANSWER_FORMAT),
        "git_commit": manifest["git_commit"],
        "policy_model": model.get("model_name_or_path"),
        "dataset": script.get("dataset"),
        "reward_funcs": script.get("reward_funcs"),
        "reward_weights": training.get("reward_weights"),
        "num_generations": training.get("num_generations"),
        "output_dir": training.get("output_dir"),
        "packages": manifest["packages"],
        # an Inspect task's spec, args and scorers (each with the `inspect score` arguments that re-create it); the
        # split's id lists stay in run.json
        **_inspect_task(manifest),
    }


def _inspect_task(manifest: dict) -> dict:
    task = manifest.get("inspect_task")
    if not task:
        return {}
    return {"inspect_task": {k: v for k, v in task.items() if k not in ("train_ids", "held_out_ids")}}
