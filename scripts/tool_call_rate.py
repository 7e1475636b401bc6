"""How often the policy's first turn is a tool call TRL would run, on a tool config's own prompts (docs/tool-use.md).

    python scripts/tool_call_rate.py [--prompts 8] [--samples 8] [--temperatures 0.7 1.0] [--num_shots 2] [--full_precision]

Loads the model, tokenizer and chat template as the training run does (train/config/tool_checks.py, the
config's quantization unless ``--full_precision``), renders
the first ``--prompts`` training prompts with the tool schema as GRPOTrainer renders them, samples
``--samples`` first turns of each per temperature (seeded) and parses each with TRL's ``parse_response``, the
parser the trainer's tool loop uses. Prints per temperature: well-formed calls, turns that contain
``<tool_call>`` but do not parse, turns that imitate a ``<tool_response>``, and plain text.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def classify(parsed: dict, text: str) -> str:
    if parsed.get("tool_calls"):
        return "call"
    if "<tool_call>" in text:
        return "unparsed <tool_call>"
    if "<tool_response>" in text:
        return "imitated <tool_response>"
    return "text"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(REPO / "configs" / "cpu-smollm2-tools.yaml"))
    parser.add_argument("--prompts", type=int, default=8)
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

    from problems.python_tool import ToolLimits
    from train.config import parse_config
    from train.config.tool_checks import tool_tokenizer
    from train.data.rows import load_training_problems, to_dataset
    from train.tools import PythonToolEnvironment

    overrides = ["--load_in_4bit", "false"] if args.full_precision else []
    overrides += ["--num_shots", str(args.num_shots)] if args.num_shots is not None else []
    script_args, training_args, model_args = parse_config(["--config", args.config, *overrides])
    tokenizer = tool_tokenizer(script_args, model_args, training_args)
    tools = [PythonToolEnvironment(ToolLimits()).python]  # the schema the trainer renders (the method's signature)
    model = AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path,
        dtype=getattr(torch, model_args.dtype or "float32"),
        quantization_config=get_quantization_config(model_args),
    ).eval()
    rows = to_dataset(load_training_problems(script_args)[: args.prompts], script_args.num_shots, tools=True)
    for temperature in args.temperatures:
        torch.manual_seed(args.seed)
        kinds: collections.Counter = collections.Counter()
        for row in rows:
            prompt = tokenizer.apply_chat_template(
                row["prompt"], tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
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
                    num_return_sequences=args.samples,
                    pad_token_id=tokenizer.pad_token_id,
                )
            for ids in out[:, len(prompt) :].tolist():
                if tokenizer.eos_token_id in ids:
                    ids = ids[: ids.index(tokenizer.eos_token_id) + 1]
                parsed = parse_response(tokenizer, ids, prefix=prompt, tools=tools)
                kinds[classify(parsed, tokenizer.decode(ids))] += 1
        total = sum(kinds.values())
        print(
            f"temperature {temperature}: {kinds['call']}/{total} first turns are tool calls "
            f"({kinds['call'] / total:.1%}); {dict(kinds)}; prompt {len(prompt)} tokens, num_shots {script_args.num_shots}",
            flush=True,
        )


if __name__ == "__main__":
    main()
