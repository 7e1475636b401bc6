"""What tests share besides fixtures (those are in tests/conftest.py): paths, the sandbox leftover check
(``sandbox``), tiny real training runs (``training``), a CPU vLLM server (``vllm_server``), rollout logs
(``rollouts``), the GPU recipes' model shapes (``model_shapes``), and an Inspect scorer file tests load by path
(``no_boxed_scorer.py``)."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# the installed top-level packages, in the direction of their imports (each imports only those before it)
SOURCE_PACKAGES = ("rewards", "records", "problems", "cpu", "python_tool", "inspect_tasks", "evals", "train")
BIN = Path(sys.executable).parent  # this environment's console scripts (inspect, accelerate)
MODEL = REPO / "models" / "smollm2-135m-instruct"
CPU_CONFIG = str(REPO / "configs" / "cpu-smollm2.yaml")
