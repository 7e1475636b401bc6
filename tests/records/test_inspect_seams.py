"""records/inspect_seams.py's ``load_hooks_quietly``: Inspect still prints its hooks banner on stdout the first time a
process creates a model (the control), and after the seam loaded the hooks an eval prints none of it. Each case runs
in a fresh process: Inspect loads its hooks once per process."""

import subprocess
import sys

import pytest

from tests.helpers import REPO

EVAL = """
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from tests.helpers.mock_models import answering_model
{before}
(log,) = eval(Task(dataset=[Sample(input="1+1?", target="2")], scorer=match()), model=answering_model({{}}, "2"),
              display="none", log_dir={log_dir!r})
assert log.status == "success", log.error
"""
QUIET = "from records.inspect_seams import load_hooks_quietly\nprint('captured:', repr(load_hooks_quietly()))"


def run_eval(tmp_path, before: str) -> str:
    code = EVAL.format(before=before, log_dir=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.parametrize("quiet", [False, True], ids=["inspect-as-is", "hooks-loaded-quietly"])
def test_the_hooks_banner_is_captured_not_printed(tmp_path, quiet):
    printed = run_eval(tmp_path, QUIET if quiet else "")
    if not quiet:  # the control: without the seam the banner opens stdout (else the seam has nothing to do)
        assert "hooks enabled: 1" in printed and "verigrpo/exit_status" in printed, printed
        return
    captured, _, rest = printed.partition("\n")
    assert captured.startswith("captured: ") and "hooks enabled" in captured and "verigrpo/exit_status" in captured
    assert "hooks enabled" not in rest and "inspect_ai v" not in rest, rest
