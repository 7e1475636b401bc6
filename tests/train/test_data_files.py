"""A user's data file through train/grpo.py's real path up to the model (#52): GSM8K- and MATH-shaped rows under
``dataset: jsonl`` become training rows with the reference their solution states, every unreadable row is refused at
once before any model loads (exit 2, with the key that trains without them), and ``skip_bad_rows: true`` trains on
the others: the start-up line counts the skipped rows and run.json lists them. Cheap: the trainer (the model load) is
replaced by a stub that stops the run with what it was given; the rows (problems/math_data.py) are tested in
tests/problems/test_row_shapes.py."""

from __future__ import annotations

import json

import pytest

import train.run
from tests.helpers import CPU_CONFIG
from tests.helpers.data_files import GSM8K_ROWS, MATH_ROWS, write_jsonl
from train.config import parse_config
from train.grpo import cli, main


class TrainerBuilt(Exception):
    """Raised where the trainer (and with it the model) would be built: after the data, the pre-flight, run.json."""

    def __init__(self, kwargs):
        super().__init__("the stub trainer")
        self.kwargs = kwargs


@pytest.fixture
def no_model(monkeypatch):
    def stub(**kwargs):
        raise TrainerBuilt(kwargs)

    monkeypatch.setattr(train.run, "RecordingGRPOTrainer", stub)


def argv(path, tmp_path, *extra):
    return ["--config", CPU_CONFIG, "--dataset", "jsonl", "--dataset_path", str(path)] + [
        "--output_dir",
        str(tmp_path / "run"),
        *extra,
    ]


def built(path, tmp_path, *extra) -> dict:
    with pytest.raises(TrainerBuilt) as stopped:
        main(*parse_config(argv(path, tmp_path, *extra)))
    return stopped.value.kwargs


def test_gsm8k_and_math_rows_train_with_the_reference_their_solution_states(tmp_path, no_model, capsys):
    data = write_jsonl(tmp_path / "mine.jsonl", [*GSM8K_ROWS, *MATH_ROWS])
    kwargs = built(data, tmp_path)
    rows = {row["id"]: row for row in kwargs["train_dataset"]}  # in the run's shuffled order
    assert {id_: row["answer"] for id_, row in rows.items()} == {
        "mine-0": "10",
        "mine-1": "6000",
        "mine-2": "3",
        "mine-3": "\\frac{7}{12}",
        "test/algebra/1.json": "-2, 1",
    }
    assert rows["mine-2"]["prompt"][-1]["content"] == MATH_ROWS[0]["problem"]
    out = capsys.readouterr().out
    assert f"[verigrpo] data: 5 problems from {data} (3 math-shaped, 2 gsm8k-shaped)" in out
    assert "[verigrpo] exploit probe: 0 of" in out  # the run's own rewards against cheats, on these references


def test_every_bad_row_is_refused_at_once_before_any_model_loads(tmp_path, no_model, capsys):
    data = write_jsonl(
        tmp_path / "mine.jsonl",
        [GSM8K_ROWS[0], {"question": "q", "answer": "1, 2, \\ldots, n"}, {"question": "q"}, MATH_ROWS[0]],
    )
    assert cli(argv(data, tmp_path)) == 2  # the stub trainer was never reached
    err = capsys.readouterr().err
    assert err.startswith(f"error: {data}: 2 of 4 rows cannot be read:\n")
    assert f"  {data}:2: the verifier cannot read the answer '1, 2, \\ldots, n'" in err
    assert f"  {data}:3: missing field(s) ['answer']" in err
    assert err.rstrip().endswith("set skip_bad_rows: true to train without them (run.json lists the rows left out).")


def test_skip_bad_rows_trains_on_the_others_and_lists_the_skipped_ones(tmp_path, no_model, capsys):
    data = write_jsonl(
        tmp_path / "mine.jsonl", [GSM8K_ROWS[0], {"question": "q", "answer": "\\frac{1}{"}, MATH_ROWS[1]]
    )
    kwargs = built(data, tmp_path, "--skip_bad_rows", "true")
    assert sorted(kwargs["train_dataset"]["answer"]) == ["10", "\\frac{7}{12}"]
    assert f"[verigrpo] data: 2 problems from {data} (1 gsm8k-shaped, 1 math-shaped); 1 unreadable row skipped" in (
        capsys.readouterr().out
    )
    manifest = kwargs["callbacks"][0].current()  # what run.json holds at every save
    assert manifest["skipped_rows"] == [
        f"{data}:2: the verifier cannot read the answer '\\frac{{1}}{{': unbalanced brackets"
    ]
    assert manifest["config"]["script"]["skip_bad_rows"] is True
    json.dumps(manifest)  # run.json is JSON
