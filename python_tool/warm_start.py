"""The tool-format warm start (cold-start SFT): a short supervised fine-tune that teaches a model which has never
seen a tool call the shipped call format, before GRPO trains it to use the tool.

SmolLM2-135M-Instruct, given the tool prompt, answers in plain text or imitates a ``<tool_response>`` and almost
never writes a call TRL's parser reads (docs/tool-use.md), so GRPO with the tool has no call to reward. The field's
first stage of tool-use RL is this: fine-tune on transcripts in the format, then run RL.

Each transcript is built from one problem of the tool config's own TRAINING split (never the held-out split the
evals use) in exactly the prompt GRPO trains on (the math domain's ``tool_row``: ``build_messages(question,
num_shots, tools=True)``, rendered with the tool schema TRL renders from ``python_tool/trl_environment.py``'s environment):

1. the assistant calls ``python`` with code that computes the answer (``print(7 - 3)``);
2. the tool's result is what ``python_tool/session.py`` returns for that code, run in the sandbox (and checked to
   print the reference answer);
3. the assistant writes its own final line, as ``TOOL_WORKED_EXAMPLE``'s reply does.

The rows are TRL prompt-completion rows with a ``tools`` column; ``SFTTrainer`` trains on the completion only, and
with ``assistant_only_loss`` on the assistant's tokens only: the tool result is masked, as GRPO's ``tool_mask``
masks it (``python_tool/chat_templates/chatml_tools_training.jinja`` marks the assistant turns). A full fine-tune of the
fp32 weights (no adapter to merge; the 135M model's optimizer state is ~1 GB), saved as a normal checkpoint whose
tokenizer carries ``chatml_tools.jinja``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback, set_seed

from problems.math_data import MathProblem
from problems.math_domain import MATH
from python_tool.chat_template import TEMPLATE_DIR, template_text
from python_tool.trl_environment import PythonToolEnvironment, tool_limits, tool_schemas
from rewards.math.answer_format import tool_call_turns

TRAINING_TEMPLATE = TEMPLATE_DIR / "chatml_tools_training.jinja"
MARKER = "verigrpo_warm_start.json"
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "//"}
_NUMBER = re.compile(r"\d{1,9}")  # operands of the procedural problems; names and items hold no digits


@dataclass(frozen=True)
class WarmStartSettings:
    """How much SFT: kept small (``make setup`` runs it; docs/tool-use.md#the-warm-start has its time and the call
    rates it gives): 24 transcripts of ~540 tokens, one pass, 12 steps; the loss is ~0.01 by step 6."""

    examples: int = 24  # transcripts: the first problems of the config's training split
    epochs: int = 1
    batch_size: int = 2
    learning_rate: float = 1.0e-4
    seed: int = 0


def tool_code(problem: MathProblem) -> str:
    """The program a solver would run for a procedural arithmetic problem: ``print(7 - 3)``, left to right.

    The operands are the question's numbers in order (the templates state the start value, then one operand per
    step); ``build_transcript`` checks that the program prints the reference answer."""
    operations = problem.metadata.get("operations")
    if problem.metadata.get("source") != "arithmetic" or not operations:
        raise ValueError(f"{problem.id}: the warm start needs procedural arithmetic problems (dataset: arithmetic)")
    numbers = _NUMBER.findall(problem.question)
    if len(numbers) != len(operations) + 1:
        raise ValueError(f"{problem.id}: expected {len(operations) + 1} numbers in the question, found {numbers}")
    expression = numbers[0]
    for step, (operation, operand) in enumerate(zip(operations, numbers[1:])):
        expression = f"{expression if step == 0 else f'({expression})'} {_SYMBOLS[operation]} {operand}"
    return f"print({expression})"


def build_transcript(problem: MathProblem, environment) -> list[dict]:
    """The completion: the call, the tool's real result (``environment``: a ``PythonToolEnvironment``), the answer,
    in the worked example's shape (``rewards.math.answer_format.tool_call_turns``)."""
    code = tool_code(problem)
    environment.reset()
    result = asyncio.run(environment.python(code=code))
    if result != f"{problem.answer}\n":
        raise ValueError(f"{problem.id}: {code} printed {result!r}, not the reference answer {problem.answer!r}")
    return tool_call_turns(code, result)


