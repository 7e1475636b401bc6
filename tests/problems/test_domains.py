"""problems/domains.py: a third answer domain is one table row, and training data, the audit and the plot see it; the
built-in rows are registered the way a new one is, and the rows' rewards are the one reward-name table."""

from dataclasses import dataclass
from importlib.metadata import EntryPoint
from types import SimpleNamespace

import pytest
import tomllib

import rewards
from problems import domains
from problems.code_domain import CODE
from problems.domains import DOMAINS, Domain
from problems.math_domain import MATH
from tests.helpers import REPO


@dataclass(frozen=True)
class Choice:
    """A toy multiple-choice problem: the third domain this test adds."""

    id: str
    question: str
    answer: str


def _load(source, *, limit=None, **_ignored):
    problems = [Choice(f"choice-{i}", f"Which letter is first, (A) or (B)? #{i}", "A") for i in range(3)]
    return problems[:limit] if limit is not None else problems


def _row(problem, num_shots):
    return {"prompt": [{"role": "user", "content": problem.question}], "answer": problem.answer, "id": problem.id}


def choice_match(completions, answer, **kwargs):
    return [float(str(c).strip()[:1] == a) for c, a in zip(completions, answer)]


TOY = Domain(
    name="choice",
    sources=("choice_toy",),
    problem_type=Choice,
    load=_load,
    training_row=_row,
    rewards={"choice_match": choice_match},
    scorer="verigrpo/choice_scorer",
    audited={"train_choice_match": "correct"},
    metrics=(("rewards/choice_match/mean", "choice accuracy", "-."),),
)


@pytest.fixture
def toy_domain(monkeypatch):
    """The toy row in the table for one test; monkeypatch takes it out again."""
    monkeypatch.setitem(DOMAINS, TOY.name, TOY)
    return TOY


def test_the_table_holds_math_and_code():
    assert list(DOMAINS) == ["math", "code"]
    assert domains.all_sources() == ("arithmetic", "jsonl", "json", "gsm8k", "math500", "code")
    assert domains.reward_names_elsewhere(MATH) == {"code_tests"} and domains.reward_names_elsewhere(CODE) == {
        "correctness",
        "format",
    }
    assert domains.audited_scores() == {
        "train_correctness": ("verigrpo/math_verifier", "correct"),
        "train_code_tests": ("verigrpo/unit_test_scorer", "fraction"),
    }


def test_a_toy_domain_is_seen_by_sources_rewards_data_audit_and_plot(toy_domain):
    assert "choice_toy" in domains.all_sources() and domains.domain_of_source("choice_toy") is TOY
    assert "choice_match" in domains.reward_names_elsewhere(MATH)  # a math config naming it is refused

    from train.data.rows import load_training_problems, to_dataset

    args = SimpleNamespace(
        dataset="choice_toy", dataset_path=None, dataset_split="train", dataset_size=2, dataset_seed=0
    )
    problems = load_training_problems(args, TOY)
    assert [p.id for p in problems] == ["choice-0", "choice-1"]
    rows = to_dataset(problems, num_shots=0)
    assert rows[0]["answer"] == "A" and rows[0]["prompt"][0]["content"].startswith("Which letter")

    from evals.log_stats.rollout_audit import training_score

    log = SimpleNamespace(samples=[SimpleNamespace(scores={"train_choice_match": None})], location="toy.eval")
    assert training_score(log) == "train_choice_match"
    assert domains.audited_scores()["train_choice_match"] == ("verigrpo/choice_scorer", "correct")

    from train.artifacts.curve import series

    assert ("rewards/choice_match/mean", "choice accuracy", "-.") in series()


def test_config_validation_reads_the_table(toy_domain):
    """The toy source is a dataset a config may name, and its reward cannot score another domain's data."""
    from train.config import ConfigError
    from train.config.validation import check_data

    def check(dataset, reward):
        config = SimpleNamespace(dataset=dataset, reward_funcs=[reward], num_shots=0, dataset_path=None)
        return check_data(config, domains.run_domain(dataset, [reward], think="none"))

    assert check("choice_toy", "choice_match") is TOY
    with pytest.raises(ConfigError, match=r"reward_funcs \['correctness'\] cannot score dataset 'choice_toy'"):
        check("choice_toy", "correctness")
    with pytest.raises(ConfigError, match=r"reward_funcs \['choice_match'\] cannot score dataset 'arithmetic'"):
        check("arithmetic", "choice_match")


