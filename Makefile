# electra_tf: `make demo` sets up and pre-trains on the embedded corpus; `make test` sets up and runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The package alone (what the demo needs), then with the test extra (what the tests need).
DEMO_STAMP := $(VENV)/.installed-demo-stamp
STAMP := $(VENV)/.installed-stamp

.PHONY: setup demo test clean

setup: $(STAMP)

$(DEMO_STAMP): setup.py
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "electra_tf needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/electra-demo --output_dir=runs/demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadscope --no-loadscope-reorder --durations=25

clean:
	rm -rf $(VENV) runs build *.egg-info
