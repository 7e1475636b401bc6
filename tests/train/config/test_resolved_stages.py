"""The later stages read the resolved run (#41 item 2): with held-out evals on, and for a tool run, the domain is
still asked for once before the rollout engine is built (the held-out eval and the tool check each asked again
before they took the plan's domain), and the engine factory is handed the engine the plan decided."""

import pytest

import train.grpo
import train.run
from rewards.sandbox import sandbox_problem
from tests.helpers import CPU_CONFIG, REPO
from tests.helpers.training import count_domain_lookups
from train.config import parse_config
from train.engines.choice import Engine

TOOLS_CONFIG = str(REPO / "configs" / "cpu-smollm2-tools.yaml")


class PastTheDataStages(Exception):
    """Raised where the run builds its rollout engine: after the data, the pre-flight and the held-out eval."""


@pytest.mark.parametrize(
    "argv",
    [
        ["--config", CPU_CONFIG, "--dataset_size", "64", "--eval_strategy", "steps", "--eval_steps", "5"],
        pytest.param(
            ["--config", TOOLS_CONFIG, "--dataset_size", "64"],
            marks=pytest.mark.skipif(bool(sandbox_problem()), reason="the python tool needs the bubblewrap sandbox"),
        ),
    ],
    ids=["held-out evals", "tools"],
)
def test_the_domain_is_resolved_once_with_held_out_evals_and_tools(monkeypatch, argv):
    asked = count_domain_lookups(monkeypatch)
    engines = []

    def past(*args, engine=None, **kwargs):
        engines.append(engine)
        raise PastTheDataStages

    monkeypatch.setattr(train.run, "engine_factory", past)
    with pytest.raises(PastTheDataStages):
        train.grpo.build_trainer(*parse_config(argv))
    assert asked == ["arithmetic"]
    assert engines == [Engine.NONE]
