"""Picture a training run's rollout sample as Inspect View shows it (the README's docs/rollout-sample.png).

    python scripts/screenshot_rollouts.py runs/demo-<time>                  # its first rollout log
    python scripts/screenshot_rollouts.py runs/x --log rollouts-step000001-000010.eval --out shot.png

Starts ``inspect view`` on ``<run>/rollouts`` and runs the browser check of tests/evals/test_viewer_browser.py
(``tests/helpers/view_check.py``'s ``check_rollout_log``: the sample list, then a sample with an extracted answer, its
Transcript, Messages and Scoring tabs) in the system Chromium, then pictures one screen of that sample's
Transcript (the model call: question and completion, then each reward's answer and explanation) as ``--out``. A page that does not
show what the log holds fails here as it fails the test. Needs the ``dev`` extra (playwright) and
``apt-get install chromium``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]  # the browser check is test tooling (tests/helpers/view_check.py), not installed

from rewards import ANSWER_INSTRUCTION  # noqa: E402
from tests.helpers import view_check  # noqa: E402

WIDTH, HEIGHT = 1100, 800  # one screen of the sample page (the model call and both scores), readable at README width


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a training output directory (holding rollouts/)")
    parser.add_argument("--log", help="the rollout log's file name (default: the first)")
    parser.add_argument("--out", type=Path, default=Path("docs/rollout-sample.png"))
    args = parser.parse_args(argv)

    logs = sorted((args.run_dir / "rollouts").glob("*.eval"))
    if args.log:
        logs = [log for log in logs if log.name == args.log]
    if not logs:
        print(f"error: no rollout log {args.log or '*.eval'} in {args.run_dir / 'rollouts'}", file=sys.stderr)
        return 2
    problem = view_check.browser_problem()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    with view_check.inspect_view(logs[0].parent) as url, view_check.browser_page(WIDTH, 1000) as page:
        screen = view_check.Screen(page, "rollout")
        sample = view_check.check_rollout_log(screen, url, logs[0], ANSWER_INSTRUCTION.split(".")[0])
        screen.assert_no_nan()
        # back to the checked sample's Transcript, one screen of it
        page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
        completion = view_check.plain_fragment(sample.output.completion)
        view_check.open_tab(page, "Transcript")
        page.reload()  # a fresh page: no focus or hover left on the tabs clicked before
        view_check.wait_for_text(page, completion, sample.scores["train_correctness"].explanation)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.out))
    print(f"{args.out} ({args.out.stat().st_size // 1024} KB): {logs[0].name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
