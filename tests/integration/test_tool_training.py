"""Real GRPO steps on CPU with the python tool, through both generation paths the tool supports: transformers and
the colocated adapter engine (vLLM's CPU build). One tiny setup for both (1 step, 2 completions, 48 tokens).

Slow (each path loads the model; the vLLM one starts an engine): minutes on 2 cores. Whether the 135M model calls
the tool in one step is up to sampling; the tool's own behaviour, grading and logging are tested with fixed
transcripts in tests/tools/."""

import json

import pytest
from inspect_ai.log import read_eval_log

from tests.helpers import REPO
from train.config import parse_config
from train.grpo import main

TOOLS_CONFIG = str(REPO / "configs" / "cpu-smollm2-tools.yaml")
TINY = [
    "--max_steps", "1", "--save_steps", "1", "--per_device_train_batch_size", "2", "--num_generations", "2",
    "--max_completion_length", "48", "--dataset_size", "4", "--temperature", "1.0",
]  # fmt: skip

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_sandbox")]


@pytest.mark.parametrize("path", ["transformers", "vllm"])
def test_a_tool_run_trains_a_step_and_logs_its_tool_metrics(tmp_path, cpu_model, path, request):
    if path == "vllm":
        request.getfixturevalue("needs_vllm")  # skip without vLLM's CPU build (a failure in CI)
    extra = ["--use_vllm", "true"] if path == "vllm" else []
    script_args, training_args, model_args = parse_config(
        ["--config", TOOLS_CONFIG, "--output_dir", str(tmp_path / "run"), *TINY, *extra]
    )
    result = main(script_args, training_args, model_args)
    (step,) = [e for e in result["log_history"] if "grad_norm" in e]
    for key in (
        "tools/call_frequency",
        "tools/calls_per_rollout",
        "tools/errors_per_rollout",
        "tools/seconds_per_rollout",
    ):
        assert key in step, key
    if path == "vllm":
        assert "sampling/sampling_logp_difference/mean" in step  # the rollouts came from vLLM
    run = tmp_path / "run"
    assert json.loads((run / "run.json").read_text())["config"]["script"]["tools"] == ["python"]
    (log,) = [read_eval_log(str(p)) for p in sorted((run / "rollouts").glob("*.eval"))]
    prompt = log.samples[0].messages
    assert any(m.role == "tool" and m.text == "3\n" for m in prompt)  # the worked example's call and result
    assert "python tool" in prompt[0].text
