"""Real GRPO steps on CPU with the python tool, through every generation path the tool supports: transformers, the
colocated adapter engine (vLLM's CPU build) and the server engine (a real CPU vLLM server of the tool model, 4-bit).
One tiny seeded setup for all three (1 step, 1 prompt x 4 completions, 96 tokens;
tests/helpers/tool_runs.py), from the warm-started CPU tool model (scripts/prepare_tool_model.py).

Slow (each path loads the model; the vLLM one starts an engine): minutes on 2 cores. Each run's rollout log must
show the policy's own executed tool call: an assistant turn calling ``python``, then the tool message holding what
the tool really returns for that code, then the policy's own answer."""

import json

import pytest
from inspect_ai.log import read_eval_log

from python_tool.trl_environment import tool_limits
from rewards import grade
from tests.helpers.tool_runs import (
    TOOLS_CONFIG,
    executed_calls,
    prepare_tool_model,
    train_tool_run,
    warm_start_problem_ids,
)
from tests.helpers.vllm_server import VLLMServerProcess
from train.config import parse_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_sandbox")]


@pytest.mark.parametrize("path", ["transformers", "vllm", "server"])
def test_a_tool_run_executes_the_policys_own_calls_and_logs_them(tmp_path, path, request):
    if path != "transformers":
        request.getfixturevalue("needs_vllm")  # skip without vLLM's CPU build (a failure in CI)
    model = prepare_tool_model()
    if path == "server":
        # the policy's 4-bit base as vLLM quantizes it; room for a later turn: prompts up to 471 tokens + 2 x 96
        server = VLLMServerProcess(tmp_path / "server.log", four_bit=True, model=str(model), max_model_len=1024)
        try:
            server.start()
            extra = ["--use_vllm", "true", "--vllm_mode", "server", "--vllm_server_urls", server.url]
            result = train_tool_run(tmp_path / "run", *extra)
        finally:
            server.stop()
    else:
        result = train_tool_run(tmp_path / "run", *(["--use_vllm", "true"] if path == "vllm" else []))
    (step,) = [e for e in result["log_history"] if "grad_norm" in e]
    for key in (
        "tools/call_frequency",
        "tools/calls_per_rollout",
        "tools/errors_per_rollout",
        "tools/seconds_per_rollout",
    ):
        assert key in step, key
    if path != "transformers":
        assert "sampling/sampling_logp_difference/mean" in step  # the rollouts came from vLLM
    run = tmp_path / "run"
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["config"]["script"]["tools"] == ["python"]
    if path == "server":
        assert manifest["rollout_engine"]["mode"] == "server"
    (log,) = [read_eval_log(str(p)) for p in sorted((run / "rollouts").glob("*.eval"))]
    prompt = log.samples[0].messages
    assert any(m.role == "tool" and m.text == "3\n" for m in prompt)  # the worked example's call and result
    assert "python tool" in prompt[0].text
    limits = tool_limits(parse_config(["--config", TOOLS_CONFIG])[0])
    calls = executed_calls(log, limits)
    assert calls, f"no executed tool call in the policy's turns: {[s.output.completion for s in log.samples]}"
    assert not {s.id.split("@")[0] for s in log.samples} & warm_start_problem_ids()  # a problem it was not tuned on
    assert step["tools/calls_per_rollout"] > 0
    target = log.samples[0].target
    assert any(grade(call.answer, str(target)).answer is not None for call in calls), calls  # an ANSWER after a call
