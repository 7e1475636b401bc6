"""The arrows between verigrpo's modules point one way: no import circle, function-level imports included.

A circle hidden in a function (module A imports B at the top, B imports A inside a function) works until someone
moves the import up or imports B first; it also means neither module can be read alone. The graph is read from the
source (every ``import`` and ``from ... import`` anywhere in a module), not from what one run happened to import.
"""

import ast
from pathlib import Path

import pytest

from tests.helpers import REPO, SOURCE_PACKAGES

PLUGIN_DIR = ("evals", "inspect_plugin")  # installed as the top-level package `verigrpo`


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if tuple(parts[:2]) == PLUGIN_DIR:
        parts = ["verigrpo", *parts[2:]]
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for top in SOURCE_PACKAGES for p in (REPO / top).rglob("*.py")}


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports anywhere in its source. ``from pkg import sub`` counts as ``pkg.sub``
    when that is a module, else as ``pkg``; a package's own ``__init__`` run on the way is not counted."""

    def known(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name if path.name == "__init__.py" else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        found.update(t for t in map(known, targets) if t and t != name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_between_modules():
    graph = import_graph()
    found = circles(graph)
    detail = [{m: sorted(graph[m] & set(c)) for m in c} for c in found]
    assert not found, f"import circles (module -> the modules of its circle it imports): {detail}"


def test_the_engine_choice_is_a_leaf():
    """Config checks, the engines and the GPU check all ask which engine a config uses; it imports none of them."""
    assert import_graph()["train.engines.choice"] == set()


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ],
)
def test_circles_finds_what_it_should(graph, expected):
    assert circles(graph) == expected


def test_a_function_level_import_is_an_edge(tmp_path):
    """The circle round 3 hid: the enum's module imported the engines inside a function."""
    module = tmp_path / "selection.py"
    module.write_text("import os\n\ndef factory():\n    from train.engines.colocated import X\n    return X\n")
    modules = {"train.engines.selection": module, "train.engines.colocated": module}
    assert imported_modules("train.engines.selection", module, modules) == {"train.engines.colocated"}


# What train/ may take from evals/: the Inspect side only. The held-out eval runs Inspect on the policy in memory
# (checkpoint_eval, policy_model); the rollout log is an Inspect log written with Inspect's message types and
# private log classes (chat, inspect_seams). Problem data, CPU kernels and run records live in shared packages.
TRAIN_FROM_EVALS = {
    "train.artifacts.held_out": {"evals.checkpoint_eval", "evals.policy_model"},
    "train.artifacts.rollout_log": {"evals.chat", "evals.inspect_seams"},
    # the run guards read Inspect logs: held-out evals paired per problem, rollout logs re-judged (train/guards/)
    "train.guards.best_checkpoint": {"evals.log_stats.eval_pairs"},
    "train.guards.reward_hacking": {"evals.log_stats.eval_pairs", "evals.log_stats.rollout_audit"},
}


def package_of(module: str) -> str:
    top = module.split(".")[0]
    return "evals" if top == "verigrpo" else top


def test_the_packages_import_one_way():
    """rewards <- records <- problems <- cpu <- {train, evals}: each package imports only those before it, and train
    imports from evals only the Inspect modules counted in TRAIN_FROM_EVALS."""
    order = {name: i for i, name in enumerate(SOURCE_PACKAGES)}
    backwards, train_from_evals = [], {}
    for module, targets in import_graph().items():
        for target in targets:
            source, dest = package_of(module), package_of(target)
            if (source, dest) == ("train", "evals"):
                train_from_evals.setdefault(module, set()).add(target)
            elif order[dest] > order[source]:
                backwards.append(f"{module} -> {target}")
    assert not backwards, f"imports against the packages' order {SOURCE_PACKAGES}: {sorted(backwards)}"
    assert train_from_evals == TRAIN_FROM_EVALS
