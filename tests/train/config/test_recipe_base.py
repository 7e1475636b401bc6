"""configs/: a recipe's ``base:`` chain (train/config/recipe_base.py). Every shipped recipe resolves to exactly the
keys and values it spelled out before the GPU recipes shared configs/base/gpu-lora.yaml (captured then in
tests/fixtures/recipes_before_base.json: change the fixture with a recipe on purpose, never to make this pass); the
resolved values are what TRL parses and what ``--help`` shows; a missing, cyclic or malformed base is refused naming
the file and the key."""

import json
from pathlib import Path

import pytest

from tests.helpers import REPO
from train.config import ConfigError, parse_config
from train.config.cli_help import project_help
from train.config.recipe_base import resolve_recipe

BEFORE = json.loads((REPO / "tests" / "fixtures" / "recipes_before_base.json").read_text())
RECIPES = sorted((REPO / "configs").glob("*.yaml"))


def test_the_fixture_holds_every_recipe():
    assert sorted(BEFORE) == [f"configs/{p.name}" for p in RECIPES]


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_a_recipe_resolves_to_the_values_it_had(path: Path):
    assert resolve_recipe(path) == BEFORE[f"configs/{path.name}"]


def test_the_gpu_recipes_extend_one_base_and_repeat_none_of_it():
    import yaml

    base = yaml.safe_load((REPO / "configs" / "base" / "gpu-lora.yaml").read_text())
    for path in RECIPES:
        own = yaml.safe_load(path.read_text())
        if path.name.startswith("qwen"):
            assert own["base"] == "base/gpu-lora.yaml", path.name
            repeated = {k for k, v in own.items() if k in base and base[k] == v}
            assert not repeated, f"{path.name} repeats the base's {sorted(repeated)}"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_the_recipes_own_keys_win_and_a_list_is_replaced_whole(tmp_path):
    write(tmp_path / "root.yaml", "lora_r: 8\nlora_target_modules: [q_proj, v_proj]\nseed: 1\n")
    write(tmp_path / "mid.yaml", "base: root.yaml\nlora_r: 16\n")
    (tmp_path / "sub").mkdir()
    leaf = write(tmp_path / "sub" / "leaf.yaml", "base: ../mid.yaml\nlora_target_modules: [o_proj]\n")
    assert resolve_recipe(leaf) == {"lora_r": 16, "lora_target_modules": ["o_proj"], "seed": 1}


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"a.yaml": "base: gone.yaml\n"}, r"a.yaml: `base: gone.yaml` does not exist"),
        (
            {"a.yaml": "base: b.yaml\n", "b.yaml": "base: a.yaml\n"},
            r"b.yaml: `base: a.yaml` makes a cycle of bases \(\S*a.yaml -> \S*b.yaml -> \S*a.yaml\)",
        ),
        ({"a.yaml": "base: a.yaml\nseed: 1\n"}, r"a.yaml: `base: a.yaml` makes a cycle of bases"),
        ({"a.yaml": "base: [b.yaml]\n"}, r"a.yaml: `base:` must name a YAML file"),
        ({"a.yaml": "base: b.yaml\n", "b.yaml": "- a list\n"}, r"b.yaml: a config must be a YAML mapping"),
    ],
)
def test_a_bad_base_is_refused_naming_the_file_and_the_key(tmp_path, files, message):
    for name, text in files.items():
        write(tmp_path / name, text)
    with pytest.raises(ConfigError, match=message):
        resolve_recipe(tmp_path / "a.yaml")


def test_training_parses_the_resolved_values_and_the_command_line_still_wins(tmp_path):
    recipe = write(
        tmp_path / "mine.yaml",
        f"base: {REPO / 'configs' / 'cpu-smollm2.yaml'}\nlearning_rate: 1.0e-4\noutput_dir: {tmp_path / 'run'}\n",
    )
    script_args, training_args, model_args = parse_config(["--config", str(recipe), "--max_steps", "3"])
    assert (training_args.learning_rate, training_args.max_steps) == (1.0e-4, 3)  # the recipe's, the command line's
    assert (model_args.lora_r, script_args.num_shots, training_args.num_generations) == (16, 1, 8)  # the base's
    with pytest.raises(ConfigError, match=r"does not exist"):
        parse_config(["--config", str(write(tmp_path / "bad.yaml", "base: nowhere.yaml\n"))])


def test_help_shows_the_resolved_values():
    page = project_help("configs/qwen2.5-3b-qlora-vllm.yaml")
    rows = {line.split()[0]: line for line in page.splitlines() if line.startswith("  --")}
    assert rows["--model_name_or_path"].endswith("[configs/qwen2.5-3b-qlora-vllm.yaml: 'Qwen/Qwen2.5-3B-Instruct']")
    assert rows["--lora_r"].endswith("[configs/qwen2.5-3b-qlora-vllm.yaml: 16]")  # from the base
    assert rows["--dataset"].endswith("[configs/qwen2.5-3b-qlora-vllm.yaml: 'gsm8k']")
