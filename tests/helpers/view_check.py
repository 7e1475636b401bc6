"""Read Inspect logs the way a person does: ``inspect view`` in a headless Chromium, driven by Playwright.

Used by tests/evals/test_viewer_browser.py (what the viewer shows for rollout and eval logs) and
scripts/screenshot_rollouts.py (the README's picture of a rollout sample): both run
``check_rollout_log``, so the picture comes from the code path the test checks. The browser is the system's Chromium (``apt-get install chromium``,
scripts/install_system_deps.sh) launched through PyPI's ``playwright`` (the ``dev`` extra) with
``executable_path``: Playwright's own browser download is never used. Test tooling: nothing in the packages imports
it; playwright is imported only when a page is opened.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

# no sandbox (root in CI containers), no GPU, nothing fetched from the network in the background
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BROWSER_NAMES = ("chromium", "chromium-browser")
# generous bounds for a loaded machine: every wait polls and returns as soon as the page is there
START_TIMEOUT_S = 120.0
PAGE_TIMEOUT_S = 120.0


def find_browser() -> str | None:
    """The system Chromium's path, or None."""
    for name in BROWSER_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def browser_problem() -> str | None:
    """Why a page cannot be opened here (no playwright package, no Chromium), or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install -e '.[dev]')"
    if find_browser() is None:
        return "no chromium on PATH (apt-get install chromium, or scripts/install_system_deps.sh)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def inspect_view(log_dir: str | Path, timeout_s: float = START_TIMEOUT_S) -> Iterator[str]:
    """``inspect view --log-dir log_dir`` on a free local port; yields its URL, stops it on exit."""
    inspect = Path(sys.executable).with_name("inspect")
    command = [str(inspect if inspect.exists() else "inspect"), "view", "--log-dir", str(log_dir)]
    last_error = ""
    for _attempt in range(3):  # another process may take the free port before the viewer binds it
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        errors = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a chatty server never blocks on it
        server = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=errors
        )
        try:
            deadline = time.monotonic() + timeout_s
            while server.poll() is None and not _answers(url + "/"):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"inspect view did not answer on {url} within {timeout_s:.0f} s")
                time.sleep(0.5)
            if server.poll() is None:
                yield url
                return
        finally:
            if server.poll() is None:
                server.terminate()
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
            errors.seek(0)
            last_error = errors.read()
            errors.close()
    raise RuntimeError(f"inspect view exited before answering: {last_error[-2000:]}")


@contextlib.contextmanager
def browser_page(width: int = 1400, height: int = 1000) -> Iterator:
    """A Playwright page in the system Chromium (headless)."""
    from playwright.sync_api import sync_playwright

    executable = find_browser()
    if executable is None:
        raise RuntimeError(browser_problem())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            yield page
        finally:
            browser.close()


def visible_text(page) -> str:
    """The page's rendered text, whitespace collapsed (what assertions compare against)."""
    return " ".join(page.inner_text("body").split())


def shows(body: str, text: str) -> bool:
    """Whether ``text`` is in the visible ``body``, whitespace collapsed and case folded (labels are often
    styled upper case, and ``inner_text`` returns them as rendered)."""
    return " ".join(text.split()).casefold() in body.casefold()


def wait_for_text(page, *texts: str, timeout_s: float = PAGE_TIMEOUT_S) -> str:
    """Poll until every text is on screen (``shows``); the visible text, or AssertionError naming what is missing."""
    deadline = time.monotonic() + timeout_s
    while True:
        body = visible_text(page)
        missing = [text for text in texts if not shows(body, text)]
        if not missing:
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"not on screen after {timeout_s:.0f} s: {missing!r}; the page shows: {body[:3000]!r}")
        time.sleep(0.5)


def open_log(page, base_url: str, log_name: str, *texts: str) -> str:
    """Open one log's sample list and wait for ``texts``."""
    page.goto(f"{base_url}/#/logs/{log_name}")
    return wait_for_text(page, *texts)


def open_sample(page, sample_id: str, epoch: int = 1) -> str:
    """Click a sample's row in the open sample list (rows run by id, then epoch) and wait for its page."""
    page.get_by_text(sample_id, exact=True).nth(epoch - 1).click()
    return wait_for_text(page, f"Sample {sample_id} (Epoch {epoch})")


