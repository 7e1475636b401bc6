"""LoRA settings refused before any model loads (train/config/lora_checks.py): what vLLM cannot serve as the
trainer computes it, for every run with vLLM rollouts, and targets that match no module, for every LoRA run.

Targets are resolved by peft on the configured architecture (built from config.json on the meta device), so
these tests use tiny Llama configs, tied and untied, that hold no weights at all.
"""

import pytest
from peft import LoraConfig

from tests.helpers import REPO
from tests.helpers.training import tiny_llama_dir
from train.config import ConfigError, parse_config, resolve_run
from train.config.lora_checks import check_lora
from train.engines.vllm_lora import lora_model_on_meta, resolved_targets, unservable_settings

VLLM_CONFIG = str(REPO / "configs" / "cpu-smollm2-vllm.yaml")
PROJECTIONS = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}


@pytest.fixture(scope="module")
def untied(tmp_path_factory):
    return str(tiny_llama_dir(tmp_path_factory.mktemp("untied"), tied=False))


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    return str(tiny_llama_dir(tmp_path_factory.mktemp("tied"), tied=True))


def lora_check(model_dir, *overrides, config=VLLM_CONFIG):
    """The LoRA checks of ``validate`` on the CPU vLLM config (colocated engine, 4-bit) with this model."""
    _, training_args, model_args = parse_config(["--config", config, "--model_name_or_path", model_dir, *overrides])
    check_lora(training_args, model_args)
    return model_args


# ---- ranks --------------------------------------------------------------------------------------------


def test_a_rank_vllm_does_not_list_is_accepted_and_one_above_512_refused(untied):
    lora_check(untied, "--lora_r", "12")  # served under max_lora_rank 16 (train/engines/vllm_lora.py)
    lora_check(untied, "--lora_r", "512")
    with pytest.raises(ConfigError, match=r"lora_r: 513 is above 512, the largest LoRA rank vLLM serves .*use_vllm"):
        lora_check(untied, "--lora_r", "513")
    lora_check(untied, "--lora_r", "513", "--use_vllm", "false")  # transformers generation has no such limit


# ---- settings vLLM cannot carry in an adapter -----------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("--lora_target_parameters", "mlp.gate_proj.weight"), r"lora_target_parameters \['mlp.gate_proj.weight'\]"),
        (("--lora_modules_to_save", "lm_head"), r"lora_modules_to_save \['lm_head'\] trains full copies"),
        (("--use_dora", "true"), r"use_dora: vLLM does not serve DoRA adapters.*Set use_dora: false"),
    ],
    ids=["target_parameters", "modules_to_save", "dora"],
)
def test_settings_a_vllm_adapter_cannot_carry_are_refused_with_vllm_only(untied, overrides, message):
    with pytest.raises(ConfigError, match=rf"^use_vllm with a LoRA policy: {message}.*or set use_vllm: false"):
        lora_check(untied, *overrides)
    lora_check(untied, *overrides, "--use_vllm", "false")


@pytest.mark.parametrize(
    ("kwargs", "what"), [({"bias": "lora_only"}, "bias='lora_only'"), ({"lora_bias": True}, "lora_bias=True")]
)
def test_a_lora_config_training_biases_is_refused(kwargs, what):
    """TRL's get_peft_config hard-codes bias='none' and never sets lora_bias: checked on the built LoraConfig
    all the same, since a bias would be dropped on the way to vLLM."""
    (problem,) = unservable_settings(LoraConfig(r=8, target_modules=["q_proj"], **kwargs))
    assert f"trains biases ({what})" in problem and "Adapter bias is not supported" in problem
    assert unservable_settings(LoraConfig(r=8, target_modules=["q_proj"])) == []


# ---- the output layer and the embeddings, as peft resolves the targets -----------------------------------


@pytest.mark.parametrize("model", ["untied", "tied"])
@pytest.mark.parametrize(
    ("targets", "hit"),
    [
        (("lm_head", "q_proj"), "lm_head"),
        (("embed_tokens",), "model.embed_tokens"),
        ((".*head",), "lm_head"),  # a regex that names neither: only resolving the targets finds the head
        ((r"model\.embed.*",), "model.embed_tokens"),
    ],
)
def test_lora_on_the_head_or_the_embeddings_is_refused(request, model, targets, hit):
    with pytest.raises(ConfigError, match=rf"puts LoRA on {hit} of .*vLLM issue #51594.*lora_target_modules: \["):
        lora_check(request.getfixturevalue(model), "--lora_target_modules", *targets)
    lora_check(request.getfixturevalue(model), "--lora_target_modules", *targets, "--use_vllm", "false")


