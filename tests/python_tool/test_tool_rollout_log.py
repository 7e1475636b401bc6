"""Tool rollouts in the rollout log as Inspect writes an agent's turns (assistant tool_calls, ChatMessageTool,
ModelEvent + ToolEvent), and the audit's re-scoring with the eval scorer agrees with what training paid."""

import pytest
from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

from evals.log_stats.rollout_audit import audit_logs
from tests.helpers.tool_rollouts import tool_batch
from train.artifacts.rollout_log import RolloutRecorder

pytestmark = pytest.mark.usefixtures("needs_sandbox")


@pytest.fixture(scope="module")
def tool_log(tmp_path_factory):
    directory = tmp_path_factory.mktemp("run")
    batch = tool_batch()
    recorder = RolloutRecorder(directory / "rollouts", every_steps=1, num_generations=len(batch), metadata={})
    recorder.add(batch)
    (path,) = [recorder.flush()]
    return path, batch


def test_tool_calls_and_results_are_messages_and_events(tool_log):
    path, _ = tool_log
    samples = sorted(read_eval_log(str(path)).samples, key=lambda s: s.epoch)
    first = samples[0]
    turns = first.messages[-3:]
    assert isinstance(turns[0], ChatMessageAssistant) and turns[0].tool_calls[0].function == "python"
    assert turns[0].tool_calls[0].arguments == {"code": "print(17 * 23)"}
    assert isinstance(turns[1], ChatMessageTool) and turns[1].text == "391\n"
    assert turns[1].tool_call_id == turns[0].tool_calls[0].id
    assert turns[2].text.endswith("ANSWER: 391") and first.output.completion.endswith("ANSWER: 391")
    kinds = [type(e).__name__ for e in first.events if isinstance(e, (ModelEvent, ToolEvent))]
    assert kinds == ["ModelEvent", "ToolEvent", "ModelEvent"]
    (tool_event,) = [e for e in first.events if isinstance(e, ToolEvent)]
    assert tool_event.result == "391\n" and tool_event.arguments == {"code": "print(17 * 23)"}
    assert first.metadata["tool_calls"] == 1 and "tool_calls" not in samples[2].metadata  # no call, one reply
    # the prompt's worked example keeps its call and result too
    assert any(isinstance(m, ChatMessageTool) and m.text == "3\n" for m in first.messages[:-3])


def test_training_paid_only_the_policys_own_answers(tool_log):
    _, batch = tool_log
    assert [r.rewards["correctness"] for r in batch] == [1.0, 0.0, 1.0, 0.0]


def test_the_audit_rescores_tool_rollouts_as_training_paid_them(tool_log):
    path, _ = tool_log
    total = audit_logs([path]).total
    assert (total.compared, total.paid, total.paid_rejected, total.unpaid_accepted) == (4, 2, 0, 0)