def warm_start_config(script_args, examples: int):
    """The tool config's data settings with ``examples`` problems of its TRAINING split (whatever split it names)."""
    if script_args.dataset != "arithmetic":
        raise ValueError(f"the warm start builds transcripts for dataset: arithmetic, not {script_args.dataset!r}")
    if not script_args.tools:
        raise ValueError("the warm start needs a config with `tools: [python]` (its prompt offers the tool)")
    return dataclasses.replace(script_args, dataset_split="train", dataset_size=examples)


def warm_start_rows(script_args, problems: list[MathProblem]) -> list[dict]:
    """SFTTrainer prompt-completion rows for ``problems`` (the first of the config's training split:
    ``warm_start_config``): ``prompt`` (the training prompt), ``completion`` (the transcript), ``tools`` (JSON
    schemas as a JSON string: TRL reads either), ``answer`` and ``id``."""
    limits = tool_limits(script_args)
    environment = PythonToolEnvironment(limits)
    tools = json.dumps(tool_schemas(limits))
    rows = []
    for problem in problems:
        row = MATH.tool_row(problem, script_args.num_shots)
        rows.append({**row, "completion": build_transcript(problem, environment), "tools": tools})
    return rows


def training_tokenizer(base: Path):
    """The base tokenizer with the training variant of chatml_tools (same text, plus ``{% generation %}`` marks)."""
    tokenizer = AutoTokenizer.from_pretrained(base)
    tokenizer.chat_template = TRAINING_TEMPLATE.read_text(encoding="utf-8")
    return tokenizer


def warm_start(
    base: Path, out: Path, script_args, problems: list[MathProblem], settings: WarmStartSettings = WarmStartSettings()
) -> dict:
    """Fine-tune ``base`` on the warm-start rows of ``problems`` (``settings.examples`` of them, loaded by the caller
    with ``warm_start_config``) and save a checkpoint at ``out`` (written whole, then renamed). Returns what it did
    (also written to ``out/verigrpo_warm_start.json``)."""
    # trl + datasets: ~5 s more once torch is in (load 13); make setup's "already prepared" path skips them
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    started = time.perf_counter()
    set_seed(settings.seed)
    print(f"warm start: building {settings.examples} transcripts (the python tool runs in the sandbox)", flush=True)
    rows = warm_start_rows(script_args, problems)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    tokenizer = training_tokenizer(base)
    with tempfile.TemporaryDirectory(prefix="verigrpo-warm-start-") as scratch:
        config = SFTConfig(
            output_dir=scratch,
            per_device_train_batch_size=settings.batch_size,
            num_train_epochs=settings.epochs,
            learning_rate=settings.learning_rate,
            lr_scheduler_type="constant",
            seed=settings.seed,
            data_seed=settings.seed,
            completion_only_loss=True,  # the prompt is not trained on
            assistant_only_loss=True,  # nor the tool's result: only what the assistant wrote
            max_length=None,
            gradient_checkpointing=False,
            use_cpu=True,
            bf16=False,
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            disable_tqdm=True,
            dataset_num_proc=None,
        )
        trainer = SFTTrainer(
            model=model, args=config, train_dataset=Dataset.from_list(rows), processing_class=tokenizer
        )
        trainer.add_callback(ProgressPrinter())
        result = trainer.train()
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    trainer.model.save_pretrained(partial, safe_serialization=True)
    saved = AutoTokenizer.from_pretrained(base)
    saved.chat_template = template_text("chatml_tools")  # the template the tool runs render and parse with
    saved.save_pretrained(partial)
    summary = {
        "base": str(base),
        "settings": dataclasses.asdict(settings),
        "examples": len(rows),
        "steps": result.global_step,
        "train_loss": round(result.training_loss, 4),
        "seconds": round(time.perf_counter() - started, 1),
        "chat_template": "python_tool/chat_templates/chatml_tools.jinja",
        "problems": [row["id"] for row in rows],
    }
    (partial / MARKER).write_text(json.dumps(summary, indent=2) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)  # only a complete checkpoint ever appears under the final name
    return summary


class ProgressPrinter(TrainerCallback):
    """One line per logged step: the SFT's loss as it goes (``make setup`` shows it)."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            print(f"warm start: step {state.global_step}/{state.max_steps} loss {logs['loss']:.4f}", flush=True)