@pytest.mark.parametrize("model", ["untied", "tied"])
def test_all_linear_resolves_to_the_decoder_projections_and_is_accepted(request, model):
    """peft's all-linear leaves the output layer out (untied heads included) and never adapts embeddings."""
    model_args = lora_check(request.getfixturevalue(model), "--lora_target_modules", "all-linear")
    assert model_args.lora_target_modules == "all-linear"  # TRL's string: peft's special value
    lora = LoraConfig(r=8, target_modules="all-linear", task_type="CAUSAL_LM")
    resolved = resolved_targets(lora_model_on_meta(request.getfixturevalue(model), lora))
    assert {name.rsplit(".", 1)[-1] for name in resolved.modules} == PROJECTIONS
    assert len(resolved.modules) == 2 * len(PROJECTIONS) and resolved.embeddings == ()


def test_without_the_architecture_the_target_names_are_checked(tmp_path):
    """A Hub model that is not cached (offline): no architecture to resolve on, so the names are checked, as TRL does."""
    with pytest.raises(ConfigError, match=r"lora_target_modules \['lm_head'\] name the output layer"):
        lora_check("example-org/not-cached-model", "--lora_target_modules", "lm_head", "q_proj")
    lora_check("example-org/not-cached-model")


def test_the_refusal_comes_from_validate_before_any_model_loads():
    """The whole pre-flight on the shipped CPU vLLM config and the real CPU model directory (config.json only is read)."""
    args = parse_config(["--config", VLLM_CONFIG, "--lora_target_modules", "lm_head", "q_proj"])
    with pytest.raises(ConfigError, match=r"puts LoRA on lm_head of models/smollm2-135m-instruct"):
        resolve_run(*args)


# ---- targets that match nothing (every LoRA run) ----------------------------------------------------------


def config_with_targets(tmp_path, config: str, targets: str) -> str:
    """A copy of a shipped config whose lora_target_modules line says ``targets`` (as written in YAML)."""
    line = "lora_target_modules: [q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]"
    text = (REPO / "configs" / config).read_text()
    assert line in text
    path = tmp_path / config
    path.write_text(text.replace(line, f"lora_target_modules: {targets}"))
    return str(path)


@pytest.mark.parametrize("use_vllm", ["true", "false"])
def test_a_one_item_target_list_stays_a_list_of_names(untied, tmp_path, use_vllm):
    """TRL's ModelConfig turns a one-item list into a string, which peft reads as a regex over the whole module
    path: `[q_proj]` matched nothing and failed after loading. The project's ModelConfig keeps it a list."""
    from trl import get_peft_config

    model_args = lora_check(untied, "--lora_target_modules", "q_proj", "--use_vllm", use_vllm)
    assert model_args.lora_target_modules == ["q_proj"]
    resolved = resolved_targets(lora_model_on_meta(untied, get_peft_config(model_args)))
    assert resolved.modules == ("model.layers.0.self_attn.q_proj", "model.layers.1.self_attn.q_proj")
    in_yaml = config_with_targets(tmp_path, "cpu-smollm2-vllm.yaml", "[v_proj]")
    assert lora_check(untied, "--use_vllm", use_vllm, config=in_yaml).lora_target_modules == ["v_proj"]


def test_a_target_string_that_matches_no_module_is_refused_with_the_fix(untied, tmp_path):
    """A YAML string is a regex (peft's reading): one that matches nothing fails after loading unless refused here,
    in any LoRA run (this config has no vLLM)."""
    config = config_with_targets(tmp_path, "cpu-smollm2.yaml", "q_proj")
    with pytest.raises(ConfigError, match=r"lora_target_modules: 'q_proj' matches no module of .*\[q_proj\]"):
        lora_check(untied, config=config)
    with pytest.raises(ConfigError, match=r"lora_target_modules: \['qq_proj'\] matches no module"):
        lora_check(untied, "--lora_target_modules", "qq_proj", "--use_vllm", "false")
