# deid-ds — set-up, demo and tests.
#
#   make demo   create .venv, install torch (CPU build first), the package, run the pipeline on the sample
#   make test   same set-up with the dev extras, then the whole test suite
#
# torch is installed on its own, first, so that pip takes the CPU build where one is available instead of
# resolving `torch` through flair and downloading several GB of CUDA packages. Override TORCH_SPEC or
# TORCH_PIP_ARGS (e.g. TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu") on other machines.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_SPEC ?= torch==2.13.0
TORCH_PIP_ARGS ?=
PYTEST_ARGS ?=
DEMO_OUT ?= out/demo

.PHONY: all venv install install-dev demo test test-fast bench clean

all: demo

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.torch: | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(TORCH_PIP_ARGS) "$(TORCH_SPEC)"
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.torch
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.installed

venv: $(VENV)/.installed
install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The pipeline on the embedded sample (data/notes.parquet, kb/sources/): the stages that exist so far.
demo: $(VENV)/.installed
	$(BIN)/deid-ds build-kb --out $(DEMO_OUT)/kb --quiet \
		$(foreach f,$(sort $(wildcard kb/sources/adresses-*.csv.gz)),--ban $(f)) \
		$(foreach f,$(wildcard kb/sources/PS_LibreAcces_Personne_activite_*.txt),--health-directory $(f))
	$(BIN)/deid-ds segment data/notes.parquet --out $(DEMO_OUT)/segment
	$(BIN)/deid-ds weak-label data/notes.parquet --kb $(DEMO_OUT)/kb --out $(DEMO_OUT)/weak --gold data/gold.parquet --keep-empty 0.3 --quiet
	# Tiny embeddings and a few epochs, sized for 2 CPU cores (README: "Training" gives real-corpus sizes).
	$(BIN)/deid-ds embeddings fasttext $(DEMO_OUT)/weak --out $(DEMO_OUT)/fasttext --dim 32 --epochs 5 --bucket 20000 --quiet
	$(BIN)/deid-ds embeddings flair-lm $(DEMO_OUT)/weak --out $(DEMO_OUT)/flair-lm --hidden 64 --epochs 2 --seq-len 50 --batch 16 --threads 1 --quiet
	$(BIN)/deid-ds train $(DEMO_OUT)/weak --out $(DEMO_OUT)/model --fasttext $(DEMO_OUT)/fasttext --flair-lm $(DEMO_OUT)/flair-lm --hidden 64 --max-epochs 3 --quiet
	# The model, the model merged with the rules, and the rules, scored side by side against the sample's gold.
	$(BIN)/deid-ds predict $(DEMO_OUT)/model data/notes.parquet --out $(DEMO_OUT)/predict --kb $(DEMO_OUT)/kb --quiet
	$(BIN)/deid-ds predict $(DEMO_OUT)/model data/notes.parquet --out $(DEMO_OUT)/hybrid --with-rules $(DEMO_OUT)/kb --quiet
	$(BIN)/deid-ds evaluate --gold data/gold.parquet --pred $(DEMO_OUT)/weak --pred $(DEMO_OUT)/predict --pred $(DEMO_OUT)/hybrid \
		--name rules --name model --name hybrid --notes data/notes.parquet --json $(DEMO_OUT)/evaluate.json --figure $(DEMO_OUT)/evaluate.png --quiet
	# The hybrid's entities replaced by surrogates in the original HTML (a fixed demo key: same output every run).
	DEID_DS_KEY=demo-key-not-secret-0001 $(BIN)/deid-ds deidentify data/notes.parquet --spans $(DEMO_OUT)/hybrid --kb $(DEMO_OUT)/kb --out $(DEMO_OUT)/deidentify --mode surrogate --keep-metadata surrogate --quiet
	$(BIN)/deid-ds campaign $(DEMO_OUT)/weak --out $(DEMO_OUT)/campaign --annotators ann1,ann2,ann3 --per-type 5 --quiet

# pytest exits 5 when it collects no test: that is not a failure of the code under test.
test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no test"; exit 0; fi; exit $$rc

test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n 2 -m "not slow" $(PYTEST_ARGS)

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/segment.py

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis build *.egg-info
