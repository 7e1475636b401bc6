"""How often the policy's first turn is a tool call TRL would run, on a tool config's own prompts (docs/tool-use.md),
and whether it then writes its own ANSWER line.

    python scripts/tool_call_rate.py [--model DIR] [--prompts 8] [--skip 0] [--samples 8] [--temperatures 0.7 1.0]
        [--num_shots 2] [--full_precision]

Loads the model, tokenizer and chat template as the training run does (train/config/tool_checks.py, the
config's quantization unless ``--full_precision``), renders
the first ``--prompts`` training prompts with the tool schema as GRPOTrainer renders them, samples
``--samples`` first turns of each per temperature (seeded) and parses each with TRL's ``parse_response``, the
parser the trainer's tool loop uses. Prints per temperature: well-formed calls, turns that contain
``<tool_call>`` but do not parse, turns that imitate a ``<tool_response>``, and plain text. Each well-formed call
is then run by the training tool (python_tool/trl_environment.py, in the sandbox) and the policy samples its next turn after the
result, as the tool loop does: how many calls ran (``python`` with a ``code`` string), how many of them exited
cleanly (exit 0, in time), how many next turns state an answer (``ANSWER:`` line or box, no hedge) and how many are right (``rewards.grade``). ``--model``: another
checkpoint (the base model, for a before/after of the warm start), loaded the same way. The problems a
warm-started model was fine-tuned on (its ``verigrpo_warm_start.json``) are left out; ``--skip`` skips the first
training problems, so the base model can be measured on the same prompts.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from problems.domains import domain_of_source  # noqa: E402
from python_tool.trl_environment import PythonToolEnvironment, tool_limits  # noqa: E402
from rewards import grade  # noqa: E402
from train.config import parse_config  # noqa: E402
from train.config.tool_checks import tool_tokenizer  # noqa: E402
from train.data.rows import load_training_problems, to_dataset  # noqa: E402


def classify(parsed: dict, text: str) -> str:
    if parsed.get("tool_calls"):
        return "call"
    if "<tool_call>" in text:
        return "unparsed <tool_call>"
    if "<tool_response>" in text:
        return "imitated <tool_response>"
    return "text"


def warm_start_problem_ids(model: Path) -> set[str]:
    """The problems a warm-started model was fine-tuned on (python_tool/warm_start.py), left out of the measure."""
    marker = model / "verigrpo_warm_start.json"
    return set(json.loads(marker.read_text())["problems"]) if marker.is_file() else set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(REPO / "configs" / "cpu-smollm2-tools.yaml"))
    parser.add_argument("--model", default=None, help="checkpoint directory (default: the config's model)")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--skip", type=int, default=0, help="training problems to skip first (the warm start's: 24)")
    parser.add_argument("--samples", type=int, default=8, help="first turns sampled per prompt and temperature")
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.7, 1.0])
    parser.add_argument("--max_new_tokens", type=int, default=48)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num_shots", type=int, default=None, help="worked examples (default: the config's)")
    parser.add_argument("--full_precision", action="store_true", help="load the weights unquantized")
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM
    from trl import get_quantization_config
    from trl.chat_template_utils import parse_response

    overrides = ["--load_in_4bit", "false"] if args.full_precision else []
    overrides += ["--model_name_or_path", args.model] if args.model else []
    overrides += ["--num_shots", str(args.num_shots)] if args.num_shots is not None else []
    script_args, training_args, model_args = parse_config(["--config", args.config, *overrides])
    tokenizer = tool_tokenizer(script_args, model_args, training_args)
    environment = PythonToolEnvironment(tool_limits(script_args))
    tools = [environment.python]  # the schema the trainer renders (the method's signature)
    model = AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path,
        dtype=getattr(torch, model_args.dtype or "float32"),
        quantization_config=get_quantization_config(model_args),
    ).eval()
    seen = warm_start_problem_ids(Path(model_args.model_name_or_path))
    domain = domain_of_source(script_args.dataset)
    problems = [p for p in load_training_problems(script_args, domain)[args.skip :] if p.id not in seen][: args.prompts]
    print(
        f"{model_args.model_name_or_path}: {len(problems)} training prompts ({len(seen)} warm-start problems left out)"
    )
    rows = to_dataset(problems, script_args.num_shots, tools=True)

    def sample(messages: list[dict], temperature: float, n: int) -> tuple[list[int], list[list[int]]]:
        prompt = tokenizer.apply_chat_template(
            messages, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
        inputs = torch.tensor([prompt])
        with torch.no_grad():
            out = model.generate(
                inputs,
                attention_mask=torch.ones_like(inputs),
                do_sample=True,
                temperature=temperature,
                top_p=1.0,
                top_k=0,
                max_new_tokens=args.max_new_tokens,
                num_return_sequences=n,
                pad_token_id=tokenizer.pad_token_id,
            )
        turns = []
        for ids in out[:, len(prompt) :].tolist():
            turns.append(ids[: ids.index(tokenizer.eos_token_id) + 1] if tokenizer.eos_token_id in ids else ids)
        return prompt, turns

    def next_turn(row: dict, parsed: dict, environment, generate) -> collections.Counter:
        """Run the first call as the tool loop does, sample the policy's next turn, grade what it wrote."""
        counts: collections.Counter = collections.Counter()
        call = parsed["tool_calls"][0]["function"]
        code = call.get("arguments", {}).get("code") if call.get("name") == "python" else None
        if not isinstance(code, str):
            return counts
        environment.reset()
        result = asyncio.run(environment.python(code=code))
        counts["ran"] += 1
        counts["clean"] += environment.session.stats.errors == 0  # exit 0, in time, output under the cap
        assistant = {
            "role": "assistant",
            "content": parsed.get("content") or "",
            "tool_calls": parsed["tool_calls"][:1],
        }
        messages = [*row["prompt"], assistant, {"role": "tool", "name": "python", "content": result}]
        text = tokenizer.decode(generate(messages), skip_special_tokens=True)
        verdict = grade(f"{assistant['content']}\n{text}", row["answer"])
        counts["answered"] += verdict.answer is not None
        counts["correct"] += verdict.correct
        return counts

    for temperature in args.temperatures:
        torch.manual_seed(args.seed)
        kinds: collections.Counter = collections.Counter()
        after: collections.Counter = collections.Counter()
        for row in rows:
            prompt, turns = sample(row["prompt"], temperature, args.samples)
            for ids in turns:
                parsed = parse_response(tokenizer, ids, prefix=prompt, tools=tools)
                kind = classify(parsed, tokenizer.decode(ids))
                kinds[kind] += 1
                if kind == "call":
                    after.update(next_turn(row, parsed, environment, lambda m, t=temperature: sample(m, t, 1)[1][0]))
        total = sum(kinds.values())
        print(
            f"temperature {temperature}: {kinds['call']}/{total} first turns are tool calls "
            f"({kinds['call'] / total:.1%}); {dict(kinds)}; prompt {len(prompt)} tokens, num_shots {script_args.num_shots}",
            flush=True,
        )
        if kinds["call"]:
            print(
                f"  after the call: {after['ran']} ran python code, {after['clean']} exited cleanly; the next turn "
                f"states an answer in {after['answered']}/{kinds['call']}, the right one in {after['correct']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
