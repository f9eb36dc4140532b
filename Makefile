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

.PHONY: all venv install install-dev label-studio demo demo-files test test-fast bench clean

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

# Label Studio in its own environment (it pins packages deid-ds's .venv has at other versions, pyarrow included):
# the server that tests/campaign/test_label_studio_server.py starts, and the one docs/annotation-tools.md runs.
LABEL_STUDIO_VENV ?= .venv-label-studio
LABEL_STUDIO_SPEC ?= label-studio==1.23.2
label-studio: $(LABEL_STUDIO_VENV)/bin/label-studio

$(LABEL_STUDIO_VENV)/bin/label-studio:
	$(PYTHON) -m venv $(LABEL_STUDIO_VENV)
	$(LABEL_STUDIO_VENV)/bin/python -m pip install --quiet "$(LABEL_STUDIO_SPEC)"

# The pipeline on the embedded sample (data/notes.parquet, kb/sources/). Each step is a file target: a second
# `make demo` reruns only what is out of date (an input, an earlier step or the package's code changed), so it
# takes seconds when nothing did. Each step says how long it took, the whole demo its total.
DEMO_CODE := $(shell find deid_ds -type f -not -path '*/__pycache__/*' 2>/dev/null)
DEMO_DEPS := $(VENV)/.installed $(DEMO_CODE)
DEMO_FILES := $(DEMO_OUT)/kb/manifest.json $(DEMO_OUT)/segment/report.json $(DEMO_OUT)/weak/report.json \
	$(DEMO_OUT)/fasttext/fasttext.json $(DEMO_OUT)/flair-lm/flair_lm.json $(DEMO_OUT)/model/model_card.json \
	$(DEMO_OUT)/predict/report.json $(DEMO_OUT)/hybrid/report.json $(DEMO_OUT)/evaluate.json \
	$(DEMO_OUT)/deidentify/report.json $(DEMO_OUT)/deidentify-dp/report.json $(DEMO_OUT)/review.html \
	$(DEMO_OUT)/campaign/campaign.json
# `$(TIMED) NAME COMMAND...` runs COMMAND and prints how long it took.
TIMED = @sh -c 't0=$$(date +%s); "$$@" || exit $$?; echo "demo: $$0 done in $$(( $$(date +%s) - t0 )) s"'

demo: $(VENV)/.installed
	@t0=$$(date +%s); $(MAKE) --no-print-directory demo-files || exit $$?; \
	echo "demo: up to date in $(DEMO_OUT), $$(( $$(date +%s) - t0 )) s in all"
	@echo "To open:"
	@echo "  $(DEMO_OUT)/evaluate.html               the evaluation report: scores, intervals, figure, error examples"
	@echo "  $(DEMO_OUT)/review.html                 original and de-identified notes side by side"
	@echo "  $(DEMO_OUT)/evaluate.png                the rules, the model and the hybrid scored against the gold"
	@echo "  $(DEMO_OUT)/evaluate.json               every score (deid-ds evaluate -v prints the tables)"
	@echo "  $(DEMO_OUT)/deidentify/notes.parquet    the de-identified notes (audit.parquet: each replacement)"
	@echo "  $(DEMO_OUT)/deidentify-dp/report.json   the same under --privacy dp: the privacy accounting"
	@echo "  $(DEMO_OUT)/campaign/tasks-ann1.jsonl   an annotator's correction tasks"
	@echo "  $(DEMO_OUT)/weak/report.json            what the rules found, per label and split"

demo-files: $(DEMO_FILES)
	@:

$(DEMO_OUT)/kb/manifest.json: $(wildcard kb/sources/*) $(DEMO_DEPS)
	$(TIMED) build-kb $(BIN)/deid-ds build-kb --sources kb/sources --out $(DEMO_OUT)/kb --quiet

$(DEMO_OUT)/segment/report.json: data/notes.parquet $(DEMO_DEPS)
	$(TIMED) segment $(BIN)/deid-ds segment data/notes.parquet --out $(DEMO_OUT)/segment --quiet

$(DEMO_OUT)/weak/report.json: data/notes.parquet data/gold.parquet $(DEMO_OUT)/kb/manifest.json $(DEMO_DEPS)
	$(TIMED) weak-label $(BIN)/deid-ds weak-label data/notes.parquet --kb $(DEMO_OUT)/kb --out $(DEMO_OUT)/weak \
		--gold data/gold.parquet --keep-empty 0.3 --quiet

# Tiny embeddings and a few epochs, sized for 2 CPU cores (the training documentation gives real-corpus sizes).
$(DEMO_OUT)/fasttext/fasttext.json: $(DEMO_OUT)/weak/report.json $(DEMO_DEPS)
	$(TIMED) fasttext $(BIN)/deid-ds embeddings fasttext $(DEMO_OUT)/weak --out $(DEMO_OUT)/fasttext --dim 32 --epochs 5 \
		--bucket 20000 --quiet

$(DEMO_OUT)/flair-lm/flair_lm.json: $(DEMO_OUT)/weak/report.json $(DEMO_DEPS)
	$(TIMED) flair-lm $(BIN)/deid-ds embeddings flair-lm $(DEMO_OUT)/weak --out $(DEMO_OUT)/flair-lm --hidden 64 --epochs 2 \
		--seq-len 50 --batch 16 --quiet

$(DEMO_OUT)/model/model_card.json: $(DEMO_OUT)/weak/report.json $(DEMO_OUT)/fasttext/fasttext.json \
		$(DEMO_OUT)/flair-lm/flair_lm.json $(DEMO_DEPS)
	$(TIMED) train $(BIN)/deid-ds train $(DEMO_OUT)/weak --out $(DEMO_OUT)/model --fasttext $(DEMO_OUT)/fasttext \
		--flair-lm $(DEMO_OUT)/flair-lm --hidden 64 --max-epochs 3 --quiet

# The model, the model merged with the rules, and the rules, scored side by side against the sample's gold.
$(DEMO_OUT)/predict/report.json: \
		$(DEMO_OUT)/model/model_card.json $(DEMO_OUT)/kb/manifest.json data/notes.parquet $(DEMO_DEPS)
	$(TIMED) predict $(BIN)/deid-ds predict $(DEMO_OUT)/model data/notes.parquet --out $(DEMO_OUT)/predict \
		--kb $(DEMO_OUT)/kb --quiet

$(DEMO_OUT)/hybrid/report.json: \
		$(DEMO_OUT)/model/model_card.json $(DEMO_OUT)/kb/manifest.json data/notes.parquet $(DEMO_DEPS)
	$(TIMED) hybrid $(BIN)/deid-ds predict $(DEMO_OUT)/model data/notes.parquet --out $(DEMO_OUT)/hybrid \
		--with-rules $(DEMO_OUT)/kb --quiet

$(DEMO_OUT)/evaluate.json: data/gold.parquet data/notes.parquet $(DEMO_OUT)/weak/report.json \
		$(DEMO_OUT)/predict/report.json $(DEMO_OUT)/hybrid/report.json $(DEMO_DEPS)
	$(TIMED) evaluate $(BIN)/deid-ds evaluate --gold data/gold.parquet \
		--pred $(DEMO_OUT)/weak $(DEMO_OUT)/predict $(DEMO_OUT)/hybrid --name rules model hybrid \
		--notes data/notes.parquet --json $(DEMO_OUT)/evaluate.json --figure $(DEMO_OUT)/evaluate.png \
		--html $(DEMO_OUT)/evaluate.html

# The hybrid's entities replaced by surrogates in the original HTML (a fixed demo key: same output every run).
$(DEMO_OUT)/deidentify/report.json: \
		data/notes.parquet $(DEMO_OUT)/hybrid/report.json $(DEMO_OUT)/kb/manifest.json $(DEMO_DEPS)
	$(TIMED) deidentify env DEID_DS_KEY=demo-key-not-secret-0001 $(BIN)/deid-ds deidentify data/notes.parquet \
		--spans $(DEMO_OUT)/hybrid --kb $(DEMO_OUT)/kb --out $(DEMO_OUT)/deidentify --mode surrogate \
		--keep-metadata surrogate --quiet

# The same under --privacy dp (dates, ages and communes perturbed under ε·d-privacy; a fixed reference day: same
# output every run); its report.json holds the privacy accounting.
$(DEMO_OUT)/deidentify-dp/report.json: \
		data/notes.parquet $(DEMO_OUT)/hybrid/report.json $(DEMO_OUT)/kb/manifest.json $(DEMO_DEPS)
	$(TIMED) deidentify-dp env DEID_DS_KEY=demo-key-not-secret-0001 $(BIN)/deid-ds deidentify data/notes.parquet \
		--spans $(DEMO_OUT)/hybrid --kb $(DEMO_OUT)/kb --out $(DEMO_OUT)/deidentify-dp --mode surrogate \
		--privacy dp --epsilon 0.3 --dp-reference 2026-11-27 --keep-metadata surrogate --quiet

# Ten notes, original and de-identified side by side, for the review before a release (same key and spans).
$(DEMO_OUT)/review.html: data/notes.parquet $(DEMO_OUT)/hybrid/report.json $(DEMO_OUT)/kb/manifest.json $(DEMO_DEPS)
	$(TIMED) review env DEID_DS_KEY=demo-key-not-secret-0001 $(BIN)/deid-ds review data/notes.parquet \
		--spans $(DEMO_OUT)/hybrid --kb $(DEMO_OUT)/kb --mode surrogate --sample 10 --out $(DEMO_OUT)/review.html --quiet

$(DEMO_OUT)/campaign/campaign.json: $(DEMO_OUT)/weak/report.json $(DEMO_DEPS)
	$(TIMED) campaign $(BIN)/deid-ds campaign $(DEMO_OUT)/weak --out $(DEMO_OUT)/campaign --annotators ann1,ann2,ann3 \
		--per-type 5 --quiet

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
