"""The server engine (train/engines/server.py, its HTTP client train/engines/vllm_server_api.py): rollouts from
vLLM OpenAI servers that load each new adapter at run time.

URL checks, adapter names, the request bodies and error handling against stub HTTP servers from the
standard library, the engine itself against them, and config validation. Real runs (a bad URL stopping
the trainer, a CPU vLLM server): tests/integration/test_server_engine.py.
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.helpers.stub_vllm_server import StubServer
from tests.helpers.vllm_server import SERVER_ENV, server_command
from train.config import ConfigError, parse_config, resolve_run
from train.config.vllm_install import installed_vllm
from train.engines.vllm_server_api import (
    ServerError,
    ServerPool,
    ServerSettings,
    adapter_name,
    completion_payload,
    new_run_tag,
    normalize_url,
)

SERVER_CONFIG = "configs/cpu-smollm2-vllm-server.yaml"
TOOLS_CONFIG = "configs/cpu-smollm2-tools.yaml"
SAMPLING = dict(repetition_penalty=1.0, temperature=0.7, top_p=1.0, top_k=0, min_p=0.0, max_tokens=8, logprobs=0)


# ---- cheap: URLs, names, request bodies ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("http://node7:8000/", "http://node7:8000"),
        ("https://rollouts.example/v1", "https://rollouts.example"),
        (" http://[::1]:9000/v1/ ", "http://[::1]:9000"),
    ],
)
def test_server_urls_are_normalized(url, normal):
    assert normalize_url(url) == normal


@pytest.mark.parametrize(
    "url", ["127.0.0.1:8000", "ftp://host:21", "http://", "http://host:99999", "http://host:8000/?x=1", "localhost"]
)
def test_malformed_server_urls_are_refused_with_the_url(url):
    with pytest.raises(ValueError, match="vllm_server_urls"):
        normalize_url(url)


def test_adapter_names_are_unique_per_run_and_version():
    tag, other = new_run_tag(), new_run_tag()
    assert tag != other and len(tag) == 8
    assert adapter_name(tag, 3) == f"verigrpo-{tag}-v3"
    assert len({adapter_name(t, v) for t in (tag, other) for v in range(1, 50)}) == 98


def test_the_completion_request_asks_for_token_ids_and_logprobs():
    body = completion_payload([[1, 2], [3]], model="verigrpo-x-v1", n=4, structured_outputs_regex="A.*", **SAMPLING)
    assert body["model"] == "verigrpo-x-v1" and body["prompt"] == [[1, 2], [3]] and body["n"] == 4
    assert body["logprobs"] == 0 and body["return_token_ids"] and body["return_tokens_as_token_ids"]
    assert body["structured_outputs"] == {"regex": "A.*"}
    # the body is a vLLM CompletionRequest (vllm 0.27.1's own model validates it) when vLLM is installed
    if installed_vllm():
        from vllm.entrypoints.openai.completion.protocol import CompletionRequest

        request = CompletionRequest(**body)
        assert request.prompt == [[1, 2], [3]] and request.return_token_ids and request.logprobs == 0


# ---- stub servers (standard library) ---------------------------------------------------------------


@pytest.fixture
def stubs():
    made = []

    def make(**kwargs) -> StubServer:
        made.append(StubServer(**kwargs))
        return made[-1]

    yield make
    for stub in made:
        stub.close()


def pool_of(*urls, timeout=60.0, retries=0) -> ServerPool:
    return ServerPool(ServerSettings(urls=tuple(urls), adapter_dir="/tmp/x", request_timeout=timeout, retries=retries))


def test_each_adapter_is_loaded_on_every_server_and_the_old_one_unloaded(stubs):
    a, b = stubs(), stubs()
    pool = pool_of(a.url, b.url)
    pool.wait_until_ready(60)
    assert pool.served_models == {a.url: ["/models/base"], b.url: ["/models/base"]}
    pool.load("run-v1", "/shared/run-v1")
    pool.load("run-v2", "/shared/run-v2")
    for stub in (a, b):
        posts = [(path, body) for path, body in stub.requests if body is not None]
        assert posts == [
            ("/v1/load_lora_adapter", {"lora_name": "run-v1", "lora_path": "/shared/run-v1"}),
            ("/v1/load_lora_adapter", {"lora_name": "run-v2", "lora_path": "/shared/run-v2"}),
            ("/v1/unload_lora_adapter", {"lora_name": "run-v1"}),
        ]
    assert pool.adapter == "run-v2"
    pool.unload_current()  # at the end of a run: the servers outlive it
    assert all(stub.requests[-1] == ("/v1/unload_lora_adapter", {"lora_name": "run-v2"}) for stub in (a, b))
    assert pool.adapter is None
    pool.close()


def test_prompts_are_spread_over_the_servers_and_reassembled_in_order(stubs):
    a, b = stubs(), stubs()
    pool = pool_of(a.url, b.url)
    with pytest.raises(RuntimeError, match="before its first sync"):
        pool.generate([[1]], n=2, **SAMPLING)
    pool.load("run-v1", "/p")
    out = pool.generate([[10, 1], [20, 2], [30, 3]], n=2, **SAMPLING)
    (_, first), (_, second) = (next(r for r in s.requests if r[0] == "/v1/completions") for s in (a, b))
    assert first["prompt"] == [[10, 1]] and second["prompt"] == [[20, 2], [30, 3]]
    assert first["model"] == second["model"] == "run-v1" == out["adapter"]
    assert out["prompt_ids"] == [[10, 1], [20, 2], [30, 3]]
    assert out["completion_ids"] == [[10, 100], [10, 101], [20, 100], [20, 101], [30, 100], [30, 101]]
    assert out["logprobs"][1] == [[-0.2], [-0.2]] and out["logprob_token_ids"][1] == [[10], [101]]
    pool.close()


def test_a_server_answering_with_an_error_is_named(stubs):
    good, bad = stubs(), stubs(status=500)
    pool = pool_of(good.url, bad.url)
    with pytest.raises(ServerError, match=rf"vLLM server {bad.url}: loading adapter run-v1 .* HTTP 500: .*stub says"):
        pool.load("run-v1", "/p")


def test_a_server_without_runtime_lora_says_how_to_start_it(stubs):
    bad = stubs(status=404)
    with pytest.raises(ServerError, match=r"HTTP 404.*VLLM_ALLOW_RUNTIME_LORA_UPDATING=True .*--enable-lora"):
        pool_of(bad.url).load("run-v1", "/p")


def test_a_slow_server_is_an_error_not_a_wait_forever(stubs):
    slow = stubs(delay=3.0)
    pool = pool_of(slow.url, timeout=0.5)
    with pytest.raises(
        ServerError,
        match=rf"vLLM server {slow.url} did not answer within 0 s \(loading adapter.*raise vllm_server_request_timeout, "
        r"and with several training processes ddp_timeout with it",
    ):
        pool.load("run-v1", "/p")


def test_an_unreachable_server_is_retried_a_bounded_number_of_times(dead_url):
    url = dead_url
    pool = pool_of(url, retries=1)
    started = time.monotonic()
    with pytest.raises(ServerError, match=rf"vLLM server {url} is unreachable \(loading adapter .*2 attempt\(s\)\)"):
        pool.load("run-v1", "/p")
    assert time.monotonic() - started < 60  # one 1 s back-off; bounded, whatever the load
    with pytest.raises(ServerError, match=rf"vLLM server\(s\) {url} not ready after 1 s"):
        pool.wait_until_ready(1)


def test_a_server_that_lost_the_adapter_is_an_error_not_a_stale_rollout(stubs):
    a = stubs()
    pool = pool_of(a.url)
    pool.load("run-v1", "/p")
    a.status = 404  # e.g. restarted: vLLM answers 404 for a model name it does not know
    with pytest.raises(ServerError, match=rf"vLLM server {a.url}: generating with run-v1 failed with HTTP 404"):
        pool.generate([[1]], n=1, **SAMPLING)


def test_a_404_for_an_adapter_the_server_does_not_know_is_not_blamed_on_its_flags(stubs):
    """vLLM answers an unknown adapter name with 404 too ("cannot be found"); only the framework's bare 404 (no
    such endpoint) means the server runs without runtime LoRA updating."""
    a = stubs()
    with pytest.raises(ServerError, match=r"HTTP 404: .*cannot be found") as raised:
        pool_of(a.url).servers[0].unload_adapter("never-loaded")
    assert "no runtime LoRA endpoints" not in str(raised.value)


def engine_on(stub, tmp_path, policy, retries=3):
    from tests.helpers.training import fake_accelerator
    from train.engines.server import ServerAdapterGeneration

    settings = ServerSettings(
        urls=(stub.url,), adapter_dir=str(tmp_path / "adapters"), request_timeout=60.0, retries=retries
    )
    return ServerAdapterGeneration(
        model=policy, accelerator=fake_accelerator(), processing_class=None, mode="server", settings=settings
    )


def test_a_restarted_server_gets_the_current_adapter_again_and_the_run_goes_on(stubs, tiny_policy, tmp_path):
    """A restart between two syncs loses the runtime-loaded adapter: the next sync loads the new one, finds the
    old one gone (404), checks the server serves the new one and goes on. A restart between a sync and a
    generation: the generation's 404 loads the current adapter again and asks once more."""
    a, b = stubs(), stubs()
    engine = engine_on(a, tmp_path, tiny_policy)
    engine.vllm_client.servers.append(type(engine.vllm_client.servers[0])(b.url, 60.0, 3))  # a second server
    engine.sync_weights()
    a.restart()
    engine.sync_weights()  # unloading v1 from the restarted server answers 404: not an error
    current = adapter_name(engine.run_tag, 2)
    assert a.restarts == 1 and list(a.adapters) == [current] and list(b.adapters) == [current]
    a.restart()  # now between the sync and the rollouts
    out = engine.vllm_client.generate([[5, 1], [6, 2]], n=2, **SAMPLING)
    assert out["adapter"] == current and out["completion_ids"][0] == [5, 100] and list(a.adapters) == [current]
    loads = [body["lora_name"] for path, body in a.requests if path == "/v1/load_lora_adapter"]
    assert loads == [adapter_name(engine.run_tag, 1), current, current]  # v2 once more, after the generation's 404
    engine.close()
    assert a.adapters == {} and b.adapters == {}


