# forestlab: thin wrappers over the CLI and pytest. `make help` lists the targets.
# Everything runs inside a project-local virtual environment (.venv), created on first use.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.forestlab-installed
JOBS   ?= 2
# pytest workers (pytest-xdist): the suite runs on both cores of a CI machine; an idle worker takes tests queued for
# the other (--dist worksteal), so that neither waits on the other's last long test
TEST_WORKERS ?= 2
# Experiments run by `make tables` / `make figures` (default: every registered one, listed after install).
EXPERIMENTS ?=
LIST_EXPERIMENTS = $(if $(EXPERIMENTS),echo $(EXPERIMENTS),$(BIN)/forestlab list experiments | cut -d' ' -f1)
# The four studies' reproductions: every experiment but those beyond the studies (ours: the PAC-Bayes successors'
# wu2021_rfc and the *_modern_* experiments of today's methods).
BEYOND_STUDIES := ^(wu2021_|.*_modern_)

.DEFAULT_GOAL := help
.PHONY: help install run tables figures compare report reproduce study-experiments test test-full bench \
        bench-reproduction lint clean-results

help: ## Show this help
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-14s %s\n", $$1, $$2}'

install: $(STAMP) ## Create .venv and install forestlab with its test and cluster extras
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,dask]"
	@# compile the numba kernels once (numba's disk cache: the tree builder's port, TreeRank's, RankSVM's, the forest
	@# kernel's, the PAC-Bayes successors'), not in every worker of the first runs (nor of a fresh clone's tests)
	$(BIN)/python -m forestlab.learners
	@touch $(STAMP)

run: install ## Run the default experiment (offline, under a minute) and print its table
	$(BIN)/forestlab run launcher.n_jobs=$(JOBS)
	$(BIN)/forestlab tables quickstart
	@cat results/tables/quickstart/test_risk.md

# Every experiment's runs go to one pool of workers (`forestlab run experiment=a,b,c`): the workers start once and
# no core idles between two experiments; then one process renders every experiment's tables (figures).
tables: install ## Run every experiment (incrementally, one pool) and render every table and comparison
	@set -e; list=$$($(LIST_EXPERIMENTS) | tr -s ' \n' ',' | sed 's/^,//; s/,$$//'); \
	$(BIN)/forestlab run experiment=$$list launcher.n_jobs=$(JOBS) --quiet; \
	$(BIN)/forestlab tables $$list; \
	$(BIN)/forestlab compare $$list

figures: install ## Run every experiment (incrementally, one pool) and draw every figure
	@set -e; list=$$($(LIST_EXPERIMENTS) | tr -s ' \n' ',' | sed 's/^,//; s/,$$//'); \
	$(BIN)/forestlab run experiment=$$list launcher.n_jobs=$(JOBS) --quiet; \
	$(BIN)/forestlab figures $$list

compare: install ## Print published vs reproduced numbers for every experiment with stored runs
	$(BIN)/forestlab compare

report: install ## Build the reproduction report, results/report/index.html, from the stored runs (seconds)
	$(BIN)/forestlab report

reproduce: install ## The four studies' tables, figures and report (`make tables figures report` without the experiments beyond them)
	$(MAKE) tables figures report EXPERIMENTS="$$($(MAKE) -s study-experiments)"

study-experiments: ## List the studies' experiments (what `make reproduce` runs; after `make install`)
	@$(BIN)/forestlab list experiments | cut -d' ' -f1 | grep -Ev '$(BEYOND_STUDIES)' | tr '\n' ' '; echo

# forestlab's modules compiled once (compileall writes them even under PYTHONDONTWRITEBYTECODE=1, which would
# otherwise make each of the tests' hundreds of forestlab processes compile every module again: 0.8 -> 0.6 s a
# command); Python recompiles in memory any module edited since
test: install ## Run the test suite (set FORESTLAB_DATA_MIRROR for the dataset tests)
	@$(BIN)/python -m compileall -q forestlab
	$(BIN)/python -m pytest -m "not slow and not network" -q -n $(TEST_WORKERS) --dist worksteal

test-full: install ## Run every test, slow ones included (never the network ones)
	@$(BIN)/python -m compileall -q forestlab
	$(BIN)/python -m pytest -m "not network" -q -n $(TEST_WORKERS) --dist worksteal

bench: install ## Run the benchmarks and write bench/results.json and bench/results.md
	$(BIN)/python tests/benchmarks/run.py --out bench

bench-reproduction: install ## Time `make reproduce`'s commands from an empty store (about 45 min on 2 cores)
	$(BIN)/python tests/benchmarks/run.py --out bench --only reproduction

lint: install ## Lint with ruff
	$(BIN)/ruff check forestlab tests

clean-results: ## Delete results/ (the run store, tables and figures)
	rm -rf results
