# Two commands on a fresh machine: `make demo` and `make test`.
# Each bootstraps .venv from pyproject.toml with the exact pins in constraints.txt.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint docs venv clean

$(STAMP): pyproject.toml constraints.txt setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/contextos-lab demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports  # the import contracts in .importlinter: stage order, no circles
	$(BIN)/mypy  # the package's types ([tool.mypy] in pyproject.toml)

# the documentation site into site/ (--strict: a broken link or nav entry fails the build);
# notebooks show their outputs when `make demo` has left executed copies in out/demo/reports/
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# the suite on TEST_WORKERS processes (pytest-xdist; CI has 2 cores); each test file runs
# whole on one worker, so a file's module fixtures are built once
TEST_WORKERS ?= 2
test: $(STAMP) lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site