@pytest.mark.parametrize(
    ("source", "names", "domain", "unknown", "elsewhere"),
    [
        ("arithmetic", ["correctness", "format"], "math", (), ()),
        ("code", ["code_tests"], "code", (), ()),
        ("code", ["correctness"], "code", (), ("correctness",)),
        ("arithmetic", ["nonesuch", "code_tests"], "math", ("nonesuch",), ("code_tests",)),
        ("nonesuch", ["correctness"], None, (), ()),
    ],
)
def test_a_run_looks_up_its_source_and_rewards_in_one_place(source, names, domain, unknown, elsewhere):
    """``run_domain``: what the config checks refuse and what the run trains with, from one look-up of the table."""
    chosen = domains.run_domain(source, names, think="none")
    assert (chosen.domain.name if chosen.domain else None) == domain
    assert chosen.unknown_rewards == unknown and chosen.rewards_elsewhere == elsewhere
    assert chosen.sources == domains.all_sources() and chosen.reward_choices == tuple(domains.reward_choices())
    assert chosen.reward_funcs == (() if unknown else tuple(domains.reward_funcs(names, think="none")))
    assert (chosen.not_built is None) == (not unknown)


def test_a_think_setting_the_rewards_do_not_take_builds_no_reward_functions():
    """The config check refuses it (train/config/validation.py check_rewards), with the valid settings."""
    chosen = domains.run_domain("arithmetic", ["correctness", "format"], think="before")
    assert chosen.domain is MATH and chosen.reward_funcs == () and "got 'before'" in chosen.not_built


def test_held_out_evals_need_the_domains_eval_task(toy_domain):
    """A domain without an eval task trains, but a config asking for held-out evals on it is refused; math and
    code name the task the trainer's evals (train/artifacts/held_out.py) and `inspect eval` run."""
    from train.artifacts.held_out import eval_task_function
    from train.config import ConfigError
    from train.config.validation import check_held_out_eval

    evaluating = SimpleNamespace(eval_strategy="steps")
    config = SimpleNamespace(dataset="choice_toy", eval_problems=None, eval_dataset_path=None)
    toy = domains.domain_of_source("choice_toy")
    with pytest.raises(ConfigError, match=r"dataset 'choice_toy' \(choice\) has no Inspect eval task"):
        check_held_out_eval(config, evaluating, toy)
    check_held_out_eval(config, SimpleNamespace(eval_strategy="no"), toy)

    from evals.code_task import code_verified
    from evals.math_task import math_verified

    assert eval_task_function(MATH.eval_task) is math_verified
    assert eval_task_function(CODE.eval_task) is code_verified
    assert domains.held_out_metrics() == (MATH.eval_metric, CODE.eval_metric)


def test_the_toy_domain_is_gone_afterwards():
    assert "choice" not in DOMAINS and "choice_toy" not in domains.all_sources()


# --- a row that declares its judge as ``grade`` (docs/adding-a-domain.md) ---


def _grade_first_letter(completion: str, target: str) -> float:
    return float(completion.strip()[:1] == target)


GRADED = Domain(
    name="letter",
    sources=("letter_toy",),
    problem_type=Choice,
    load=_load,
    training_row=_row,
    grade=_grade_first_letter,
)


def test_a_graded_row_derives_reward_scorer_and_task():
    assert GRADED.reward_names == {"letter_grade"} and GRADED.scorer == domains.DOMAIN_SCORER
    assert GRADED.eval_task == domains.DOMAIN_TASK
    assert GRADED.metrics == (("rewards/letter_grade/mean", "letter grade", "-."),)  # the run plot's line
    assert "letter_grade" not in domains.reward_choices()  # a row not in the table brings nothing to it


def test_a_row_without_a_judge_is_refused():
    with pytest.raises(ValueError, match="domain 'nothing': give grade, or rewards and scorer"):
        Domain(name="nothing", sources=("x",), problem_type=Choice, load=_load, training_row=_row)


