"""No module outside a library's seam module names one of its private (non-API) names: an upgrade breaks in one place.

Each seam module lists the names it reaches and the test that pins them (docs/testing.md). This reads the code tokens
(names, attribute names, import paths, string literals that are exactly a name; docstrings and comments may mention
them) of every tracked Python file outside tests/, and the assignments that replace a foreign object's ``forward`` or
``quant_state``."""

import ast
import io
import subprocess
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SEAMS = {  # library: (its seam module, the names only that module may use)
    "vLLM": (
        "train/vllm_seams.py",
        {
            "llm_engine", "model_executor", "driver_worker", "model_runner", "QUANTIZATION_METHODS",
            "load_general_plugins", "current_platform", "third_party", "bnb_quant_state", "bnb_shard_offsets",
            "packed_modules_mapping", "CuMemAllocator", "pointer_to_data", "is_asleep",
        },
    ),
    "transformers": ("cpu/transformers_seams.py", {"use_gqa_in_sdpa", "sdpa_attention"}),
    "bitsandbytes": ("cpu/bnb_seams.py", {"support_avx512bf16_for_cpu", "packing_format_for_cpu"}),
    "Inspect": (
        "records/inspect_seams.py",
        {"_util", "_registry", "_registry_version", "_headline", "_providers", "_log", "_startup"},
    ),
    "TRL": (
        "train/trl_seams.py",
        {"_generate_and_score_completions", "_log_completion_extra", "_load_from_checkpoint", "_init_vllm",
         "_llm_weights_sleeping", "_dist", "_log_metrics"},
    ),
    # the tool's eval turns sit below train/ and evals/, so their two private names have a seam of their own
    "Inspect and TRL (the python tool)": ("python_tool/seams.py", {"_task_state", "_get_tool_suffix_ids"}),
    # so does the task bridge (inspect_tasks/, below train/ and evals/): Inspect's loader, plan, generate, contexts
    "Inspect (the task bridge)": (
        "inspect_tasks/seams.py",
        {"_eval", "_load_task_specs", "_store", "_transcript", "_scorer", "_sandbox"},
    ),
}  # fmt: skip
SEAM_MODULES = {seam for seam, _ in SEAMS.values()}  # a seam module may reach another library seam's names too
REPLACED_ATTRIBUTES = {"forward": "cpu/bnb_seams.py", "quant_state": "cpu/bnb_seams.py"}  # assigned or deleted


def tracked_sources() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True)
    return [path for path in listed.stdout.split() if not path.startswith("tests/")]


def code_tokens(source: str) -> list[tuple[int, str]]:
    """(line, text) of every name and of every string literal that is a single identifier."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME:
            found.append((token.start[0], token.string))
        elif token.type == tokenize.STRING:
            try:
                value = ast.literal_eval(token.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str) and value.isidentifier():
                found.append((token.start[0], value))
    return found


def replaced_attributes(source: str) -> list[tuple[int, str]]:
    """(line, attribute) of each ``x.forward = ...`` / ``del x.forward`` (and the other replaced attributes)."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr in REPLACED_ATTRIBUTES:
                hits.append((target.lineno, target.attr))
    return hits


def test_the_scan_sees_what_it_looks_for():
    """The scan itself: a private name in code is found, one in a docstring or comment is not."""
    source = '"""sdpa_attention in a docstring."""\nx.llm_engine.add_lora(r)  # model_runner\ngetattr(w, "bnb_quant_state")\n'
    assert [name for _, name in code_tokens(source) if name in SEAMS["vLLM"][1] | SEAMS["transformers"][1]] == [
        "llm_engine",
        "bnb_quant_state",
    ]
    assert replaced_attributes(
        "layer.forward = f\ndel layer.forward\nlayer.weight.quant_state = s\ny = x.forward\n"
    ) == [
        (1, "forward"),
        (2, "forward"),
        (3, "quant_state"),
    ]


@pytest.mark.parametrize("library", sorted(SEAMS))
def test_only_the_seam_module_names_a_librarys_private_names(library):
    seam, names = SEAMS[library]
    assert (REPO / seam).is_file()
    outside = []
    for path in tracked_sources():
        if path in SEAM_MODULES:
            continue
        for line, name in code_tokens((REPO / path).read_text()):
            if name in names:
                outside.append(f"{path}:{line}: {name}")
    assert not outside, f"{library}'s private names outside {seam} (reach them through it): {outside}"


def test_only_the_bitsandbytes_seam_replaces_a_layers_forward_or_state():
    outside = [
        f"{path}:{line}: .{attribute} assigned or deleted"
        for path in tracked_sources()
        for line, attribute in replaced_attributes((REPO / path).read_text())
        if path != REPLACED_ATTRIBUTES[attribute]
    ]
    assert not outside, f"replace a layer's forward or quantization state through cpu/bnb_seams.py: {outside}"
