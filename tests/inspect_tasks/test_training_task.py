"""An Inspect task made ready to train (inspect_tasks/training_task.py): the prompt is what the task's chain sends at
its first generate(), the reward is what ``inspect eval`` scores for the same completion (checked against a real
Inspect eval of the task with a model that writes those completions), and what cannot train is refused before any
model loads, naming the solver or scorer. No weights: every task here is tests/fixtures/inspect_tasks/tasks.py."""

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.scorer import value_to_float

from inspect_tasks.domain import split_ids
from inspect_tasks.loading import TaskError, parse_task_args
from inspect_tasks.training_task import prepare_task
from tests.helpers import REPO
from tests.helpers.mock_models import answering_model

TASKS = REPO / "tests" / "fixtures" / "inspect_tasks" / "tasks.py"


def spec(name: str) -> str:
    return f"{TASKS}@{name}"


@pytest.fixture(scope="module")
def marbles():
    return prepare_task(spec("marbles"))


@pytest.fixture(scope="module")
def capitals():
    return prepare_task(spec("capitals"))


def test_the_prompt_is_what_the_chain_sends_at_its_first_generate(marbles):
    assert marbles.solvers == ["system_message", "prompt_template", "generate"]
    assert marbles.prompt_messages("jar-1-2") == [
        {"role": "system", "content": "You count marbles."},
        {
            "role": "user",
            "content": "A jar holds 1 red and 2 blue marbles. How many marbles are in the jar?\n"
            "End with the line ANSWER: <number>.",
        },
    ]
    assert list(marbles.samples) == [f"jar-{a}-{b}" for a in range(1, 4) for b in range(1, 4)]


def test_multiple_choice_builds_its_prompt_with_the_choices(capitals):
    (message,) = capitals.prompt_messages("fr")
    assert message["role"] == "user"
    assert "What is the capital of France?" in message["content"]
    assert "A) Berlin\nB) Paris\nC) Rome" in message["content"]
    assert "ANSWER: $LETTER" in message["content"]


def test_a_chat_input_and_samples_without_ids():
    chat = prepare_task(spec("chat_input"))
    assert chat.prompt_messages("1") == [
        {"role": "system", "content": "Reply in one word."},
        {"role": "user", "content": "Colour of the sky?"},
    ]
    assert list(prepare_task(spec("no_ids")).samples) == ["1", "2", "3"]  # Inspect's own auto-ids


# completions per sample: right and wrong answers, hedges, formats a scorer may or may not accept
MARBLE_REPLIES = {
    "jar-1-1": "1 + 1 = 2\nANSWER: 2",
    "jar-1-2": "ANSWER: 3\n",
    "jar-1-3": "ANSWER: 4 or 5",
    "jar-2-1": "ANSWER: 3\nThat is all.",
    "jar-2-2": "answer: 4",
    "jar-2-3": "ANSWER: 5\nANSWER: 6",
    "jar-3-1": "",
    "jar-3-2": "ANSWER: 6",
    "jar-3-3": "ANSWER: 7",
}
CAPITAL_REPLIES = {"fr": "ANSWER: B", "it": "I think B.\nANSWER: A, B", "no": "ANSWER: A\nANSWER: C"}