def test_reward_names_resolve_over_built_in_and_row_rewards(monkeypatch):
    with pytest.raises(ValueError, match=r"unknown reward function\(s\) \['letter_grade'\]"):
        domains.reward_funcs(["letter_grade"], think="none")
    monkeypatch.setitem(DOMAINS, GRADED.name, GRADED)
    correctness, letter = domains.reward_funcs(["correctness", "letter_grade"], think="none")
    assert correctness.__name__ == "correctness" and letter.__name__ == "letter_grade"
    assert letter(["A", "B) no", [{"role": "assistant", "content": "A."}]], answer=["A", "A", "A"]) == [1.0, 0.0, 1.0]
    assert "letter_grade" in domains.reward_choices() and domains.unknown_reward_names(["letter_grade", "x"]) == ["x"]

    from train.config import ConfigError
    from train.config.validation import check_data, check_rewards

    config = SimpleNamespace(dataset="letter_toy", reward_funcs=["letter_grade"], num_shots=0, dataset_path=None)
    chosen = domains.run_domain("letter_toy", ["letter_grade"], think="none")
    check_rewards(
        SimpleNamespace(reward_funcs=["letter_grade"], think="none"), SimpleNamespace(reward_weights=None), chosen
    )
    check_data(config, chosen)
    config.dataset = "arithmetic"
    with pytest.raises(ConfigError, match=r"reward_funcs \['letter_grade'\] cannot score dataset 'arithmetic'"):
        check_data(config, domains.run_domain("arithmetic", ["letter_grade"], think="none"))


# --- registration from outside the package: the entry point group and VERIGRPO_DOMAINS ---------------------------

TOY_MODULE = "toy_outside_domain"


