"""One registration per scorer, and every name a user had resolves to it: ``verigrpo/<name>`` from anywhere,
``evals/verify.py@<name>`` from the repository (Inspect's own resolution of both, and a real ``inspect score``), the
bare name a log recorded, ``from evals.verify import ...``. And evals/__init__.py's index names every module there is."""

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai._eval.loader import scorer_from_spec
from inspect_ai._util.registry import registry_info, registry_lookup
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import exact
from inspect_ai.scorer._scorer import ScorerSpec

import evals.verify
import verigrpo
from tests.helpers import BIN, REPO

SCORERS = ["math_verifier", "unit_test_scorer"]


IDENTITY = """
import evals.verify, verigrpo
from inspect_ai._util.registry import registry_find, registry_lookup
for name in ("math_verifier", "unit_test_scorer"):
    registered = getattr(verigrpo, name)
    assert getattr(evals.verify, name) is registered, name
    assert registry_lookup("scorer", f"verigrpo/{name}") is registered, name
    assert registry_lookup("scorer", name) is registered, name  # the bare name: a second key, not a second scorer
    found = {id(o) for o in registry_find(lambda info: info.type == "scorer" and info.name.endswith(name))}
    assert found == {id(registered)}, name
print("ok")
"""


def test_each_scorer_is_one_registered_object():
    """In a fresh process (Inspect re-runs a module it loads by file path, e.g. ``inspect list tasks evals/``, which
    registers its objects anew: a long test session is not a clean registry)."""
    run = subprocess.run([sys.executable, "-c", IDENTITY], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.stdout.strip() == "ok", run.stderr[-3000:]


@pytest.mark.parametrize("name", SCORERS)
def test_every_name_gives_the_registered_scorer_in_this_process(name):
    assert getattr(evals.verify, name) is getattr(verigrpo, name)
    for key in (name, f"verigrpo/{name}"):
        assert registry_info(registry_lookup("scorer", key)).name == f"verigrpo/{name}"


def test_the_project_decorates_each_scorer_once():
    """Only the plugin uses Inspect's ``@scorer``: a scorer registered in two modules would be two objects."""
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True)
    decorated = {}
    for path in listed.stdout.split():
        if path.startswith("tests/"):
            continue
        tree = ast.parse((REPO / path).read_text())
        imports_inspects = any(
            isinstance(n, ast.ImportFrom)
            and n.module == "inspect_ai.scorer"
            and any(a.name == "scorer" for a in n.names)
            for n in ast.walk(tree)
        )
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and imports_inspects:
                for d in node.decorator_list:
                    if (d.func if isinstance(d, ast.Call) else d).__dict__.get("id") == "scorer":
                        decorated.setdefault(node.name, []).append(path)
    expected = [*SCORERS, "domain_scorer", "task_scorer"]  # task_scorer: an Inspect task's chain + scorer, replayed
    assert decorated == {name: ["evals/inspect_plugin/__init__.py"] for name in expected}


@pytest.mark.parametrize(
    "spec", [f"{prefix}{name}" for name in SCORERS for prefix in ("verigrpo/", "evals/verify.py@")]
)
def test_inspect_resolves_every_spec_to_the_registered_scorer(spec, monkeypatch):
    """Inspect's own resolution (``inspect score --scorer SPEC``), from the repository root as the docs say."""
    monkeypatch.chdir(REPO)
    created = scorer_from_spec(ScorerSpec(scorer=spec), task_path=None)
    name = spec.rpartition("@")[2].rpartition("/")[2]
    assert registry_info(created).name == f"verigrpo/{name}"


def test_a_declaration_that_drifts_from_the_registered_scorer_is_refused():
    def math_verifier(think: str = "none", strict: bool = False):
        """A parameter the registered scorer does not take."""

    with pytest.raises(TypeError, match=r"evals/verify.py declares math_verifier.*verigrpo/math_verifier takes"):
        evals.verify.scorer(math_verifier)


def test_inspect_score_by_file_path(tmp_path, mock_model):
    """``inspect score LOG --scorer evals/verify.py@math_verifier`` from the repository root, as docs/evaluation.md
    says. Inspect records the name as given; it resolves to the one registered scorer again."""
    problems = [("q1", "0.5", "ANSWER: 1/2"), ("q2", "7", "ANSWER: 8")]
    dataset = MemoryDataset([Sample(input=q, target=t, id=q) for q, t, _ in problems])
    (log,) = inspect_eval(
        Task(dataset=dataset, scorer=exact()),
        model=mock_model({q: reply for q, _, reply in problems}),
        log_dir=str(tmp_path),
    )
    rescored = tmp_path / "rescored.eval"
    cmd = [BIN / "inspect", "score", log.location, "--scorer", "evals/verify.py@math_verifier"]
    cmd += ["--action", "append", "--output-file", str(rescored), "--model", "none/none"]
    run = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    new = read_eval_log(str(rescored))
    assert {s.id: s.scores["math_verifier"].value["correct"] for s in new.samples} == {"q1": "C", "q2": "I"}
    recorded = new.eval.scorers[-1].name
    assert recorded == "math_verifier" and registry_lookup("scorer", recorded) is verigrpo.math_verifier


def index_entries() -> set[str]:
    """The modules evals/__init__.py's docstring lists (``- ``name``:`` lines; a package ends in ``/``)."""
    doc = ast.get_docstring(ast.parse((REPO / "evals" / "__init__.py").read_text()))
    return set(re.findall(r"^- ``([\w/]+)``", doc, flags=re.M))


def test_the_evals_index_names_every_module_and_nothing_else():
    listed = subprocess.run(["git", "ls-files", "evals"], cwd=REPO, capture_output=True, text=True, check=True)
    modules = set()
    for path in map(Path, listed.stdout.split()):
        if path.suffix == ".py" and len(path.parts) == 2 and path.name != "__init__.py":
            modules.add(path.stem)
        elif path.suffix == ".py" and len(path.parts) == 3 and path.name == "__init__.py":
            modules.add(f"{path.parts[1]}/")
    assert index_entries() == modules


def test_verify_documents_the_registered_parameters():
    for name in SCORERS:
        assert (
            inspect.signature(getattr(verigrpo, name)).parameters.keys()
            == inspect.signature(getattr(evals.verify, name)).parameters.keys()
        )
