# Two entry points for a fresh machine with Python >= 3.11 and make:
#   make fig2   reproduce the paper's Fig. 2 at a quick size (CSV + PNG in results/fig2)
#   make test   run the test suite
# Both create .venv and install what they need on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: fig2 test validate clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,plot,dask,parquet]'
	touch $(STAMP)

fig2: $(STAMP)
	$(BIN)/forkjoin-sim fig2 --out results/fig2

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

validate: $(STAMP)
	$(BIN)/forkjoin-sim validate --out results/validation

clean:
	rm -rf $(VENV) results .hypothesis
