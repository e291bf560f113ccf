# Every target does its own set-up, so `make demo` and `make test` work on a fresh machine.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.torchwise-installed

.PHONY: demo test test-slow test-all bench lint clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Without an NVIDIA GPU pin the CPU build of torch first: a bare `torch` would pull a
# multi-GB CUDA build. With `nvidia-smi` present, pip's normal choice stands.
$(STAMP): pyproject.toml | $(PY)
	@if command -v nvidia-smi >/dev/null 2>&1; then \
		echo "NVIDIA GPU found: keeping pip's choice of torch build"; \
	else \
		$(PY) -m pip install -q torch==2.13.0; \
	fi
	$(PY) -m pip install -q -e ".[datasets,dev,tensorboard,metrics,streaming,mlflow,onnx,hf,peft,sweep]"
	@touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/torchwise train examples/digits.yaml --run-dir runs --name demo

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not distributed and not gpu"

test-slow: $(STAMP)
	$(PY) -m pytest -q -m "(slow or distributed) and not gpu"

test-all: test test-slow

bench: $(STAMP)
	$(PY) benchmarks/overhead.py

lint: $(STAMP)
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf $(VENV) runs .pytest_cache
