"""``inspect_task``: a run on an Inspect task, resolved once before anything heavy loads (``resolve_run``).

The task is loaded and checked (inspect_tasks/training_task.py: its prompts recorded, its chain and scorers
replayed on a few samples; what cannot train is refused here, exit 2), becomes the run's row of the domain table
(inspect_tasks/domain.py) and replaces the config's data and rewards: ``dataset`` becomes the task's spec (its
samples, split by id), ``reward_funcs`` the task's rewards (one per scorer, or per key of a dict value), unless the
config already names some of them (then those, with its ``reward_weights``); ``dataset_path`` and ``num_shots``
no longer apply. The start-up line says what was replaced. From there the run takes the path every domain takes.

Naming both ``--dataset`` (or ``--dataset_path``) and ``--inspect_task`` on the command line is refused when the
config is parsed (``command_line_conflict``): which one was meant cannot be guessed. A config file's ``dataset`` is
replaced without a word of refusal, since recipes set one (the GPU recipes' base sets gsm8k).
"""

from __future__ import annotations

from problems.domains import add_run_row, reward_owners
from train.config.arguments import ConfigError

REPLACED_ON_COMMAND_LINE = ("--dataset", "--dataset_path")


def command_line_conflict(argv: list[str]) -> str | None:
    """The refusal when ``argv`` names both a dataset and an Inspect task (None: it does not)."""

    def named(option: str) -> bool:
        return any(arg == option or arg.startswith(f"{option}=") for arg in argv)

    if not named("--inspect_task"):
        return None
    both = [option for option in REPLACED_ON_COMMAND_LINE if named(option)]
    if not both:
        return None
    return (
        f"--inspect_task and {' and '.join(both)} are both on the command line: a run trains on an Inspect task "
        "(its samples, its solver chain, its scorers) or on a dataset, not both. Drop one (a config file's dataset "
        "is replaced by --inspect_task without this refusal)"
    )


def _rewards(script_args, training_args, names: dict[str, str]) -> tuple[list[str], list[float] | None, bool]:
    """(reward_funcs, reward_weights, whether the config's reward_funcs were replaced) for the task's rewards
    ``names``: the config's own choice when it names only the task's rewards, else all of them, weight 1 each."""
    chosen = list(script_args.reward_funcs or [])
    ours = [name for name in chosen if name in names]
    others = [name for name in chosen if name not in names]
    if ours and others:
        raise ConfigError(
            f"reward_funcs {others} are not rewards of the Inspect task (its rewards: {list(names)}): with "
            "inspect_task, reward_funcs names the task's rewards only (or leave it to the task: all of them)"
        )
    if ours:
        return ours, training_args.reward_weights, False
    return list(names), None, bool(chosen)


def bridge(script_args, training_args, main_process: bool):
    """Load ``inspect_task``, add its row to the domain table and make the config's data and rewards the task's
    (in place): the task's row (inspect_tasks.domain.TaskRow: the prepared task, its row, its reward names, the
    split and run.json's section); None without ``inspect_task``. ConfigError/DatasetError (TaskError) before any
    model loads."""
    if not script_args.inspect_task:
        return None
    # lazy: Inspect and the task's own imports load only for a run that names a task (not for --help)
    from inspect_tasks.domain import prepared_row

    taken = frozenset(name for name, owner in reward_owners().items() if owner.name != "inspect_task")
    row = prepared_row(
        script_args.inspect_task,
        script_args.inspect_task_args,
        sandbox=script_args.inspect_sandbox,
        grader_model=script_args.inspect_grader_model,
        held_out=script_args.inspect_held_out,
        seed=script_args.dataset_seed,
        taken=taken,
    )
    task, domain, names = row.task, row.domain, row.reward_names
    add_run_row(domain)
    replaced = [
        f"dataset {script_args.dataset!r}" + (f" ({script_args.dataset_path})" if script_args.dataset_path else "")
    ]
    reward_funcs, weights, dropped = _rewards(script_args, training_args, names)
    if dropped:
        replaced.append(f"reward_funcs {list(script_args.reward_funcs)}")
    script_args.dataset, script_args.dataset_path, script_args.dataset_split = task.spec, None, "train"
    script_args.num_shots, script_args.reward_funcs = 0, reward_funcs
    training_args.reward_weights = weights
    if main_process:
        train_ids, held_ids = row.split
        rewards = ", ".join(f"{n} x {w:g}" for n, w in zip(reward_funcs, weights or [1.0] * len(reward_funcs)))
        sandbox = f"; each sample in the {task.sandbox} sandbox" if task.sandbox else ""
        if task.mapped_from:
            sandbox += f" (the task's {task.mapped_from}, mapped by inspect_sandbox)"
        print(
            f"[verigrpo] inspect task {task.spec} ({task.name}): {len(train_ids)} samples train, {len(held_ids)} held "
            f"out by id; prompts: its solver chain ({' -> '.join(task.solvers)}) up to its first generate(); "
            f"rewards: {rewards}, from its scorers ({', '.join(s.name for s in task.scorers)}) after the rest of the "
            f"chain{sandbox}; replaces the config's {' and '.join(replaced)}"
        )
    return row
