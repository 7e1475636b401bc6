"""The names users had before the modules moved (issue #30) still work: the commands' files, the Inspect task and
scorer files named by path, and the Inspect registry names."""

import pytest
from inspect_ai._util.registry import registry_lookup

from tests.helpers import REPO

# paths a user types: commands, task files, the scorer file
OLD_PATHS = [
    "train/grpo.py",
    "scripts/check_gpu.py",
    "scripts/demo.py",
    "evals/math_task.py",
    "evals/code_task.py",
    "evals/verify.py",
]

OLD_REGISTRY_NAMES = [
    ("scorer", "verigrpo/math_verifier"),
    ("scorer", "verigrpo/unit_test_scorer"),
    ("metric", "verigrpo/group_mean"),
    ("metric", "verigrpo/pass_at_G"),
    ("sandboxenv", "verigrpo/bwrap"),
    ("modelapi", "verigrpo/verigrpo"),
    ("modelapi", "verigrpo/verigrpo-policy"),
]


@pytest.mark.parametrize("path", OLD_PATHS)
def test_an_old_path_is_still_there(path):
    assert (REPO / path).is_file()


@pytest.mark.parametrize(("kind", "name"), OLD_REGISTRY_NAMES)
def test_an_old_registry_name_still_resolves(kind, name):
    assert registry_lookup(kind, name) is not None


def test_the_scorer_file_still_defines_its_scorers():
    """``inspect score LOG --scorer evals/verify.py@math_verifier``: Inspect finds the name among the file's
    decorated functions, then in the registry under the unqualified name."""
    import evals.verify  # noqa: F401 - registers the file's scorers

    assert registry_lookup("scorer", "math_verifier") is not None
    assert registry_lookup("scorer", "unit_test_scorer") is not None


@pytest.mark.parametrize("value", ["problems.domains:MATH", "problems.domains:CODE"])
def test_an_install_made_before_the_rows_moved_still_loads_them(value):
    """An install's entry points name the built-in rows where pyproject.toml put them at install time
    (``problems.domains:MATH``) until it is reinstalled: they load the rows of problems/math_domain.py, code_domain.py."""
    from importlib.metadata import EntryPoint

    from problems import domains

    name = value.rpartition(":")[2].lower()
    assert domains._load(EntryPoint(name, value, domains.ENTRY_POINT_GROUP)) is domains.DOMAINS[name]
