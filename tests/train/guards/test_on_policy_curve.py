"""The run's curve draws the on-policy guard's probe gap and band on a right-hand axis (train/artifacts/curve.py)."""

import json

from train.artifacts import curve
from train.guards.on_policy import BAND_METRIC, GAP_METRIC


def write_history(run, history):
    run.mkdir()
    (run / "log_history.json").write_text(json.dumps(history))
    return run


def test_the_checks_are_drawn_at_their_steps_with_the_band(tmp_path):
    history = [
        {"step": 1, "reward": 0.2, GAP_METRIC: 0.04, BAND_METRIC: 0.08},
        {"step": 2, "reward": 0.3},
        {"step": 3, "reward": 0.3, GAP_METRIC: 0.05, BAND_METRIC: 0.08},
    ]
    figure = curve.figure(write_history(tmp_path / "run", history))
    _, right = figure.axes
    gap, band = right.get_lines()
    assert list(gap.get_xdata()) == [1, 3] and list(gap.get_ydata()) == [0.04, 0.05]
    assert list(band.get_ydata()) == [0.08, 0.08]
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert "on-policy probe gap (right axis; thin line: its band)" in labels


def test_a_run_without_checks_has_one_axis(tmp_path):
    figure = curve.figure(write_history(tmp_path / "run", [{"step": 1, "reward": 0.2}, {"step": 2, "reward": 0.4}]))
    assert len(figure.axes) == 1
