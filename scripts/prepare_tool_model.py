"""Make the CPU tool model: the CPU model after a short SFT on the python tool's call format (the warm start).

    python scripts/prepare_tool_model.py [--base models/smollm2-135m-instruct] [--out models/smollm2-135m-instruct-tools]

SmolLM2-135M-Instruct never writes a tool call TRL can run; configs/cpu-smollm2-tools.yaml trains from this
checkpoint instead (docs/tool-use.md#the-warm-start). The transcripts come from the config's own training
problems and prompt; the SFT is ``python_tool/warm_start.py`` (TRL's SFTTrainer), seeded. Idempotent: an
existing checkpoint is kept. ``make setup`` runs it after scripts/prepare_cpu_model.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import cpu  # noqa: E402, F401 - first: its __init__ silences bitsandbytes' import-time warning (cpu/bnb_seams.py)
from problems.domains import domain_of_source  # noqa: E402
from python_tool.warm_start import MARKER, WarmStartSettings, warm_start, warm_start_config  # noqa: E402
from rewards.sandbox import sandbox_problem  # noqa: E402
from train.config import parse_config  # noqa: E402
from train.data.rows import load_training_problems  # noqa: E402

DEFAULT_BASE = Path("models/smollm2-135m-instruct")
DEFAULT_OUT = Path("models/smollm2-135m-instruct-tools")
DEFAULT_CONFIG = REPO / "configs" / "cpu-smollm2-tools.yaml"


def main() -> int:
    defaults = WarmStartSettings()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, default=DEFAULT_BASE, help="the checkpoint to fine-tune")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="the tool config whose prompt and data to use")
    parser.add_argument("--examples", type=int, default=defaults.examples, help="transcripts (training problems)")
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--batch_size", type=int, default=defaults.batch_size)
    parser.add_argument("--learning_rate", type=float, default=defaults.learning_rate)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    args = parser.parse_args()
    if (args.out / MARKER).is_file():
        print(f"{args.out} already prepared")
        return 0
    if not (args.base / "config.json").is_file():
        sys.exit(f"{args.base} is not a checkpoint (no config.json): run `python scripts/prepare_cpu_model.py` first")
    problem = sandbox_problem()  # the warm start's transcripts run the python tool in the sandbox
    if problem:
        sys.exit(
            f"error: the warm start runs the python tool in a sandbox, which cannot run here: {problem} "
            "`bash scripts/install_system_deps.sh` installs what it needs (`make setup` runs it)."
        )

    script_args, _, _ = parse_config(["--config", args.config])
    settings = WarmStartSettings(args.examples, args.epochs, args.batch_size, args.learning_rate, args.seed)
    config = warm_start_config(script_args, settings.examples)
    problems = load_training_problems(config, domain_of_source(config.dataset))  # the config's training split
    summary = warm_start(args.base, args.out, script_args, problems, settings)
    print(
        f"wrote {args.out}: {summary['examples']} transcripts, {summary['steps']} steps, "
        f"train loss {summary['train_loss']}, {summary['seconds']:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
