"""Tiny real GRPO runs on the CPU model (the config the integration tests train with, a reward with variance),
and what an adapter engine needs to be built without vLLM or a process group; a tiny architecture (config.json
only) for the checks that resolve LoRA targets before loading."""

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import rewards
from tests.helpers import CPU_CONFIG, REPO
from train.config import parse_config
from train.grpo import main


def length_parity(completions, **kwargs):
    """A test reward with variance whatever the model writes: 1.0 for an even number of characters."""
    return [float(len(rewards.common.completion_text(c)) % 2 == 0) for c in completions]


def tiny_run(output_dir: Path, *extra: str):
    script_args, training_args, model_args = parse_config(
        ["--config", CPU_CONFIG, "--output_dir", str(output_dir), "--max_steps", "2", "--save_steps", "1"]
        + ["--per_device_train_batch_size", "4", "--num_generations", "4", "--max_completion_length", "24"]
        + ["--dataset_size", "16", "--reward_funcs", "length_parity", "correctness", "format"]
        + ["--reward_weights", "1.0", "0.0", "0.0", "--temperature", "1.0", *extra]
    )
    return main(script_args, training_args, model_args)


# held-out evals at step 0 and after each step, on a few problems with short answers (train/artifacts/held_out.py)
HELD_OUT_PROBLEMS, HELD_OUT_TOKENS = 4, 16
EVALS_ON = (
    "--eval_strategy", "steps", "--eval_steps", "1", "--eval_on_start", "true",
    "--eval_problems", str(HELD_OUT_PROBLEMS), "--eval_max_tokens", str(HELD_OUT_TOKENS),
    "--per_device_eval_batch_size", "4",
)  # fmt: skip


# a subprocess run's rewards: the learnable length_parity alone (the verifier's rewards logged, weighed 0)
LENGTH_PARITY_REWARDS = [
    "--reward_funcs",
    "length_parity",
    "correctness",
    "format",
    "--reward_weights",
    "1.0",
    "0.0",
    "0.0",
]


def run_script(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    """``python <argv>`` from the repo root, this checkout first on the path, unbuffered, output captured: a run in its
    own process (a vLLM engine, an exit code and stderr the test reads)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, *argv], cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env)


def fake_accelerator(main: bool = True) -> SimpleNamespace:
    """What TRL's VLLMGeneration and the adapter engines read from an Accelerator: one process, no ZeRO, no FSDP."""
    state = SimpleNamespace(deepspeed_plugin=None, fsdp_plugin=None)
    return SimpleNamespace(state=state, process_index=0, is_main_process=main, wait_for_everyone=lambda: None)


def tiny_llama_dir(path: Path, tied: bool = False) -> Path:
    """A checkpoint directory holding only a 2-layer Llama's config.json: what the pre-load LoRA checks read
    (they build the architecture on the meta device; no weights)."""
    from transformers import LlamaConfig

    config = LlamaConfig(
        vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, tie_word_embeddings=tied,
    )  # fmt: skip
    config.save_pretrained(path)
    return path


def count_domain_lookups(monkeypatch) -> list:
    """Every later ``domain_of_source(source)`` call, wherever the name was imported, appended to the list returned:
    how often a run works out its dataset's domain (it should be once: train/config/resolved.py)."""
    import problems.domains

    asked = []
    original = problems.domains.domain_of_source

    def counting(source):
        asked.append(source)
        return original(source)

    for module in list(sys.modules.values()):  # every module that imported the name (vars: no lazy __getattr__)
        if vars(module).get("domain_of_source") is original:
            monkeypatch.setattr(module, "domain_of_source", counting)
    return asked