@pytest.fixture
def outside_module(tmp_path, monkeypatch):
    """A module outside the package defining a Domain (and a non-Domain), importable as ``toy_outside_domain``."""
    (tmp_path / f"{TOY_MODULE}.py").write_text(
        "from tests.problems.test_domains import GRADED\nTOY = GRADED\nNOT_A_DOMAIN = 3\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return TOY_MODULE


def test_the_built_in_domains_are_declared_in_the_entry_point_group():
    from importlib.metadata import entry_points

    declared = {e.name: e.load() for e in entry_points(group=domains.ENTRY_POINT_GROUP)}
    assert declared["math"] is MATH and declared["code"] is CODE


def fresh_table(monkeypatch, entries):
    """A table that reads the built-in rows, then ``entries``."""
    builtin = [EntryPoint(name, value, domains.ENTRY_POINT_GROUP) for name, value in domains.BUILTIN.items()]
    monkeypatch.setattr(domains, "_entry_points", lambda: [*builtin, *entries])
    return domains.RegisteredDomains()


def test_an_entry_point_registers_a_domain_on_first_read(monkeypatch, outside_module):
    from importlib.metadata import EntryPoint

    table = fresh_table(monkeypatch, [EntryPoint("letter", f"{outside_module}:TOY", domains.ENTRY_POINT_GROUP)])
    assert dict.__len__(table) == 0  # nothing loaded before the table is read
    assert list(table) == ["math", "code", "letter"] and table["letter"] is GRADED


def test_the_environment_variable_registers_a_domain(monkeypatch, outside_module):
    monkeypatch.setenv(domains.DOMAINS_ENV, f" {outside_module}:TOY , ")
    (entry,) = [e for e in domains._entry_points() if e.group == domains.DOMAINS_ENV]
    table = fresh_table(monkeypatch, [entry])
    assert "letter" in table and table.get("letter") is GRADED


BAD_REGISTRATIONS = [
    ("toy_outside_domain", r"write module:OBJECT"),
    ("toy_outside_domain:MISSING", r"does not load: AttributeError"),
    ("no_such_module_here:TOY", r"does not load: ModuleNotFoundError: No module named 'no_such_module_here'"),
    ("toy_outside_domain:NOT_A_DOMAIN", r"is a int, not a problems.domains.Domain"),
]


@pytest.mark.parametrize(("value", "message"), BAD_REGISTRATIONS)
def test_a_bad_registration_names_itself(monkeypatch, outside_module, value, message):
    from importlib.metadata import EntryPoint

    table = fresh_table(monkeypatch, [EntryPoint(value, value, domains.DOMAINS_ENV)])
    with pytest.raises(domains.DomainRegistrationError, match=rf"^VERIGRPO_DOMAINS {value} = '{value}'.*{message}"):
        list(table)


def test_a_taken_name_is_refused(monkeypatch):
    from importlib.metadata import EntryPoint

    table = fresh_table(monkeypatch, [EntryPoint("m", "tests.problems.test_domains:MATH_AGAIN", "verigrpo.domains")])
    with pytest.raises(domains.DomainRegistrationError, match="registers domain 'math', a name already taken"):
        list(table)


MATH_AGAIN = Domain(
    name="math", sources=("again",), problem_type=Choice, load=_load, training_row=_row, grade=lambda c, t: 0.0
)


def test_unknown_names_say_how_to_register():
    from evals.domain_task import graded_domain
    from train.config import ConfigError
    from train.config.validation import check_rewards

    how = r"entry point group 'verigrpo.domains' of your package or VERIGRPO_DOMAINS=module:OBJECT"
    with pytest.raises(domains.DatasetError, match=rf"unknown dataset 'div3_toy'.*{how}"):
        domains.domain_of_source("div3_toy")
    with pytest.raises(ValueError, match=rf"unknown reward function\(s\) \['div3_grade'\].*{how}"):
        domains.reward_funcs(["div3_grade"], think="none")
    with pytest.raises(ConfigError, match=rf"unknown reward function\(s\) \['div3_grade'\].*{how}"):
        check_rewards(
            SimpleNamespace(reward_funcs=["div3_grade"], think="none"),
            SimpleNamespace(reward_weights=None),
            domains.run_domain("arithmetic", ["div3_grade"], think="none"),
        )
    with pytest.raises(domains.DatasetError, match=rf"domain 'div3' is not registered: choose from \[\]; .*{how}"):
        graded_domain("div3")


# --- one reward-name table: the rows' rewards; the built-in rows registered as a new one is ---


def test_the_built_in_rows_bring_rewards_plain_functions():
    """The names a config gives are the rows' (math: correctness, format; code: code_tests), each naming one of
    ``rewards``' plain functions; ``rewards`` itself keeps no name table."""
    assert dict(MATH.rewards) == {"correctness": rewards.correctness, "format": rewards.format_reward}
    assert dict(CODE.rewards) == {"code_tests": rewards.code_tests}
    assert domains.reward_owners() == {"correctness": MATH, "format": MATH, "code_tests": CODE}
    assert domains.reward_funcs(["correctness", "format", "code_tests"], think="none") == [
        rewards.correctness,
        rewards.format_reward,
        rewards.code_tests,
    ]
    assert not hasattr(rewards, "REWARD_FUNCS") and not hasattr(rewards, "get_reward_funcs")


@pytest.mark.parametrize(
    ("names", "think", "bound"),
    [
        (["correctness", "format"], "after_last_close", ["correctness", "format_reward"]),
        (["code_tests", "correctness"], "after_last_close", ["correctness"]),
        (["format", "code_tests"], "none", []),  # "none" is the plain function itself
    ],
)
def test_the_think_setting_reaches_only_the_rewards_that_read_an_answer(names, think, bound):
    funcs = domains.reward_funcs(names, think=think)
    assert [f.__name__ for f in funcs if getattr(f, "think", None) == think] == bound
    assert all(f is rewards.code_tests for name, f in zip(names, funcs) if name == "code_tests")


def test_a_reward_a_test_puts_in_a_row_is_a_name_a_config_may_give(monkeypatch):
    """The trainer's tests add a reward to the math row (``MATH.rewards``): resolved like the built-in ones, and
    refused for another domain's data."""
    monkeypatch.setitem(MATH.rewards, "length_parity", choice_match)
    assert domains.reward_funcs(["length_parity"], think="after_last_close") == [choice_match]
    assert "length_parity" in domains.reward_names_elsewhere(CODE)


@pytest.mark.parametrize("names", [["accuracy"], ["correctness", "Correctness"], ["correctness_grade"]])
def test_an_unknown_reward_name_lists_the_valid_ones_and_how_to_register(names):
    with pytest.raises(ValueError) as raised:
        domains.reward_funcs(names, think="none")
    message = str(raised.value)
    assert "valid names are ['code_tests', 'correctness', 'format']" in message
    assert "'verigrpo.domains'" in message and "VERIGRPO_DOMAINS=module:OBJECT" in message


def test_the_built_in_rows_are_registered_as_pyproject_declares_them():
    """pyproject.toml's entry points in the group are the built-in rows, each its own module (problems/math_domain.py,
    problems/code_domain.py), loaded by the loader every registered domain goes through; the table starts with them."""
    group = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][domains.ENTRY_POINT_GROUP]
    assert group == domains.BUILTIN
    for name, value in group.items():
        row = domains._load(EntryPoint(name=name, value=value, group=domains.ENTRY_POINT_GROUP))
        assert DOMAINS[name] is row and row.name == name
        assert value.partition(":")[0] == f"problems.{name}_domain"
    assert list(DOMAINS)[:2] == ["math", "code"]