def test_a_server_that_stays_down_ends_the_sync_with_its_url(stubs, tiny_policy, tmp_path):
    a = stubs()
    engine = engine_on(a, tmp_path, tiny_policy, retries=1)
    engine.sync_weights()
    a.close()
    with pytest.raises(ServerError, match=rf"vLLM server {a.url} is unreachable \(loading adapter .*2 attempt"):
        engine.sync_weights()
    engine.close()


def test_the_server_engine_loads_each_version_and_cleans_up_at_the_end(stubs, tiny_policy, tmp_path):
    """The engine itself (TRL's generation object, without vLLM): every sync saves the adapter where the servers
    read it and loads it under a new name; at the end the last one is unloaded and its files are gone, while
    the shared adapter directory stays."""
    from tests.helpers.training import fake_accelerator
    from train.engines.server import ServerAdapterGeneration

    a = stubs()
    adapters = tmp_path / "vllm-adapters"
    settings = ServerSettings(urls=(a.url,), adapter_dir=str(adapters), request_timeout=60.0, retries=0)
    engine = ServerAdapterGeneration(
        model=tiny_policy, accelerator=fake_accelerator(), processing_class=None, mode="server", settings=settings
    )
    engine.sync_weights()
    engine.sync_weights()
    first, second = (adapter_name(engine.run_tag, v) for v in (1, 2))
    posts = [(path, body["lora_name"]) for path, body in a.requests if body]
    assert posts == [
        ("/v1/load_lora_adapter", first),
        ("/v1/load_lora_adapter", second),
        ("/v1/unload_lora_adapter", first),
    ]
    assert [p.name for p in adapters.iterdir()] == [second]
    state = engine.manifest_state()
    assert state["mode"] == "server" and state["rollout_adapter"] == second and state["adapter_versions_loaded"] == 2
    assert state["servers"] == [a.url] and state["served_models"] == {a.url: ["/models/base"]}
    engine.close()
    assert a.requests[-1] == ("/v1/unload_lora_adapter", {"lora_name": second})
    assert adapters.is_dir() and list(adapters.iterdir()) == []
    assert engine.manifest_state()["rollout_adapter"] == second  # the final run.json still names it


