# One venv, made from pyproject.toml; every target installs what it needs itself.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAMPLE := samples/mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt

.PHONY: venv dev run lint test conformance bench wheel clean model-explorer-check test-model-explorer

$(BIN)/hlo-index: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.dev: $(BIN)/hlo-index
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

venv: $(BIN)/hlo-index
dev: $(VENV)/.dev

run: venv
	$(BIN)/hlo-index analyze $(SAMPLE)

# Formatter, linter and type checker, configured in pyproject.toml; part of `make test`.
lint: dev
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

# XLA's own HLO (../shared/conformance, skipped when absent): every module XLA reads must load and analyse.
conformance: dev
	HLO_INDEX_CONFORMANCE=1 $(BIN)/python -m pytest tests/conformance tests/hlo/test_direct_reader.py

# benchmarks/README.md. XLA's side needs a Python with jaxlib (never a dependency):
# make bench HLO_INDEX_BENCH_XLA_PYTHON=/path/to/python; without one its figures are "not measured".
bench: dev
	$(BIN)/python benchmarks/run_all.py $(ARGS)

# The venv above is an editable install; `make test` also builds this wheel in a temporary
# venv and runs every command from it (tests/cli/test_wheel.py), so packaging errors are not hidden.
wheel: venv
	$(BIN)/pip wheel --no-deps -q -w dist .
	@ls dist/*.whl

# Not a CI step: gpt12 in Model Explorer (its own venv, the `model-explorer` extra) screenshotted by a
# headless Chromium (apt-get install -y chromium); the check reads the screenshot. No network needed.
ME_VENV ?= .venv-model-explorer
ME_PNG ?= /tmp/model_explorer_check.png
$(ME_VENV)/bin/model-explorer: pyproject.toml
	$(PY) -m venv $(ME_VENV)
	$(ME_VENV)/bin/pip install -q -e '.[dev,model-explorer]'
	touch $@

# In CI (.ci/run): the graph, node data and extension loaded by Model Explorer's own classes, in a venv of
# their own (the extra is ~650 MB; the main test venv stays what users install).
test-model-explorer: $(ME_VENV)/bin/model-explorer
	$(ME_VENV)/bin/python -m pytest -p no:randomly tests/render/test_model_explorer.py

model-explorer-check: $(ME_VENV)/bin/model-explorer
	$(ME_VENV)/bin/python tests/browser/model_explorer_check.py --png $(ME_PNG)

clean:
	rm -rf $(VENV) $(ME_VENV) build dist *.egg-info .mypy_cache .ruff_cache
