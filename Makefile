# `make run` and `make test` work on a fresh machine with Python 3.10+ and make.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=

.PHONY: run test test-gpu bench image clean

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

# GPU checks on a machine with a CUDA device: the GPU tests, then the GPU benchmark. It uses the
# venv when CuPy imports there, else the system python3 (a GPU image with CuPy preinstalled):
# the project goes in without its dependencies, which such an image already has.
GPU_PY ?= $(shell $(PY) -c "import cupy" >/dev/null 2>&1 && echo $(PY) || echo $(PYTHON))
GPU_BENCH_ARGS ?=

test-gpu:
	$(GPU_PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(GPU_PY) -m pytest tests/gpu -q -rs -p no:cacheprovider
	cd benchmarks && $(GPU_PY) gpu_bench.py $(GPU_BENCH_ARGS)

bench: $(VENV)/.installed-run
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	$(PY) benchmarks/import_bench.py
	$(PY) benchmarks/oscar_bench.py
	$(PY) benchmarks/tensor_bench.py
	$(PY) benchmarks/cluster_bench.py

# the image that mars.deploy.kubernetes names by default (see Dockerfile, docs/kubernetes.md)
VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' pyproject.toml)
IMAGE ?= pymars:$(VERSION)
CONTAINER_TOOL ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null)

image:
	@if [ -z "$(CONTAINER_TOOL)" ]; then echo "make image: neither docker nor podman is installed" >&2; exit 1; fi
	$(CONTAINER_TOOL) build -t $(IMAGE) .

clean:
	rm -rf $(VENV) build *.egg-info
