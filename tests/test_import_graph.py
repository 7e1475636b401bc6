"""The arrows between verigrpo's modules point one way: no import circle, function-level imports included.

A circle hidden in a function (module A imports B at the top, B imports A inside a function) works until someone
moves the import up or imports B first; it also means neither module can be read alone. The graph is read from the
source (every ``import`` and ``from ... import`` anywhere in a module), not from what one run happened to import.
The floors, top down: scripts -> train -> evals -> (python_tool, cpu, problems, records) -> rewards. Imports between
the project's modules sit at module level; the few inside a function say why in a ``# lazy: <reason>`` comment (a
measured cost: ``--help`` without torch, ``rewards`` importing in milliseconds).
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


# the packages, bottom floor first (each imports only those before it), and the commands above them all
LAYERS = (*SOURCE_PACKAGES, "scripts")
MAX_FUNCTION_LEVEL_IMPORTS = 30
MAX_EVALS_MODULES_IN_TRAIN = 4


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for top in LAYERS for p in (REPO / top).rglob("*.py")}


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


def package_of(module: str) -> str:
    top = module.split(".")[0]
    return "evals" if top == "verigrpo" else top


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Top-level package -> the other top-level packages its modules import (anywhere in a module)."""
    packages: dict[str, set[str]] = {package_of(m): set() for m in graph}
    for module, targets in graph.items():
        packages[package_of(module)].update(package_of(t) for t in targets if package_of(t) != package_of(module))
    return packages


def test_no_import_circle_between_packages():
    """#41: the top-level packages form no circle, imports inside functions included."""
    graph = package_graph(import_graph())
    assert not circles(graph), f"circles between packages: {circles(graph)}; package -> packages: {graph}"


def test_the_packages_import_one_way():
    """Each package imports only the floors below it (LAYERS): evals nothing from train, the tool neither."""
    order = {name: i for i, name in enumerate(LAYERS)}
    backwards = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        for target in targets
        if order[package_of(target)] > order[package_of(module)]
    )
    assert not backwards, f"imports against the floors {LAYERS}: {backwards}"


def test_train_imports_few_evals_modules():
    """train/ takes from evals/ only the Inspect side it runs: the held-out eval on the policy in memory and the log
    statistics its guards read (#41: at most 4 modules)."""
    taken: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        if package_of(module) == "train":
            for target in targets:
                if package_of(target) == "evals":
                    taken.setdefault(target, set()).add(module)
    assert len(taken) <= MAX_EVALS_MODULES_IN_TRAIN, {t: sorted(m) for t, m in sorted(taken.items())}


def function_level_imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, imported module, whether a ``# lazy:`` comment explains it) for each import of a project module inside
    a function of ``path``. The comment is on the import's line or in the comment lines just above the run of
    import lines it belongs to."""
    source = path.read_text()
    lines = source.splitlines()
    tree = ast.parse(source, str(path))
    own = {*LAYERS, "verigrpo", "tests"}
    found = []

    def explained(lineno: int) -> bool:
        i = lineno - 1
        if "# lazy:" in lines[i]:
            return True
        i -= 1
        while i >= 0:
            text = lines[i].strip()
            if text.startswith("#"):
                if text.startswith("# lazy:"):
                    return True
            elif not text.startswith(("import ", "from ")) and text not in ("", ")") and not text.endswith(","):
                return False
            i -= 1
        return False

    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = ["." * node.level + (node.module or "")]
            else:
                continue
            for name in names:
                if name.startswith(".") or name.split(".")[0] in own:
                    found.append((node.lineno, name, explained(node.lineno)))
    return sorted(set(found))


def inside_functions() -> dict[str, list[tuple[int, str, bool]]]:
    paths = {p for top in LAYERS for p in (REPO / top).rglob("*.py")}
    return {str(p.relative_to(REPO)): found for p in sorted(paths) if (found := function_level_imports(p))}


def test_few_imports_between_the_projects_modules_sit_in_functions():
    """#41: at most 30 imports of the project's own modules inside functions, across packages and scripts."""
    found = inside_functions()
    count = sum(len(v) for v in found.values())
    per_file = {path: len(v) for path, v in sorted(found.items(), key=lambda kv: -len(kv[1]))}
    assert count <= MAX_FUNCTION_LEVEL_IMPORTS, f"{count} imports inside functions: {per_file}"


def test_each_import_in_a_function_says_why():
    """An import of the project's own module inside a function carries a one-line ``# lazy: <measured reason>``."""
    unexplained = [f"{path}:{line} {name}" for path, v in inside_functions().items() for line, name, ok in v if not ok]
    assert not unexplained, f"imports inside functions without a '# lazy: <reason>' comment: {unexplained}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os\n\ndef f():\n    import json\n", []),  # not the project's
        ("def f():\n    from train.grpo import main\n", [(2, "train.grpo", False)]),
        ("def f():\n    # lazy: torch is slow\n    from train.grpo import main\n", [(3, "train.grpo", True)]),
        ("def f():\n    from train.grpo import main  # lazy: torch\n", [(2, "train.grpo", True)]),
        (  # one comment for a run of imports
            "def f():\n    # lazy: torch\n    import torch\n\n    from cpu import a\n    from rewards import b\n",
            [(5, "cpu", True), (6, "rewards", True)],
        ),
        ("def f():\n    # lazy: x\n    y = 1\n    from cpu import a\n", [(4, "cpu", False)]),  # not its comment
        ("from cpu import a\n\nclass C:\n    def m(self):\n        from . import b\n", [(5, ".", False)]),
    ],
)
def test_function_level_imports_finds_what_it_should(tmp_path, source, expected):
    path = tmp_path / "module.py"
    path.write_text(source)
    assert function_level_imports(path) == expected
