# electra_tf: `make demo` sets up and pre-trains on the embedded corpus; `make test` sets up and runs the tests.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup demo test clean

setup: $(STAMP)

$(STAMP): setup.py
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "electra_tf needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/electra-demo --output_dir=runs/demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadscope --durations=25

clean:
	rm -rf $(VENV) runs build *.egg-info
