"""What a training run leaves behind (the trainer that records it is ``train/trainer.py``).

manifest.py           run.json (config, versions, git commit, verifier fingerprint) and the model card,
                      written into the output directory and every checkpoint (read by records/run_manifest.py)
rollout_log.py        every rollout as an Inspect .eval log (RolloutRecorder: atomic files, one per interval)
held_out.py           held-out evals while training: the domain's Inspect task on the policy in memory, a log each
                      under <run>/evals/, its metrics in the trainer's log (RecordingGRPOTrainer.evaluate)
curve.py              the run's reward curve and held-out evals (<run>/curve.png; scripts/plot_run.py is its command
                      line)
figures.py            saving a picture and the RUN_DIR [--out FILE] command line curve.py and scripts/plot_demo.py share
"""
