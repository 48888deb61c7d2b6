# pallas-ls: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
PIP    := $(VPY) -m pip
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: demo test test-fast test-compiled wheel lint install install-test editors-setup vsix bench clean

$(VPY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed: $(VPY) pyproject.toml
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(PIP) install --quiet -e '.[test]'
	touch $@

# Real JAX, in its own environment: the oracle for tests. The tool's own environment has no
# jax, so the version pallas-ls detects there is "unknown" (= latest) unless a test says so.
JAXVENV := .venv-jax
$(JAXVENV)/.installed:
	$(PYTHON) -m venv $(JAXVENV)
	$(JAXVENV)/bin/python -m pip install --quiet 'jax==0.10.2'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test $(JAXVENV)/.installed

## demo: install into .venv and check the shipped examples (exit 1 = findings shown, expected)
demo: install
	@echo "+ pallas-ls check examples/"
	@$(VENV)/bin/pallas-ls check examples/; rc=$$?; if [ $$rc -gt 1 ]; then exit $$rc; fi

## lint: ruff check, ruff format --check, mypy
lint: install-test
	$(VENV)/bin/ruff check pallas_ls tests benchmarks setup.py
	$(VENV)/bin/ruff format --check pallas_ls tests benchmarks setup.py
	$(VENV)/bin/mypy

## editors-setup: Neovim 0.7 + 0.11, Emacs + eglot, code-server + Chromium (installs when missing)
editors-setup: install-test
	bash tests/editors/setup.sh
	bash vscode-client/scripts/setup-e2e.sh

## test: every test, real editors included; then test-compiled (all but the editor tests, compiled build)
test: lint editors-setup
	$(VPY) -m pytest -q -p no:cacheprovider
	$(MAKE) --no-print-directory test-compiled

## wheel: dist/pallas_ls-<version>-<platform>.whl with the analysis core compiled by mypyc
wheel: $(VPY)
	PALLAS_LS_COMPILE=1 $(PIP) wheel --quiet --no-deps --wheel-dir dist .

# The compiled build, unpacked beside a copy of the tests: run from there, `import pallas_ls`
# (and the server the tests start, `python -m pallas_ls`) finds it before the editable install.
COMPILED := build/compiled
$(COMPILED)/.built: $(VENV)/.installed-test setup.py pyproject.toml $(shell find pallas_ls -name '*.py')
	rm -rf $(COMPILED) && mkdir -p $(COMPILED)/dist
	PALLAS_LS_COMPILE=1 $(PIP) wheel --quiet --no-deps --wheel-dir $(COMPILED)/dist .
	$(VPY) -m zipfile -e $(COMPILED)/dist/*.whl $(COMPILED)
	ln -s $(abspath $(JAXVENV)) $(COMPILED)/$(JAXVENV)
	touch $@

## test-compiled: every test but the real-editor ones, on the mypyc-compiled build
test-compiled: $(COMPILED)/.built $(JAXVENV)/.installed
	rm -rf $(COMPILED)/tests
	git ls-files -co --exclude-standard | grep -v '^pallas_ls/' | tar -cf - -T - | tar -xf - -C $(COMPILED)
	cd $(COMPILED) && PALLAS_LS_EXPECT_COMPILED=1 $(abspath $(VPY)) -m pytest -q -p no:cacheprovider -m "not editor"

## test-fast: everything but the real-editor tests
test-fast: lint
	$(VPY) -m pytest -q -p no:cacheprovider -m "not editor"

## vsix: build vscode-client/pallas-ls-<version>.vsix
vsix:
	bash vscode-client/scripts/build-vsix.sh

## bench: latency (LSP) and throughput (CLI) benchmarks; prints numbers
bench: install-test
	bash benchmarks/run.sh

clean:
	rm -rf $(VENV) $(JAXVENV) .pytest_cache .mypy_cache .ruff_cache vscode-client/node_modules \
		vscode-client/out vscode-client/e2e/node_modules vscode-client/.e2e build dist
