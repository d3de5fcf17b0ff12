# fairseq-hier: `make try`, `make demo` and `make test` on a fresh machine (each runs the idempotent
# install step).
SHELL := /bin/bash
# the environment scripts/install.sh installs into: the active virtualenv, else the active conda
# environment, else ./.venv
PY := $(or $(VIRTUAL_ENV),$(CONDA_PREFIX),$(CURDIR)/.venv)/bin/python

.PHONY: install try demo demo-parsingsum test benchmark report-check gpu-check
# the fresh-machine path: as root, the install step may also install the one system package it
# needs (Perl's XML::Parser, apt-get). Into one's own environment: bash scripts/install.sh, which
# only says what is missing.
install:
	FAIRSEQ_HIER_SYSTEM_PACKAGES=1 bash scripts/install.sh

# the first run (examples/own_data/try.sh): a generated JSON-lines set through the own-data recipe,
# a tiny PHT trained on the CPU, decoded, scored and used on new text, in try_work/
try: install
	bash examples/own_data/try.sh

# TIER=hard: the hard tier (examples/demo/run_hard.sh): a corpus no system saturates, two seeds,
# transformer / pht / vht / liu_ht and vanilla vs attention-aligned beam search compared with
# intervals, an ordering claimed only where it holds in every seed
TIER ?= default
demo: install
ifeq ($(TIER),hard)
	bash examples/demo/run_hard.sh
else ifeq ($(TIER),default)
	bash examples/demo/run_demo.sh
	bash examples/attention_alignment/run_demo.sh
	bash examples/demo/run_ranker.sh
	bash examples/demo/report.sh
else
	@echo "make demo: TIER must be default or hard, got '$(TIER)'" >&2; exit 2
endif

# ParsingSum (003): the Multi-News recipe end to end on a generated corpus, four systems
demo-parsingsum: install
	bash examples/demo/run_parsingsum.sh

# the demo's report in headless Chromium (installed by apt if missing): screenshot + every image
# loaded; not part of `make test`. REPORT=path/report.html checks another report.
report-check:
	bash scripts/report_check.sh $(REPORT)

# two pytest workers, one per core; each test file stays on one worker (its module fixtures are
# built once), the few session fixtures are built by both; the longest files start first
# (tests/conftest.py LONGEST_FILES)
test: install
	$(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder tests

benchmark: install
	$(PY) benchmarks/training_cost.py
	$(PY) benchmarks/decoding_speed.py
	$(PY) benchmarks/alignment_speed.py --until-decided
	$(PY) benchmarks/hat_training_cost.py
	$(PY) benchmarks/doc_mt_training_cost.py
	$(PY) benchmarks/parsing_speed.py --until-decided
	$(PY) benchmarks/doc_mt_prepare_speed.py
	$(PY) benchmarks/prepare_speed.py

# GPU readiness in one command (docs/gpu.md): every architecture through fairseq-train in fp32,
# --bf16 and --fp16 first, then fairseq-generate, then the benchmarks on CUDA in bf16
# (training_cost.py at 3000 tokens first), a 2-process torchrun run and the 11 GiB max-batch search;
# GPU_CHECK_JOBS steps at once (4 on a GPU). GPU_CHECK_OUT (gpu_check/) gets table.md and
# gpu_check.json, rewritten as each step starts or ends; GPU_CHECK_BUDGET=SECONDS stops it in
# time (the steps left "not run", exit 3). GPU_CHECK_DRY_RUN=1: the same on the CPU at the
# smallest sizes. No install step: it runs with this environment's python where there is one,
# else with python3 on PATH (a GPU machine's own torch), where the project need only be importable.
GPU_CHECK_PY = $(if $(wildcard $(PY)),$(PY),python3)
gpu-check:
	$(GPU_CHECK_PY) scripts/gpu_check.py
