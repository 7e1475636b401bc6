"""``scripts/check_gpu.py``: one run that says whether a recipe fits this machine, how fast it trains, and
whether its rollouts come from the policy being trained.

    run.py            the command: the checks in order, the table, the exit status
    environment.py    device, driver/CUDA, versions; whether this vLLM has bitsandbytes (from its registry)
    memory.py         the budget (a card or --memory-cap, enforced on a GPU), pre-flight's estimate, the measured peak
    timing.py         s/step, rollout tokens/s, generation and adapter-sync time inside the trainer's steps
    on_policy.py      the on-policy measurement (also scripts/check_on_policy.py)
    rollout_speed.py  the engine against transformers generate + peft (also scripts/bench_rollouts.py)
    verdicts.py       a verdict and a fix per check, from the numbers alone
    report.py         the table as text, markdown and JSON
"""
