# One venv, made from pyproject.toml; every target installs what it needs itself.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAMPLE := samples/mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt

.PHONY: venv dev run lint test conformance bench wheel clean

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
	HLO_INDEX_CONFORMANCE=1 $(BIN)/python -m pytest tests/conformance

# benchmarks/README.md. XLA's side needs a Python with jaxlib (never a dependency):
# make bench HLO_INDEX_BENCH_XLA_PYTHON=/path/to/python; without one its figures are "not measured".
bench: dev
	$(BIN)/python benchmarks/run_all.py $(ARGS)

# The venv above is an editable install; `make test` also builds this wheel in a temporary
# venv and runs every command from it (tests/cli/test_wheel.py), so packaging errors are not hidden.
wheel: venv
	$(BIN)/pip wheel --no-deps -q -w dist .
	@ls dist/*.whl

clean:
	rm -rf $(VENV) build dist *.egg-info .mypy_cache .ruff_cache
