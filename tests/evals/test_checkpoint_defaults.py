"""``--model verigrpo/<run>`` generates as the run did unless asked otherwise (#52): a task that sets no max_tokens got
Inspect's 2,048 sampled tokens (a CPU eval sat at 0/20 for 10 minutes); now the run's ``max_completion_length``,
greedy, and the provider's first line says so. An explicit ``--max-tokens`` (or the task's ``max_tokens``) and
``--temperature`` above 0 win; ``-M do_sample`` wins over the temperature. Through Inspect's own ``Model.generate``
(which fills a request's max_tokens from the provider's ``max_tokens()``), with the hf provider's generation replaced
by a recorder: no weights load (a run without any: tests/helpers/unloaded_run.py)."""

from __future__ import annotations

import asyncio

import pytest

from tests.helpers import MODEL
from tests.helpers.unloaded_run import unloaded_run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if not (MODEL / "config.json").is_file():
        pytest.skip("run `make setup` (scripts/prepare_cpu_model.py) first")
    return unloaded_run(tmp_path_factory.mktemp("defaults") / "run", "--max_completion_length", "40")


@pytest.fixture
def requests(monkeypatch):
    """What the hf provider's generation was asked for: (do_sample, max_tokens, temperature) per request."""
    from inspect_ai.model import ModelOutput

    from records.inspect_seams import hf_model_api

    asked = []

    async def record(self, input, tools, tool_choice, config):
        asked.append((self.do_sample, config.max_tokens, config.temperature))
        return ModelOutput.from_content(self.model_name, "ANSWER: 1")

    monkeypatch.setattr(hf_model_api(), "generate", record)
    return asked


def generate(model, **config):
    from inspect_ai.model import GenerateConfig

    model.api.load = lambda: None  # the recorder stands in for the weights
    return asyncio.run(model.generate("What is 1 + 0?", config=GenerateConfig(**config)))


@pytest.mark.parametrize(
    ("model_args", "config", "asked"),
    [
        ({}, {}, (False, 40, None)),  # a task that sets nothing: the run's completion length, greedy
        ({}, {"temperature": 0.0, "max_tokens": 256}, (False, 256, 0.0)),  # math_verified's config
        ({}, {"temperature": 0.7, "max_tokens": 5}, (True, 5, 0.7)),  # --temperature 0.7 --max-tokens 5
        ({"do_sample": False}, {"temperature": 0.7}, (False, 40, 0.7)),  # -M do_sample=false: greedy whatever
        ({"do_sample": True}, {}, (True, 40, None)),
    ],
)
def test_the_runs_generation_settings_unless_asked_otherwise(run, requests, model_args, config, asked):
    from inspect_ai.model import get_model

    generate(get_model(f"verigrpo/{run}", memoize=False, **model_args), **config)
    assert requests == [asked]


def test_the_first_line_says_what_loads_and_how_it_generates(run, capsys):
    from inspect_ai.model import get_model

    get_model(f"verigrpo/{run}", memoize=False)
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"verigrpo: {run} as trained (4-bit nf4, double quant")
    assert "defaults from its run.json: max_tokens 40 (its max_completion_length), greedy;" in first
    assert "--max-tokens' max_tokens wins, --temperature above 0 samples" in first


def test_a_bad_run_directory_is_one_message(tmp_path):
    """``verigrpo/<not a run>``: the provider's error is one Inspect prints alone (exit 1), not a traceback."""
    from inspect_ai.model import get_model

    from evals.providers.checkpoint_model import CheckpointError
    from records.inspect_seams import PrerequisiteError

    with pytest.raises(CheckpointError) as raised:
        get_model(f"verigrpo/{tmp_path / 'nope'}", memoize=False)
    assert isinstance(raised.value, PrerequisiteError)
    assert raised.value.message == f"error: {tmp_path / 'nope'}: no such directory (resolved to {tmp_path / 'nope'})"
