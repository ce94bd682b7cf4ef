# Two commands for readers: `make serve` (the site) and `make test` (the whole suite).
# Each sets itself up from nothing but python3 and make.
PY ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PROJECT_ENVIRONMENT := .venv

.PHONY: serve build test test-gpu clean

$(UV):
	$(PY) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet uv==$(UV_VERSION)

# Site only: mkdocs, Material, mkdocs-jupyter, matplotlib. No TensorFlow.
.venv-site/.done: uv.lock pyproject.toml | $(UV)
	UV_PROJECT_ENVIRONMENT=.venv-site $(UV) sync --locked --no-default-groups --group site
	touch $@

# Everything the suite needs.
.venv/.done: uv.lock pyproject.toml | $(UV)
	$(UV) sync --locked
	touch $@

serve: .venv-site/.done
	.venv-site/bin/mkdocs serve --strict --dev-addr 127.0.0.1:8000

build: .venv-site/.done
	.venv-site/bin/mkdocs build --strict

test: .venv/.done
	.venv/bin/python -m pytest

# On a machine with an NVIDIA GPU: the same suite on the real device.
test-gpu: $(UV)
	$(UV) sync --locked --extra gpu
	touch .venv/.done
	NUMBA_ENABLE_CUDASIM=0 .venv/bin/python -m pytest -m gpu

clean:
	rm -rf .venv .venv-site $(TOOLS) site

# Not part of CI: Lighthouse scores (home page and heaviest page) and every page's weight.
# Needs Node.js/npm (installs lighthouse into .cache/) and Debian's chromium (apt, as root).
.PHONY: report
report: .venv/.done
	.venv/bin/python tools/site_report.py
