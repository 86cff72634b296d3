# Default target: lint + the whole test suite (the README's test command).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: test app install browser lint unit clean-workspace
test: install browser lint
	$(VENV)/bin/pytest

install: $(VENV)/.installed

# torch must come first and pinned: pip takes the CPU build of 2.13.0 from local disk;
# an unpinned torch pulls a multi-GB CUDA build. '.[dev]' = the engine + every extra
# (memwb[all]: st, app, llm, eval, sweep, collector) + the test tools.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[dev]'
	touch $@

# Debian's Chromium (+ CJK fonts for Chinese text) for the headless screenshot test;
# no browser download from a hub.
browser:
	@(command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi "noto sans cjk") || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null)

lint: install
	$(VENV)/bin/ruff check memory_engine app tests benchmarks
	$(VENV)/bin/mypy memory_engine

unit: install
	$(VENV)/bin/pytest -m "not integration and not slow and not app"

app: install
	$(VENV)/bin/memwb app

clean-workspace:
	rm -rf .memwb