# ---- what each server runs with, checked when the pool starts ---------------------------------------------


@pytest.fixture(scope="module")
def probe_adapter(tmp_path_factory):
    """The zero probe adapter of a rank-12 LoRA on a tiny Llama (train/engines/vllm_lora.py)."""
    from peft import LoraConfig

    from tests.helpers.training import tiny_llama_dir
    from train.engines.vllm_lora import lora_model_on_meta, write_probe_adapter

    root = tmp_path_factory.mktemp("probe")
    lora = LoraConfig(r=12, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    return str(write_probe_adapter(lora_model_on_meta(str(tiny_llama_dir(root / "model")), lora), root / "probe"))


def checked_pool(*urls, lora_rank=12) -> ServerPool:
    pool = ServerPool(ServerSettings(urls=tuple(urls), adapter_dir="/tmp/x", request_timeout=60.0, lora_rank=lora_rank))
    pool.wait_until_ready(60)
    return pool


def test_a_server_started_as_documented_passes_the_start_checks(stubs, probe_adapter):
    a = stubs()
    pool = checked_pool(a.url)
    pool.check_servers(probe_adapter)
    probes = [body for path, body in a.requests if path == "/v1/completions"]
    assert [b["temperature"] for b in probes] == [1.0, 0.5]  # one request at a time: no batched prompt_logprobs
    assert all(
        b["model"] == "base" and b["top_p"] == 1.0 and b["logprobs"] == 5 and b["max_tokens"] == 1 for b in probes
    )
    assert not any("prompt_logprobs" in b for b in probes)
    (load,) = [body for path, body in a.requests if path == "/v1/load_lora_adapter"]
    assert load["lora_path"] == probe_adapter and load["lora_name"].startswith("verigrpo-probe-")
    assert a.requests[-1] == ("/v1/unload_lora_adapter", {"lora_name": load["lora_name"]})
    assert pool.get_server_info() == {"model_config": {"logprobs_mode": "processed_logprobs"}}
    pool.close()


@pytest.mark.parametrize(
    ("stub", "problem"),
    [
        ({"logprobs_mode": "raw_logprobs"}, r"it returns raw_logprobs \(logprob gaps 1.00x wider at temperature 0.5"
                                            r" than at 1; after temperature: 2x\), not processed_logprobs .*"
                                            r"add --logprobs-mode processed_logprobs"),
        ({"logprobs_mode": "processed_logits"}, r"it returns logits \(its top-5 'probabilities' sum to"),
        ({"logprobs_mode": "raw_logprobs", "dev_mode": True}, r"it returns raw_logprobs \(its /server_info says so\)"),
        ({"lora": "no-runtime"}, r"it has no runtime LoRA endpoints: start it with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"),
        ({"lora": "disabled"}, r"LoRA is not enabled: add --enable-lora"),
        ({"max_lora_rank": 8}, r"its --max-lora-rank is below the adapter's rank 12: set --max-lora-rank 16"),
        (
            {"logprobs_mode": "raw_logprobs", "lora": "disabled"},
            r"it returns raw_logprobs .*add --logprobs-mode processed_logprobs; LoRA is not enabled: add --enable-lora",
        ),
    ],
    ids=["raw-logprobs", "logits", "raw-dev-mode", "no-runtime-lora", "no-enable-lora", "rank-too-small", "two"],
)  # fmt: skip
def test_a_server_started_without_a_flag_is_refused_with_the_url_and_the_flag(stubs, probe_adapter, stub, problem):
    good, bad = stubs(), stubs(**stub)
    pool = checked_pool(good.url, bad.url)
    with pytest.raises(ServerError, match=rf"^vLLM server {bad.url} does not run as this run needs: {problem}.*\. "
                                          r"Start it as VLLM_ALLOW_RUNTIME_LORA_UPDATING=True .*--max-lora-rank 16 "):  # fmt: skip
        pool.check_servers(probe_adapter)
    pool.close()


def test_a_server_that_cannot_read_the_adapter_directory_is_refused(stubs):
    pool = checked_pool(stubs().url)
    with pytest.raises(ServerError, match=r"cannot read the probe adapter at /unreadable/probe: vllm_adapter_dir must"):
        pool.check_servers("/unreadable/probe")


def test_the_trainer_checks_the_servers_with_a_probe_adapter_and_leaves_nothing(stubs, tmp_path):
    """What engine_factory runs before any model loads (train/engines/server.py check_servers): the probe adapter
    is written where the real ones will be, has the run's rank, and is gone afterwards with the directories it
    needed; a server whose --max-lora-rank is too small stops it."""
    from tests.helpers.training import tiny_llama_dir
    from train.engines.server import check_servers, server_settings

    model = str(tiny_llama_dir(tmp_path / "model"))
    for stub, rank in ((stubs(), "12"), (stubs(max_lora_rank=8), "12")):
        out = tmp_path / f"run-{stub.max_lora_rank}"
        script_args, training_args, model_args = parse_config(
            ["--config", SERVER_CONFIG, "--vllm_server_urls", stub.url, "--model_name_or_path", model,
             "--lora_r", rank, "--output_dir", str(out)]
        )  # fmt: skip
        settings = server_settings(script_args, training_args, model_args)
        if stub.max_lora_rank >= 12:
            check_servers(settings, model_args, training_args)
        else:
            with pytest.raises(ServerError, match=rf"{stub.url} .*set --max-lora-rank 16"):
                check_servers(settings, model_args, training_args)
        (load,) = [body for path, body in stub.requests if path == "/v1/load_lora_adapter"]
        assert load["lora_path"].startswith(str(out / "vllm-adapters" / "verigrpo-probe-"))
        assert not out.exists()  # the probe and the directories made for it are gone


def test_only_the_main_process_checks_the_servers_and_the_others_get_its_verdict(stubs, monkeypatch, tmp_path):
    """With several processes (accelerate's state and broadcast replaced: one process here) the main one probes
    and broadcasts its verdict; another asks the servers nothing and stops on the verdict it receives."""
    import accelerate
    import accelerate.utils

    from tests.helpers.training import tiny_llama_dir
    from train.engines.server import check_servers_on_main, server_settings

    bad = stubs(logprobs_mode="raw_logprobs")
    script_args, training_args, model_args = parse_config(
        ["--config", SERVER_CONFIG, "--vllm_server_urls", bad.url, "--model_name_or_path",
         str(tiny_llama_dir(tmp_path / "model")), "--lora_r", "12", "--output_dir", str(tmp_path / "run")]
    )  # fmt: skip
    settings = server_settings(script_args, training_args, model_args)
    state = type("State", (), {"num_processes": 2, "is_main_process": False})
    monkeypatch.setattr(accelerate, "PartialState", lambda: state)
    verdict = f"vLLM server {bad.url} does not run as this run needs: (the main process's verdict)"
    monkeypatch.setattr(accelerate.utils, "broadcast_object_list", lambda objects: [verdict])
    with pytest.raises(ServerError, match=r"the main process's verdict"):
        check_servers_on_main(settings, model_args, training_args)
    assert bad.requests == []  # another process asks the servers nothing

    state.is_main_process = True
    sent = []
    monkeypatch.setattr(
        accelerate.utils, "broadcast_object_list", lambda objects: sent.append(list(objects)) or objects
    )
    with pytest.raises(ServerError, match=r"it returns raw_logprobs"):
        check_servers_on_main(settings, model_args, training_args)
    assert len(sent) == 1 and "it returns raw_logprobs" in sent[0][0]  # sent before the main process raises

    good = stubs()
    sent.clear()
    check_servers_on_main(dataclasses.replace(settings, urls=(good.url,)), model_args, training_args)
    assert sent == [[None]]  # no refusal: the others go on


def test_a_server_that_cannot_hold_the_longest_sequence_is_refused(stubs, tmp_path):
    """Its --max-model-len (from /v1/models) against the longest prompt + max_completion_length: otherwise HTTP 400
    mid-run. The CPU config's completions are 48 tokens."""
    from tests.helpers.training import tiny_llama_dir
    from train.engines.server import check_servers, server_settings

    model = str(tiny_llama_dir(tmp_path / "model"))
    short, long = stubs(max_model_len=64), stubs(max_model_len=512)
    for stub in (short, long):
        script_args, training_args, model_args = parse_config(
            ["--config", SERVER_CONFIG, "--vllm_server_urls", stub.url, "--model_name_or_path", model,
             "--lora_r", "12", "--output_dir", str(tmp_path / "run")]
        )  # fmt: skip
        settings = server_settings(script_args, training_args, model_args)
        if stub is long:
            check_servers(settings, model_args, training_args, prompt_tokens=lambda: 40)
            continue
        with pytest.raises(
            ServerError,
            match=rf"vLLM server {stub.url} holds at most 64 tokens per sequence \(--max-model-len 64\) but this run "
            r"needs 88: the longest prompt \(40 tokens\) \+ max_completion_length \(48\)\. Start it with "
            r"--max-model-len 88 or more",
        ):
            check_servers(settings, model_args, training_args, prompt_tokens=lambda: 40)


def test_a_tool_run_needs_room_for_a_later_turn(stubs, tmp_path):
    """After a tool result TRL's tool loop sends the conversation so far (up to max_completion_length past the
    prompt) and asks for max_completion_length new tokens again: a tool run needs the prompt + 2 x 48 here."""
    from train.engines.server import check_servers, server_settings

    stub = stubs(max_model_len=128)
    script_args, training_args, model_args = parse_config(
        ["--config", TOOLS_CONFIG, "--use_vllm", "true", "--vllm_mode", "server", "--vllm_server_urls", stub.url,
         "--max_completion_length", "48", "--output_dir", str(tmp_path / "run")]
    )  # fmt: skip
    settings = server_settings(script_args, training_args, model_args)
    assert settings.tool_turns
    plain = dataclasses.replace(settings, tool_turns=False)
    pool = ServerPool(plain)
    try:
        pool.wait_until_ready(60)
        pool.check_lengths(40, 48)  # 88 <= 128: one turn fits
        with pytest.raises(
            ServerError,
            match=rf"vLLM server {stub.url} holds at most 128 tokens per sequence \(--max-model-len 128\) but this run "
            r"needs 136: the longest prompt \(40 tokens\) \+ 2 x max_completion_length \(96: after a tool result "
            r"TRL's tool loop sends up to max_completion_length tokens of conversation past the prompt and asks for "
            r"48 more\)\. Start it with --max-model-len 136 or more",
        ):
            pool.check_lengths(40, 48, tool_turns=True)
    finally:
        pool.close()
    with pytest.raises(ServerError, match=r"needs 136: the longest prompt \(40 tokens\) \+ 2 x"):
        check_servers(settings, model_args, training_args, prompt_tokens=lambda: 40)


def test_a_tool_runs_longest_prompt_counts_the_tool_schema_its_template_renders():
    """A tool run's prompts are rendered with the tools' schemas by the run's tool template: the length the servers
    must hold is counted the same way (train/grpo.py gives the run's tokenizer and schemas)."""
    from python_tool.trl_environment import tool_limits, tool_schemas
    from train.config.tool_checks import tool_tokenizer
    from train.data.rows import to_dataset
    from train.engines.server import longest_prompt_tokens

    script_args, training_args, model_args = parse_config(["--config", TOOLS_CONFIG])
    if not Path(model_args.model_name_or_path, "tokenizer_config.json").is_file():
        pytest.skip("the warm-started CPU tool model is needed (make setup)")
    from problems.domains import domain_of_source
    from train.data.rows import load_training_problems

    problems = load_training_problems(script_args, domain_of_source(script_args.dataset))
    dataset = to_dataset(problems[:3], script_args.num_shots, tools=True)
    tokenizer = tool_tokenizer(script_args, model_args, training_args)
    schemas = tool_schemas(tool_limits(script_args))
    rendered = [
        tokenizer.apply_chat_template(p, tools=schemas, add_generation_prompt=True, tokenize=True, return_dict=True)
        for p in dataset["prompt"]
    ]
    expected = max(len(r["input_ids"]) for r in rendered)
    counted = longest_prompt_tokens(dataset, model_args, tokenizer=tokenizer, tools=schemas)
    assert counted == expected
    assert counted > longest_prompt_tokens(dataset, model_args, tokenizer=tokenizer) + 50  # the schema's tokens
    assert '"name": "python"' in tokenizer.decode(rendered[0]["input_ids"])


def test_the_longest_prompt_is_counted_as_the_chat_template_renders_it(tmp_path):
    from datasets import Dataset

    from train.engines.server import longest_prompt_tokens

    script_args, _, model_args = parse_config(["--config", SERVER_CONFIG])
    if not Path(model_args.model_name_or_path, "tokenizer_config.json").is_file():
        pytest.skip("the prepared CPU model is needed (make setup)")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    short, long = [{"role": "user", "content": "1+1?"}], [{"role": "user", "content": "12 + 30 = ? " * 20}]
    expected = len(
        tokenizer.apply_chat_template(long, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
    )
    assert longest_prompt_tokens(Dataset.from_dict({"prompt": [short, long, short]}), model_args) == expected > 100


# ---- config validation -----------------------------------------------------------------------------


def test_the_server_config_validates_and_refuses_misused_or_malformed_urls(tmp_path):
    resolve_run(*parse_config(["--config", SERVER_CONFIG]))  # needs no local vLLM: the servers hold it
    with pytest.raises(ConfigError, match=r"vllm_server_urls: 'localhost:8000' is not an http\(s\) URL"):
        resolve_run(*parse_config(["--config", SERVER_CONFIG, "--vllm_server_urls", "localhost:8000"]))
    with pytest.raises(ConfigError, match=r"listed twice"):
        resolve_run(*parse_config(["--config", SERVER_CONFIG, "--vllm_server_urls", "http://a:1", "http://a:1/v1"]))
    with pytest.raises(ConfigError, match=r"vllm_server_urls is set but this run does not roll out on vLLM servers"):
        resolve_run(*parse_config(["--config", SERVER_CONFIG, "--vllm_mode", "colocate"]))
    with pytest.raises(ConfigError, match=r"vllm_mode: 'server' with a LoRA policy needs vllm_server_urls"):
        no_urls = tmp_path / "no-urls.yaml"
        text = (REPO / SERVER_CONFIG).read_text()
        no_urls.write_text(text.replace("vllm_server_urls: [http://127.0.0.1:8000]", "vllm_server_urls: []"))
        resolve_run(*parse_config(["--config", str(no_urls)]))


def test_the_config_header_starts_the_server_the_tests_start():
    """The command in configs/cpu-smollm2-vllm-server.yaml (and docs/scaling-out.md) is the fixture's, on port 8000."""
    header = [line.lstrip("# ").rstrip(" \\") for line in (REPO / SERVER_CONFIG).read_text().splitlines()]
    start = next(i for i, line in enumerate(header) if line.startswith("VLLM_ALLOW_RUNTIME_LORA_UPDATING"))
    end = next(i for i in range(start, len(header)) if "--logprobs-mode" in header[i])
    words = shlex.split(" ".join(header[start : end + 1]))
    env = [f"{k}={v}" for k, v in SERVER_ENV.items()]
    assert words == env + server_command(8000)
