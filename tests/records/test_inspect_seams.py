"""records/inspect_seams.py's ``load_hooks_quietly``: Inspect prints its hooks banner on stdout the first time a process
creates a model; after the seam loaded the hooks (capturing the banner) an eval prints none of it. In a fresh process:
Inspect loads its hooks once per process."""

import subprocess
import sys

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


def test_the_hooks_banner_is_captured_not_printed(tmp_path):
    """What the seam captured is Inspect's banner (so Inspect still prints one: else the seam has nothing to do), and
    the eval after it prints none of it."""
    code = EVAL.format(before=QUIET, log_dir=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    captured, _, rest = result.stdout.partition("\n")
    assert captured.startswith("captured: ") and "hooks enabled: 1" in captured and "verigrpo/exit_status" in captured
    assert "hooks enabled" not in rest and "inspect_ai v" not in rest, rest
