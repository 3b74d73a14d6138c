# `make run` and `make test` work on a fresh machine with Python 3.10+ and make.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=

.PHONY: run test bench clean

$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

run: $(VENV)/.installed
	$(PY) -m mars.deploy.demo $(ARGS)

test: $(VENV)/.installed
	$(PY) -m pytest tests -q

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/import_bench.py
	$(PY) benchmarks/oscar_bench.py
	$(PY) benchmarks/tensor_bench.py
	$(PY) benchmarks/cluster_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
