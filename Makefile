# `make run` and `make test` work on a fresh machine with Python 3.10+ and make.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=

.PHONY: run test bench clean

# One stamp per set of dependencies: `make run` installs only what running
# needs; `make test` adds the test tools on top (after `make run` too), and
# `make run` after `make test` finds its own stamp and installs nothing.
$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed-run: pyproject.toml setup.py | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml setup.py | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@ $(VENV)/.installed-run

run: $(VENV)/.installed-run
	$(PY) -m mars.deploy.demo $(ARGS)

test: $(VENV)/.installed-test
	$(PY) -m pytest tests -q

bench: $(VENV)/.installed-run
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	$(PY) benchmarks/import_bench.py
	$(PY) benchmarks/oscar_bench.py
	$(PY) benchmarks/tensor_bench.py
	$(PY) benchmarks/cluster_bench.py

clean:
	rm -rf $(VENV) build *.egg-info
