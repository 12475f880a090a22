# `make run` and `make test` set up .venv on first use; later calls reinstall nothing.
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.phenomt-installed
CORES ?= all
CONFIG ?= config/config.yaml
export PATH := $(abspath $(BIN)):$(PATH)
export OMP_NUM_THREADS := 1
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD := 1

.PHONY: setup run report test lint dryrun bench gpu-check clean

setup: $(STAMP)

$(STAMP): pyproject.toml envs/constraints.txt envs/fairseq-deps.txt scripts/setup.sh
	bash scripts/setup.sh $(VENV)
	touch $@

# run and test recompile the modules changed since setup first (scripts/setup.sh says why).
run: $(STAMP)
	$(BIN)/python -m compileall -q src/phenomt
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG)

# The HTML report of a run (results/report.html): builds what the report shows that is still
# missing (after `make run`, only the HTML views of the tables), then the report itself.
report: $(STAMP)
	$(BIN)/snakemake report_inputs --cores $(CORES) --configfile $(CONFIG)
	$(BIN)/snakemake report_inputs --report results/report.html --configfile $(CONFIG)

dryrun: $(STAMP)
	$(BIN)/snakemake -n --configfile $(CONFIG)

# Tests run in one pytest-xdist worker per core (TEST_WORKERS=0: in this process): a worker
# takes one module at a time, and one takes every test of the shared tiny run
# (tests/conftest.py), which is made first as it is the longest.
TEST_WORKERS ?= auto
test: $(STAMP)
	$(BIN)/python -m compileall -q src/phenomt
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/python -m pytest -q --durations=8 -n $(TEST_WORKERS) --dist loadgroup \
		--no-loadscope-reorder

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/snakemake --lint --configfile $(CONFIG)

bench: $(STAMP)
	$(BIN)/python benchmarks/stage_times.py results/benchmarks

# The GPU path on one CUDA GPU (scripts/gpu_check.py): overfitting tests in fp32 and fp16, one
# epoch per model kind at the paper config's settings, decoding speed. Builds the findings
# data it trains on first (needs the data mirror). `make gpu-check OUT=dir`.
OUT ?= results/gpu-check
FINDINGS_DATA := results/findings/models/transformer.de-en
gpu-check: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile config/findings.yaml \
		$(FINDINGS_DATA)/bin $(FINDINGS_DATA)/bin-test/multi30k.test2016
	$(BIN)/python scripts/gpu_check.py $(OUT)

clean:
	rm -rf results resources .snakemake