@pytest.mark.parametrize(("task_fixture", "replies"), [("marbles", MARBLE_REPLIES), ("capitals", CAPITAL_REPLIES)])
def test_the_reward_is_what_inspect_eval_scores(request, task_fixture, replies, tmp_path):
    """Each completion scored by the bridge equals the score a real ``inspect eval`` of the task gives it (Inspect's
    own solvers, multiple_choice's parsing included, then its scorer and value_to_float)."""
    task = request.getfixturevalue(task_fixture)
    last_message = {task.prompt_messages(i)[-1]["content"]: reply for i, reply in replies.items()}
    (log,) = inspect_eval(task.task, model=answering_model(last_message), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    to_float = value_to_float()
    (scorer,) = task.scorers
    evaluated = {str(s.id): to_float(s.scores[scorer.name].value) for s in log.samples}
    bridged = task.score_many(list(replies.items()))
    assert {i: s.rewards[scorer.name] for i, s in zip(replies, bridged)} == evaluated
    assert 0 < sum(evaluated.values()) < len(evaluated)  # both outcomes occur


def test_multiple_choice_post_processing_runs_before_the_scorer(capitals):
    """choice() reads the letters multiple_choice() marked after generate(): no marks, no pay."""
    assert capitals.score("fr", "ANSWER: B").rewards == {"choice": 1.0}
    assert capitals.score("fr", "ANSWER: A").rewards == {"choice": 0.0}
    assert capitals.score("fr", "Paris").rewards == {"choice": 0.0}


def test_several_scorers_and_a_dict_value_each_give_named_rewards():
    two = prepare_task(spec("two_scorers"))
    assert two.reward_names == ("match", "includes")
    assert two.score("jar-1-1", "It is 2").rewards == {"match": 1.0, "includes": 1.0}
    assert two.score("jar-1-1", "2 or 3").rewards == {"match": 0.0, "includes": 1.0}
    keyed = prepare_task(spec("dict_scorer"))
    assert keyed.reward_names == ("correct_and_short.correct", "correct_and_short.short")
    assert keyed.score("jar-1-1", "2").rewards == {"correct_and_short.correct": 1.0, "correct_and_short.short": 1.0}
    long = "The jar holds 3 marbles in all, I believe"
    assert keyed.score("jar-1-1", long).rewards == {"correct_and_short.correct": 0.0, "correct_and_short.short": 0.0}


def test_a_scorer_error_is_a_counted_none_never_a_raise():
    flaky = prepare_task(spec("flaky"))
    broken, fine = flaky.score_many([("jar-1-1", "ANSWER: 2"), ("jar-1-1", "two")])
    assert broken.rewards == {"breaks_on_digits": None}
    assert "ValueError: this scorer cannot read digits" in broken.errors["breaks_on_digits"]
    assert fine.rewards == {"breaks_on_digits": 0.0} and not fine.errors


def test_a_replay_must_send_the_prompt_the_policy_saw(marbles):
    """A chain that sends another prompt on replay (a solver that is not deterministic) scores nothing."""
    sample = marbles.sample("jar-1-1")
    wrong = [("system", "You count marbles."), ("user", "another prompt")]
    from inspect_tasks.replay import ReplayLoop

    scored = ReplayLoop.run(marbles.replayer.score(sample, "ANSWER: 2", wrong))
    assert scored.rewards == {"last_line_answer": None}
    assert (
        "sent another prompt at generate() than the one the policy was trained on" in scored.errors["last_line_answer"]
    )


@pytest.mark.usefixtures("needs_sandbox")
def test_a_sandboxed_task_gets_bwrap_per_sample_with_its_files_and_setup():
    task = prepare_task(spec("sandboxed"))
    assert task.sandbox == "bwrap" and task.mapped_from is None
    right, other = task.score_many([("s0", "secret-0"), ("s0", "secret-1")])
    assert right.rewards == {"matches_the_file": 1.0} and other.rewards == {"matches_the_file": 0.0}
    assert task.score("s1", "secret-1").rewards == {"matches_the_file": 1.0}  # each sample its own files


@pytest.mark.usefixtures("needs_sandbox")
def test_a_docker_task_trains_in_bwrap_only_when_mapped():
    with pytest.raises(TaskError, match="runs its samples in a docker sandbox.*inspect_sandbox: bwrap"):
        prepare_task(spec("docker"))
    mapped = prepare_task(spec("docker"), sandbox="bwrap")
    assert (mapped.sandbox, mapped.mapped_from) == ("bwrap", "docker")
    assert mapped.score("s1", "secret-1").rewards == {"matches_the_file": 1.0}


@pytest.mark.parametrize(
    ("name", "refusal"),
    [
        ("critique", r"solver 'self_critique' calls a model itself, outside the chain's generate\(\)"),
        ("agent", r"agent 'react' runs its own model loop"),
        ("tools", r"solver 'generate' offers tools \(bash\) at its first generate\(\)"),
        ("graded", r"scorer 'model_graded_qa' calls a model to score.*inspect_grader_model"),
        ("no_scorer", r"has no scorer: there is nothing to reward"),
    ],
)
def test_what_cannot_train_is_refused_naming_the_solver_or_scorer(name, refusal):
    with pytest.raises(TaskError, match=refusal):
        prepare_task(spec(name))


def test_a_model_graded_scorer_trains_with_the_grader_named():
    """The grader is bound to the scorer's ``grader`` role (here a stand-in that grades by the completion's text)."""
    from inspect_ai.model import get_model

    from tests.helpers.mock_models import mock_output

    def grade(messages, tools, tool_choice, config):
        return mock_output("GRADE: C" if "ANSWER: 2\n" in messages[-1].text + "\n" else "GRADE: I")

    graded = prepare_task(spec("graded"), grader_model=get_model("mockllm/model", custom_outputs=grade))
    scored = graded.score_many([("jar-1-1", "ANSWER: 2"), ("jar-1-1", "ANSWER: 3")])
    assert [s.rewards for s in scored] == [{"model_graded_qa": 1.0}, {"model_graded_qa": 0.0}]


@pytest.mark.parametrize(
    ("task_spec", "refusal"),
    [
        ("no/such/file.py@task", r"does not load \(no/such/file.py does not exist"),
        (f"{TASKS}@nonexistent", r"Task named 'nonexistent' not found"),
        (str(TASKS), r"names 14 tasks \(marbles, capitals, .*\): name one, as FILE.py@NAME"),
        ("inspect_tasks.no_module_here:task", r"does not load: ModuleNotFoundError"),
    ],
)
def test_a_task_that_does_not_load_is_named(task_spec, refusal):
    with pytest.raises(TaskError, match=refusal):
        prepare_task(task_spec)


def test_a_dotted_path_names_a_task_function(monkeypatch):
    monkeypatch.syspath_prepend(str(TASKS.parent))
    task = prepare_task("tasks:capitals")
    assert task.name == "capitals" and list(task.samples) == ["fr", "it", "no"]


def test_task_arguments_are_read_as_inspect_eval_reads_t():
    assert parse_task_args(["fewshot=0", "name=arc", "ids=1,2", "flag=true"]) == {
        "fewshot": 0,
        "name": "arc",
        "ids": ["1", "2"],  # as -T ids=1,2 gives them
        "flag": True,
    }
    with pytest.raises(TaskError, match="not key=value"):
        parse_task_args(["fewshot"])


def test_the_held_out_split_is_by_id_disjoint_and_seeded():
    ids = [f"q{i}" for i in range(50)]
    train, held = split_ids(ids, 0.2, seed=3)
    assert len(held) == 10 and not set(train) & set(held) and sorted(train + held) == sorted(ids)
    assert split_ids(list(reversed(ids)), 0.2, seed=3)[1] == list(reversed(held))  # the order does not choose
    assert split_ids(ids, 0.2, seed=4)[1] != held
    assert split_ids(ids, 7, seed=3)[1] == [i for i in ids if i in split_ids(ids, 7, seed=3)[1]]
    assert len(split_ids(ids, 7, seed=3)[1]) == 7
    with pytest.raises(ValueError, match="none would train"):
        split_ids(ids, 50, seed=0)
