"""``inspect_task`` in a config (train/config/inspect_task.py): the task replaces the config's dataset and rewards
for the run and becomes the row the plan resolves; the start-up line says what it replaced; naming a dataset beside
it on the command line, rewards that are not the task's, or held-out evals without held-out samples are refused
before any model loads. No weights: the plan stops short of the model."""

import dataclasses
import re
from types import SimpleNamespace

import pytest

from inspect_tasks.loading import TaskError
from problems.domains import DOMAINS
from tests.helpers import CPU_CONFIG, REPO
from train.config import ConfigError, ScriptArguments, parse_config, resolve_run
from train.config.inspect_task import bridge
from train.config.recipe_base import resolve_recipe

TASKS = REPO / "tests" / "fixtures" / "inspect_tasks" / "tasks.py"
MARBLES = f"{TASKS}@marbles"


def plan_for(*overrides: str):
    return resolve_run(*parse_config(["--config", CPU_CONFIG, "--inspect_task", MARBLES, *overrides]))


def test_the_task_replaces_the_configs_dataset_and_rewards(capsys):
    plan = plan_for()
    assert plan.domain is DOMAINS["inspect_task"] and plan.domain.sources == (MARBLES,)
    assert plan.script_args.dataset == MARBLES and plan.script_args.num_shots == 0
    assert plan.reward_names == ("last_line_answer",) and plan.training_args.reward_weights is None
    right = [[{"role": "assistant", "content": "ANSWER: 2"}]]
    (reward,) = plan.reward_funcs
    assert reward(right * 2, id=["jar-1-1", "jar-2-2"]) == [1.0, 0.0]
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[verigrpo] inspect task")]
    assert line == (
        f"[verigrpo] inspect task {MARBLES} (marbles): 9 samples train, 0 held out by id; prompts: its solver chain "
        "(system_message -> prompt_template -> generate) up to its first generate(); rewards: last_line_answer x 1, "
        "from its scorers (last_line_answer) after the rest of the chain; replaces the config's dataset "
        "'arithmetic' and reward_funcs ['correctness', 'format']"
    )
    assert [row.id for row in plan.domain.load(MARBLES, split="train")] == list(plan.inspect_task.task.samples)


def test_naming_the_tasks_rewards_keeps_their_weights():
    spec = f"{TASKS}@two_scorers"
    plan = resolve_run(
        *parse_config(
            ["--config", CPU_CONFIG, "--inspect_task", spec, "--reward_funcs", "includes", "match"]
            + ["--reward_weights", "0.5", "1.0"]
        )  # fmt: skip
    )
    assert plan.reward_names == ("includes", "match") and plan.training_args.reward_weights == [0.5, 1.0]
    with pytest.raises(ConfigError, match=r"reward_funcs \['format'\] are not rewards of the Inspect task"):
        resolve_run(
            *parse_config(["--config", CPU_CONFIG, "--inspect_task", spec, "--reward_funcs", "match", "format"])
        )


def test_a_dataset_beside_the_task_on_the_command_line_is_refused():
    for option in (["--dataset", "gsm8k"], ["--dataset_path=x.jsonl"]):
        with pytest.raises(ConfigError, match=r"--inspect_task and --dataset.* are both on the command line"):
            parse_config(["--config", CPU_CONFIG, *option, "--inspect_task", MARBLES])


def test_held_out_evals_need_held_out_samples():
    with pytest.raises(ConfigError, match=r"has no held-out samples: set inspect_held_out"):
        plan_for("--eval_strategy", "steps", "--eval_steps", "1")
    plan = plan_for("--eval_strategy", "steps", "--eval_steps", "1", "--inspect_held_out", "0.25")
    held = [row.id for row in plan.domain.load(MARBLES, split="test")]
    trained = [row.id for row in plan.domain.load(MARBLES, split="train")]
    assert len(held) == 2 and len(trained) == 7 and not set(held) & set(trained)
    assert plan.inspect_task.record["held_out_ids"] == held
    task = plan.domain.eval_task_factory(**plan.domain.held_out(plan.script_args, None, 32))
    assert [str(s.id) for s in task.dataset] == held and task.config.temperature == 0.0
    assert task.config.max_tokens == 32 and task.scorer == plan.inspect_task.task.task.scorer  # the task's own


def test_a_task_that_cannot_train_stops_the_plan():
    with pytest.raises(TaskError, match=re.escape("solver 'self_critique' calls a model itself")):
        resolve_run(*parse_config(["--config", CPU_CONFIG, "--inspect_task", f"{TASKS}@critique"]))


@pytest.mark.parametrize(
    "recipe", ["qwen2.5-1.5b-qlora-vllm.yaml", "qwen2.5-1.5b-qlora.yaml", "qwen2.5-3b-qlora-vllm.yaml"]
)
def test_a_gpu_recipe_takes_the_same_key(recipe):
    """A GPU recipe (GSM8K, correctness + format weighed 1 and 0, held-out evals on) on a task: its data and rewards
    are the task's, its held-out evals the task's held-out ids. Checked where it is decided (GPU recipes do not parse
    on a machine without a GPU)."""
    mapping = resolve_recipe(REPO / "configs" / recipe)
    keys = {f.name for f in dataclasses.fields(ScriptArguments)}
    script = ScriptArguments(
        **{k: v for k, v in mapping.items() if k in keys}, inspect_task=MARBLES, inspect_held_out=2
    )
    training = SimpleNamespace(reward_weights=mapping["reward_weights"])
    row = bridge(script, training, main_process=False)
    assert (mapping["dataset"], mapping["eval_strategy"]) == ("gsm8k", "steps")
    assert (script.dataset, script.reward_funcs, training.reward_weights) == (MARBLES, ["last_line_answer"], None)
    assert len(row.split[1]) == 2 and row.domain.held_out(script, None, 64) == {"limit": None, "max_tokens": 64}
