"""One tool, two adapters: a fixed transcript of python calls gives byte-identical results through TRL's environment
(python_tool/trl_environment.py) and Inspect's tool in the bwrap sandbox (python_tool/inspect_tool.py), including the limits' texts."""

import asyncio

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate, use_tools

from python_tool.inspect_tool import python_tool
from python_tool.session import ToolLimits
from python_tool.trl_environment import PythonToolEnvironment

pytestmark = pytest.mark.usefixtures("needs_sandbox")

# 5 s: a loaded box starts python slowly; calls meant to finish must not time out
LIMITS = ToolLimits(timeout_s=5.0, memory_mb=256, output_chars=120, max_calls=6)
TRANSCRIPT = [
    "print(6 * 7)",
    "import sys\nprint('partial')\nsys.stderr.write('oops\\n')\nsys.exit(3)",
    "print('x' * 500)",
    "open('note.txt', 'w').write('kept between calls')",
    "print(open('note.txt').read())\nprint('ANSWER: 7')",
    "while True:\n    pass",
    "print('this seventh call is over the limit')",
]


def trl_results() -> list[str]:
    environment = PythonToolEnvironment(LIMITS)
    environment.reset(prompt=[], answer="42")

    async def run():
        return [await environment.python(code=code) for code in TRANSCRIPT]

    return asyncio.run(run())


def inspect_results(tmp_path) -> list[str]:
    outputs = [ModelOutput.for_tool_call("mockllm/model", "python", {"code": code}) for code in TRANSCRIPT]
    outputs.append(ModelOutput.from_content("mockllm/model", "ANSWER: 42"))
    for output in outputs:  # with usage, mockllm counts no tokens itself (which would download a tokenizer)
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    task = Task(
        dataset=[Sample(input="What is 6 * 7?", target="42")],
        solver=[use_tools(python_tool(LIMITS)), generate()],
        sandbox="bwrap",
    )
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return [message.text for message in log.samples[0].messages if message.role == "tool"]


def test_a_fixed_transcript_gives_the_same_bytes_through_both_adapters(tmp_path):
    trl = trl_results()
    assert inspect_results(tmp_path) == trl
    # and what the transcript exercises is really there
    assert trl[0] == "42\n"
    assert trl[1] == "partial\noops\n[exit status 3]"
    assert trl[2].endswith("\n[... 381 more characters cut]")
    assert trl[4] == "kept between calls\nANSWER: 7\n"
    assert trl[5] == "[killed: time limit of 5 s]"
    assert trl[6].startswith("[call limit: 6 calls")