def open_tab(page, name: str, *texts: str) -> str:
    """Click a sample page's tab (Transcript, Messages, Scoring, ...) and wait for ``texts``."""
    page.get_by_role("tab", name=name).first.click()
    return wait_for_text(page, *texts)


def shows_nan(body: str) -> bool:
    """Whether a number rendered as NaN (``NaN days NaN hr``, or a styled ``NAN``)."""
    return re.search(r"\bnan\b", body, re.IGNORECASE) is not None


def plain_fragment(text: str, min_length: int = 6) -> str:
    """The longest run of plain characters on one line of ``text``, list markers dropped: a piece of a
    completion that reads the same on a page that renders markdown or math.

    >>> plain_fragment("Let me see: 2 + 3 = 5\\nANSWER: 5")
    'Let me see: 2 + 3 = 5'
    >>> plain_fragment("1. Take $x$ away\\n2. **All done now**")
    'All done now'
    """
    runs = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:\d+[.)]|[-+*>#]+)\s+", "", line)  # a list item or quote: its marker is not text
        runs += [" ".join(run.split()) for run in re.findall(r"[A-Za-z0-9 ,.:;?!'+=-]+", line)]
    best = max(runs, key=len, default="").strip(" ,.:;")
    if len(best) < min_length:
        raise ValueError(f"no plain run of {min_length}+ characters in {text!r}")
    return best


class Screen:
    """One page, every text it showed (for the NaN check) and, given a directory, a screenshot of each."""

    def __init__(self, page, name: str, shots: Path | None = None, full_page: bool = True) -> None:
        self.page, self.name, self.shots, self.full_page = page, name, shots, full_page
        self.seen: list[tuple[str, str]] = []

    def saw(self, text: str, label: str) -> str:
        self.seen.append((label, text))
        if self.shots is not None:
            self.shots.mkdir(parents=True, exist_ok=True)
            path = self.shots / f"{self.name}-{len(self.seen):02d}-{label}.png"
            self.page.screenshot(path=str(path), full_page=self.full_page)
        return text

    def assert_no_nan(self) -> None:
        shown = [label for label, text in self.seen if shows_nan(text)]
        assert not shown, f"'NaN' on screen in {shown}"


def check_rollout_log(screen: Screen, url: str, path: Path, instruction: str):
    """A rollout log's page and one sample's tabs, against what the log holds: the rows lead with their
    problems (not ``instruction``, which every prompt shares; a page 1000 pixels high shows the first two
    groups' rows), the header names the steps and policy, the
    results label the group mean and pass@G, and a sample with an extracted answer shows its completion
    (Transcript, Messages, with the full prompt), the answer and each reward's explanation (Scoring)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    # the problems of the first two groups: the list runs by sample id and renders only the rows in view
    firsts = sorted({str(s.id): s.input for s in log.samples}.items())[:2]
    questions = list(dict.fromkeys(question for _, question in firsts))
    args = log.eval.task_args_passed
    pass_at = f"pass@{log.eval.config.epochs}"
    header = [f"steps: {args['steps']}", f"policy: {args['policy']}"]
    body = screen.saw(open_log(screen.page, url, path.name, *questions, "mean", pass_at, *header), "list")
    assert not shows(body, instruction), "the sample list shows the shared instruction, not the problems"
    sample = next(
        (s for s in sorted(log.samples, key=lambda s: s.epoch) if s.scores["train_correctness"].answer is not None),
        None,
    )
    assert sample is not None, f"no completion in {path} states an answer: nothing to check on screen"
    paid, fmt = sample.scores["train_correctness"], sample.scores["train_format"]
    fragment = plain_fragment(sample.output.completion)
    screen.saw(open_sample(screen.page, str(sample.id), sample.epoch), "sample")
    screen.saw(wait_for_text(screen.page, fragment, paid.explanation, fmt.explanation), "transcript")
    screen.saw(open_tab(screen.page, "Messages", instruction, sample.input, fragment), "messages")
    scoring = screen.saw(open_tab(screen.page, "Scoring", "train_correctness", paid.explanation), "scoring")
    assert shows(scoring, f"train_correctness {paid.answer}"), "the extracted answer is not next to its score"
    assert shows(scoring, f"train_format {fmt.answer}") and shows(scoring, fmt.explanation)
    return sample
