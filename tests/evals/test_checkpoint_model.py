"""``--model verigrpo/<run dir>``: a checkpoint is evaluated as it was trained (4-bit base), or unquantized on request.

The tests build a run directory the way training does (run.json from the CPU config through
train/artifacts/manifest.py, a real LoRA adapter on the real small model). A trained checkpoint evaluated from
the command line and in process: tests/integration/test_checkpoint_eval.py.
"""

import json
import shutil

import pytest

from evals.providers.checkpoint_model import CheckpointError, loading_args
from tests.helpers import CPU_CONFIG, MODEL, REPO


def needs_model():
    if not (MODEL / "config.json").is_file():
        pytest.skip("run `make setup` (scripts/prepare_cpu_model.py) first")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A run directory as train/grpo.py leaves it: run.json, an (untrained) LoRA adapter, the tokenizer."""
    needs_model()
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import get_peft_config

    from train.artifacts.manifest import build_manifest, write_manifest
    from train.config import parse_config

    run = tmp_path_factory.mktemp("checkpoint") / "run"
    script_args, training_args, model_args = parse_config(["--config", CPU_CONFIG, "--output_dir", str(run)])
    model_args.model_name_or_path = str(MODEL)  # absolute, as training writes it
    base = AutoModelForCausalLM.from_pretrained(MODEL, dtype="float32")
    get_peft_model(base, get_peft_config(model_args)).save_pretrained(run)
    AutoTokenizer.from_pretrained(MODEL).save_pretrained(run)
    write_manifest(build_manifest(script_args, training_args, model_args), run, 30)
    return run


def edit_run_json(run, **model_keys):
    manifest = json.loads((run / "run.json").read_text())
    manifest["config"]["model"].update(model_keys)
    (run / "run.json").write_text(json.dumps(manifest))


def test_loading_args_are_the_trainings_quantization(run_dir):
    from trl import get_quantization_config

    from train.config import parse_config

    _, _, model_config = parse_config(["--config", CPU_CONFIG])
    trained = loading_args(run_dir)
    assert trained["dtype"] == "float32"
    quantization = trained["quantization_config"]
    assert quantization.load_in_4bit and quantization.bnb_4bit_quant_type == "nf4"
    assert quantization.bnb_4bit_use_double_quant  # use_bnb_nested_quant: true in the config
    assert quantization.to_dict() == get_quantization_config(model_config).to_dict()  # what train/grpo.py used

    full = loading_args(run_dir, precision="full")
    assert full == {"dtype": "float32"}


def test_an_unquantized_run_loads_unquantized(tmp_path, run_dir):
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    edit_run_json(run, load_in_4bit=False, dtype="bfloat16")
    assert loading_args(run) == {"dtype": "bfloat16"} == loading_args(run, "full")
    edit_run_json(run, load_in_8bit=True)
    assert loading_args(run)["quantization_config"].load_in_8bit


@pytest.fixture(scope="module")
def full_precision(run_dir, tmp_path_factory):
    """(run, model, loads): ``verigrpo/<a copy of run_dir>`` built once with ``precision=full`` under a model name no
    test in this process asked Inspect about before, and the paths ``AutoModelForCausalLM.from_pretrained`` loaded while
    it was built; read by the layer-type test and the model-info lookup test (one full load for both)."""
    from inspect_ai.model import get_model

    run = tmp_path_factory.mktemp("fresh-name") / "run"
    shutil.copytree(run_dir, run)
    with pytest.MonkeyPatch.context() as patch:
        loads = counted_loads(patch)
        model = get_model(f"verigrpo/{run}", memoize=False, device="cpu", precision="full")
        model.api.load()  # the weights load at the first generation: here, at once
    return run, model, loads


def test_the_provider_loads_the_4bit_base_unless_asked_for_full_precision(run_dir, full_precision):
    """Through Inspect's registry, as ``--model verigrpo/<dir>`` does: the adapter sits on bitsandbytes 4-bit
    layers by default, on plain float32 ``nn.Linear`` with ``precision=full``."""
    import torch
    from inspect_ai.model import get_model

    from records.inspect_seams import hf_model_api

    def layer_types(model):
        assert isinstance(model.api, hf_model_api())
        hf = model.api.model
        assert hf.active_adapters() == ["default"]  # the LoRA adapter is attached
        q_proj = hf.model.layers[0].self_attn.q_proj
        return type(q_proj.base_layer).__name__, hf.model.embed_tokens.weight.dtype

    assert layer_types(get_model(f"verigrpo/{run_dir}", memoize=False, device="cpu")) == ("Linear4bit", torch.float32)
    _, full, _ = full_precision  # get_model(f"verigrpo/{copy of run_dir}", precision="full")
    assert layer_types(full) == ("Linear", torch.float32)


def test_clear_errors_name_the_file_and_what_to_do(tmp_path, run_dir):
    with pytest.raises(CheckpointError, match="no such directory"):
        loading_args(tmp_path / "nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(CheckpointError, match=r"run\.json not found: .*--model hf/<path>"):
        loading_args(tmp_path / "plain")
    interrupted = tmp_path / "interrupted"
    for step in (10, 20, 3):
        shutil.copytree(run_dir, interrupted / f"checkpoint-{step}")
    with pytest.raises(CheckpointError, match=r"newest checkpoint is .*checkpoint-20: --model verigrpo/"):
        loading_args(interrupted)
    no_adapter = tmp_path / "no_adapter"
    no_adapter.mkdir()
    shutil.copy(run_dir / "run.json", no_adapter)
    with pytest.raises(CheckpointError, match="no adapter_config.json"):
        loading_args(no_adapter)
    with pytest.raises(CheckpointError, match="precision must be one of"):
        loading_args(run_dir, precision="8bit")


def test_a_moved_run_names_the_missing_base(tmp_path, run_dir):
    from inspect_ai.model import get_model

    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    adapter = json.loads((run / "adapter_config.json").read_text())
    (run / "adapter_config.json").write_text(json.dumps({**adapter, "base_model_name_or_path": "/elsewhere/base"}))
    with pytest.raises(CheckpointError, match=r"base model /elsewhere/base does not exist"):
        get_model(f"verigrpo/{run}", memoize=False)


def test_the_demo_hint_is_a_command_for_this_provider():
    from evals.providers.checkpoint_eval import eval_command, inspect_command
    from problems.domains import domain_of_source
    from train.artifacts.held_out import held_out_task_args
    from train.config import parse_config

    config = parse_config(["--config", CPU_CONFIG])[0]
    task_args = held_out_task_args(config, 50, 96, domain_of_source(config.dataset))
    command = eval_command(REPO / "runs" / "demo-x", task_args)
    inspect = inspect_command()
    assert (REPO / inspect).is_file()  # the environment's own inspect, relative to the repository root
    assert command == (
        f"{inspect} eval evals/math_task.py@math_verified -T limit=50 -T split=test -T operations=add,sub -T max_value=10 "
        "-T max_tokens=96 --model verigrpo/runs/demo-x -M do_sample=false --max-connections 50"  # one batch
    )
    full = eval_command(REPO / "runs" / "demo-x", task_args, quantized=False)
    assert full == command.replace("-M do_sample=false", "-M do_sample=false -M precision=full")


def counted_loads(monkeypatch) -> list[str]:
    """The paths ``AutoModelForCausalLM.from_pretrained`` loads from here on (Inspect's hf provider loads with it)."""
    from transformers import AutoModelForCausalLM

    load, loads = AutoModelForCausalLM.from_pretrained.__func__, []

    def counted(cls, name, *args, **kwargs):
        loads.append(str(name))
        return load(cls, name, *args, **kwargs)

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", classmethod(counted))
    return loads


def test_inspects_model_info_lookup_does_not_load_the_checkpoint_again(full_precision, monkeypatch):
    """On every model event of an eval Inspect asks ``get_model_info`` about the model the event names (its ACP usage
    update); for a name it does not know, it builds the provider again: a second full load of the checkpoint. The
    provider registers its model's info when built (evals/providers/model_info.py), so the lookup loads nothing. The whole
    eval: ``test_one_eval_loads_the_checkpoint_once``."""
    from inspect_ai.model import get_model_info
    from transformers import AutoConfig

    run, model, built = full_precision  # a quick load, under a name no earlier test in this process asked about
    looked_up = counted_loads(monkeypatch)
    info = get_model_info(str(model))  # str(model): the name Inspect's model events carry
    assert (built, looked_up) == ([str(run)], [])  # built once, and the lookup loads nothing
    assert info.context_length == AutoConfig.from_pretrained(MODEL).max_position_embeddings


@pytest.mark.slow
def test_one_eval_loads_the_checkpoint_once(run_dir, tmp_path, monkeypatch):
    """A real eval of ``verigrpo/<run dir>`` (4-bit, as trained) loads the weights once, not a second time for
    Inspect's model info lookup on the first model event."""
    from inspect_ai import eval as inspect_eval

    from evals.math_task import math_verified

    run = tmp_path / "run"  # a model name no earlier eval in this process asked Inspect about
    shutil.copytree(run_dir, run)
    loads = counted_loads(monkeypatch)
    (log,) = inspect_eval(
        math_verified(limit=1, max_tokens=2),
        model=f"verigrpo/{run}",
        model_args={"do_sample": False, "device": "cpu"},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    assert loads == [str(run)]
