"""The on-policy guard under DeepSpeed ZeRO-3 with vLLM servers does not deadlock at step 0 (issue #40, 2).

docs/scaling-out.md's ZeRO-3 + servers command: only the main rank scores on the servers (``saves_here``), but the
policy's forward under ZeRO-3 is a collective (weight shards all-gathered from every rank). Two real processes over
gloo run the guard's measurement with a forward that all-gathers (tests/train/guards/zero3_guard_worker.py): both must
finish, every rank having run the same forwards, only the main rank having scored on the engine, and all agreeing on
the gap. Before the fix only rank 0 ran the forward while rank 1 waited in gather_object: the collectives did not
match (a hang until gloo's timeout, or an error).
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys

from tests.helpers import REPO

GLOO_TIMEOUT_S = 60  # a mismatched collective fails after this instead of hanging the suite
WAIT_S = 900  # the processes' own limit: imports on a loaded 2-core machine take a while


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_every_rank_runs_the_policy_forward_and_only_the_main_one_scores_on_the_engine():
    port = free_port()
    procs = []
    for rank in range(2):
        env = {
            **os.environ,
            "RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "GLOO_TIMEOUT_S": str(GLOO_TIMEOUT_S),
            "OMP_NUM_THREADS": "1",
        }  # fmt: skip
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "tests.train.guards.zero3_guard_worker"],
                cwd=REPO,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
        )
    results = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=WAIT_S)
            assert proc.returncode == 0, f"rank failed (a deadlocked or mismatched collective?):\n{err[-3000:]}"
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    main, other = sorted(results, key=lambda r: r["rank"])
    assert main["forwards"] == other["forwards"] == 2  # PROBES forwards on every rank: the collective matches
    assert main["scored"] == 2 and other["scored"] == 0  # the servers are asked once per probe, by the main rank
    assert main["gap"] == other["gap"] and math.isfinite(main["gap"]) and main["gap"] > 0
