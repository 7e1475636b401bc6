"""records/run_manifest.py, the one reader of run.json: what training writes reads back, and a broken file is
an error naming it (for the checkpoint provider too), never a silent default."""

import pytest

from evals.providers.checkpoint_model import CheckpointError, read_run
from records.run_manifest import RunManifestError, read_run_manifest
from train.artifacts.manifest import write_manifest

MANIFEST = {
    "config": {
        "script": {"dataset": "arithmetic", "reward_funcs": ["correctness"]},
        "training": {"output_dir": "runs/x", "max_steps": 2, "reward_weights": None},
        "model": {"model_name_or_path": "models/base", "use_peft": True, "lora_r": 8, "lora_alpha": 16},
    },
    "verifier_fingerprint": "abc123",
}


def test_what_training_writes_reads_back(tmp_path):
    write_manifest(MANIFEST, tmp_path, step=2)
    assert read_run_manifest(tmp_path) == {**MANIFEST, "global_step": 2}


def test_a_directory_without_run_json_has_none(tmp_path):
    assert read_run_manifest(tmp_path) is None


@pytest.mark.parametrize(
    ("content", "message"), [("{not json", "not valid JSON"), ("[1, 2]", "expected a JSON object")]
)
def test_a_broken_run_json_is_an_error_naming_the_file(tmp_path, content, message):
    (tmp_path / "run.json").write_text(content)
    with pytest.raises(RunManifestError, match=rf"{tmp_path / 'run.json'}: {message}"):
        read_run_manifest(tmp_path)
    (tmp_path / "adapter_config.json").write_text("{}")
    with pytest.raises(CheckpointError, match=rf"{tmp_path / 'run.json'}: {message}.*not a run manifest"):
        read_run(tmp_path)
