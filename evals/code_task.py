"""Code problems scored by running their unit tests in sandboxes: the reward training optimizes.

    inspect eval evals/code_task.py@code_verified --model hf/models/smollm2-135m-instruct -M do_sample=false
    inspect eval evals/code_task.py@code_verified -T path=my_problems.jsonl --model vllm/Qwen/Qwen2.5-Coder-1.5B-Instruct
    inspect eval evals/code_task.py@code_verified -T tools=true --model openai/gpt-4o-mini   # agentic: python tool in bwrap
    inspect score LOG --scorer evals/verify.py@unit_test_scorer --action append --model none/none

Default data: the 28 bundled problems (22 function problems with HumanEval- or MBPP-style tests, 6
stdin/stdout). The target of each sample is its test spec, so ``inspect score`` re-grades old logs.
Needs bubblewrap (see docs/code-answers.md); without it scoring fails with the fix, it never runs code unsandboxed.
"""

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, GenerateConfig
from inspect_ai.solver import generate, use_tools

from evals.code_scoring import CODE_HEADLINE
from evals.task_errors import task_errors
from evals.verify import unit_test_scorer
from problems.code_data import CodeProblem, load_code_problems
from python_tool.inspect_tool import python_tool
from python_tool.session import ToolLimits
from rewards import verifier_id

DEFAULT_MAX_TOKENS = 1024
TOOL_TIMEOUT_S = 30


def record_to_sample(problem: CodeProblem) -> Sample:
    """A CodeProblem as a Sample: the training prompt as input, the test spec (JSON) as target."""
    messages = [ChatMessageUser(content=m["content"]) for m in problem.messages()]
    return Sample(
        input=messages,
        target=problem.tests,
        id=problem.id,
        metadata={"entry_point": problem.entry_point, "kind": "function" if problem.entry_point else "stdin/stdout"},
    )


@task
def code_verified(
    path: str | None = None, limit: int | None = None, max_tokens: int = DEFAULT_MAX_TOKENS, tools: bool = False
) -> Task:
    """The bundled code problems (or ``path``), unit-test-scored; ``tools=true`` lets the model run Python
    in the ``bwrap`` sandbox before answering, with the training tool (``python_tool/session.py``)."""
    with task_errors("code_verified"):  # one message and exit 1 on the command line, not a traceback
        samples = [record_to_sample(problem) for problem in load_code_problems(path, limit)]
    limits = ToolLimits(timeout_s=TOOL_TIMEOUT_S)  # the training tool (python_tool/session.py), longer per call
    solver = [use_tools(python_tool(limits)), generate()] if tools else [generate()]
    return Task(
        dataset=MemoryDataset(samples, name="code_problems" if path is None else path),
        solver=solver,
        scorer=unit_test_scorer(),
        sandbox="bwrap" if tools else None,
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        headline_metric=CODE_HEADLINE,
        metadata={"verifier": verifier_id(), "tools": tools},
    )
