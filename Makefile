# Two commands for readers: `make serve` (the site) and `make test` (the whole suite).
# Each sets itself up from nothing but python3 and make.
PY ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PROJECT_ENVIRONMENT := .venv

.PHONY: serve build test test-gpu test-unknown-cpu system-packages opencl-vendors clean

$(UV):
	$(PY) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet uv==$(UV_VERSION)

# Site only: mkdocs, Material, mkdocs-jupyter, matplotlib. No TensorFlow.
.venv-site/.done: uv.lock pyproject.toml | $(UV)
	UV_PROJECT_ENVIRONMENT=.venv-site $(UV) sync --locked --no-default-groups --group site
	touch $@

# Everything the suite needs, byte-compiled once here: uv installs no .pyc files, and with
# PYTHONDONTWRITEBYTECODE set (as in many CI images) every test process would compile TensorFlow,
# Keras, JAX and Numba from source again (an `import tensorflow` costs 14 s of CPU instead of 5).
.venv/.done: uv.lock pyproject.toml | $(UV)
	$(UV) sync --locked --compile-bytecode
	touch $@

serve: .venv-site/.done
	.venv-site/bin/mkdocs serve --strict --dev-addr 127.0.0.1:8000

build: .venv-site/.done
	.venv-site/bin/mkdocs build --strict

# Two workers, a test file per worker at a time (a file's module fixtures, such as the site's
# browser visits, are built once), the longest files first in the order conftest.py gives them.
# Plain `pytest` (or `pytest --codeblocks docs/`) runs serially.
XDIST := -n 2 --dist loadfile --no-loadscope-reorder
test: .venv/.done system-packages opencl-vendors
	OCL_ICD_VENDORS=$(OPENCL_VENDORS) .venv/bin/python -m pytest $(XDIST)

# On a machine with an NVIDIA GPU: the same suite on the real device.
test-gpu: $(UV)
	$(UV) sync --locked --compile-bytecode --extra gpu
	touch .venv/.done
	$(MAKE) opencl-vendors
	OCL_ICD_VENDORS=$(OPENCL_VENDORS) NUMBA_ENABLE_CUDASIM=0 .venv/bin/python -m pytest -m gpu

# OpenCL on the CPU is Intel's CPU runtime, a pip wheel in .venv (PoCL fails every build on a CPU
# model its LLVM does not know). Its driver is registered with the ICD loader in a folder that
# also holds copies of the system's own .icd files (/etc/OpenCL/vendors), so GPU drivers stay
# visible; `make test` points OCL_ICD_VENDORS at it.
OPENCL_VENDORS := $(CURDIR)/.venv/opencl-vendors
opencl-vendors: .venv/.done
	.venv/bin/python snippets/opencl/register_intel_cpu.py --optional --dir $(OPENCL_VENDORS) > /dev/null

# System packages the suite uses: pciutils (`lspci`, check-your-gpu page) and qemu-user
# (`qemu-x86_64`: tests/test_opencl.py runs the OpenCL kernels on an emulated CPU whose model no
# LLVM knows). Installed with apt only when make runs as root on a machine with apt-get;
# elsewhere those tests skip with a reason. (The browser tests install Debian's chromium the same
# way, from tests/site/.)
APT_NEEDS := lspci:pciutils qemu-x86_64:qemu-user
system-packages:
	@missing=""; for pair in $(APT_NEEDS); do \
	  command -v $${pair%%:*} > /dev/null || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get > /dev/null; then \
	  echo "apt-get install$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get update -q > /dev/null && \
	    apt-get install -y -q --no-install-recommends $$missing > /dev/null; } || \
	  echo "warning: apt-get could not install$$missing; the tests that need them will skip"; \
	fi

# Only the OpenCL kernels on an emulated CPU whose model no LLVM knows (also part of `make test`).
test-unknown-cpu: .venv/.done system-packages opencl-vendors
	@command -v qemu-x86_64 > /dev/null || \
	  { echo "error: needs qemu-x86_64: run as root, or install Debian's qemu-user" >&2; exit 1; }
	OCL_ICD_VENDORS=$(OPENCL_VENDORS) .venv/bin/python -m pytest -p no:cacheprovider -rs \
	  tests/test_opencl.py -k unknown_cpu_model

clean:
	rm -rf .venv .venv-site $(TOOLS) site

# Not part of CI: Lighthouse scores (home page and heaviest page) and every page's weight.
# Needs Node.js/npm (installs lighthouse into .cache/) and Debian's chromium (apt, as root).
.PHONY: report
report: .venv/.done
	.venv/bin/python -m tools.site_report
