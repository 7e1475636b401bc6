"""Where the symbolic workers' start is paid: never on import, in ``rewards.warm_up()`` (trainer, Inspect scorer),
or else by the first symbolic call, which waits for the first worker only."""

import subprocess
import sys
import textwrap

from rewards.math.worker_pool import Budget, WorkerPool


def test_import_starts_nothing_and_warm_up_and_the_inspect_scorer_start_the_workers():
    code = textwrap.dedent(
        """
        import rewards
        from rewards.math import worker_pool
        assert worker_pool._pool is None, "import rewards started the verifier's workers"
        from evals.math_scoring import math_scorer
        math_scorer()  # an Inspect math task is being built: the workers start in the background
        pool = worker_pool._pool
        assert pool is not None, "the Inspect math scorer did not start the verifier"
        rewards.warm_up()  # blocks until every worker is warm, and is idempotent
        assert worker_pool._pool is pool and pool._started.is_set()
        assert len(pool._live) == pool.size
        print(rewards.is_correct("2(x+1)", "2x+2"))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stderr[-3000:]


def test_a_cold_pool_serves_the_first_call_from_its_first_worker_then_fills():
    pool = WorkerPool(size=3)
    try:
        assert pool.compare("2x", "x+x", None, Budget.start())[0] == "equal"  # no VerifierOverloaded while starting
        pool.wait_ready()
        assert len(pool._live) == 3 and pool._failure is None
        assert pool.compare("(x+1)^2", "x^2+2x+1", None, Budget.start())[0] == "equal"
    finally:
        pool.close()
    assert not pool._live


def test_the_first_comparison_that_needs_simplify_gets_the_same_verdict_as_the_next():
    """sympy's simplify imports sympy.physics on its first call (~0.25 s of CPU, most of a 0.3 s budget): the
    warm-up pays for it, so a worker's first such comparison is not too_complex where the next is not."""
    pool = WorkerPool(size=1)
    try:
        first = pool.compare("(3)if(0)else(4)", "5", None, Budget.start(deadline_s=60))
        again = pool.compare("(3)if(0)else(4)", "5", None, Budget.start(deadline_s=60))
        assert first[0] == again[0] == "different", (first, again)
    finally:
        pool.close()
