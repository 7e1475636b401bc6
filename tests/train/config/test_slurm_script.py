"""configs/slurm/grpo-vllm-server.sbatch run with stand-ins for Slurm's commands: what it asks Slurm and accelerate
for (no cluster here). The stand-in ``srun`` records its arguments and starts nothing."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest

from tests.helpers import REPO

SCRIPT = REPO / "configs" / "slurm" / "grpo-vllm-server.sbatch"


def run_script(tmp_path, nodes: int, batch: str | None = None) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
    fake = tmp_path / "bin"
    fake.mkdir()
    record = tmp_path / "srun.calls"  # one file per call: the servers' srun runs in the background (&)
    record.mkdir()
    (fake / "scontrol").write_text("#!/bin/bash\nfor i in $(seq 1 " + str(nodes) + "); do echo node$i; done\n")
    (fake / "srun").write_text(f'#!/bin/bash\nprintf "%q " "$@" > "$(mktemp -p {record})"\n')
    for tool in ("scontrol", "srun"):
        (fake / tool).chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{fake}:{os.environ['PATH']}",
        "SLURM_SUBMIT_DIR": str(REPO),
        "SLURM_JOB_ID": "42",
        "SLURM_JOB_NODELIST": "node[1-3]",
        "SLURM_CPUS_PER_TASK": "32",
        "RUN_DIR": str(tmp_path / "run"),
    }
    if batch is not None:
        env["BATCH"] = batch
    # the script sources .venv/bin/activate (it puts the stand-ins behind .venv/bin, which has no srun/scontrol)
    result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    calls = [shlex.split(path.read_text()) for path in record.iterdir()]
    # [servers, trainers] whichever srun ran first: only the trainers' call ends the others on a failure
    return result, sorted(calls, key=lambda call: "--kill-on-bad-exit=1" in call)


def test_the_trainers_stop_together_use_their_cores_and_keep_the_recipes_batch(tmp_path):
    result, calls = run_script(tmp_path, nodes=3)
    assert result.returncode == 0, result.stderr
    servers, trainers = calls
    assert "--cpus-per-task=32" in servers and "-w" in servers and "node1" in servers
    # one node's failure ends the others at once (not after ddp_timeout); each task gets the node's cores
    assert "--kill-on-bad-exit=1" in trainers and "--cpus-per-task=32" in trainers
    launch = trainers[-1]
    assert "--num_machines 2 --num_processes 8" in launch
    # 2 nodes x 4 GPUs = 8 processes x 4 completions = the recipe's 32 per step (its learning rate's batch)
    assert "--per_device_train_batch_size 4" in launch
    assert "completions per step: 32 (4 per process)" in result.stdout
    assert "#SBATCH --cpus-per-task=" in SCRIPT.read_text()


@pytest.mark.parametrize(("batch", "per_process"), [("64", 8), ("128", 16)])
def test_a_bigger_batch_is_asked_for_explicitly(tmp_path, batch, per_process):
    result, calls = run_script(tmp_path, nodes=3, batch=batch)
    assert result.returncode == 0, result.stderr
    assert f"--per_device_train_batch_size {per_process}" in calls[1][-1]


def test_a_batch_the_processes_cannot_share_is_refused(tmp_path):
    result, calls = run_script(tmp_path, nodes=3, batch="36")
    assert result.returncode == 2 and "BATCH=36 is not a multiple of the 8 training processes" in result.stderr
    assert calls == []
