# Every target does its own set-up, so `make demo` and `make test` work on a fresh machine.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.torchwise-installed

# Without an NVIDIA GPU, torch comes from TORCH_SPEC with PyTorch's CPU wheel index added as an
# extra index: a wheel pip already finds (a local one, or on its own index) is still used, and
# elsewhere the +cpu build wins over PyPI's CUDA one. Override either: make demo TORCH_SPEC=torch==2.6.0
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX_URL ?= https://download.pytorch.org/whl/cpu
EXTRAS := datasets,dev,docs,tensorboard,metrics,streaming,mlflow,onnx,hf,peft,sweep

.PHONY: demo test test-slow test-all docs bench lint clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Without an NVIDIA GPU install the CPU build of torch first: a bare `torch` would pull a
# multi-GB CUDA build. --no-deps: only torch itself is looked up on the extra index (each lookup
# of an unreachable index costs retries); its dependencies come with the package below.
# With `nvidia-smi` present, pip's normal choice stands.
$(STAMP): pyproject.toml | $(PY)
	@if command -v nvidia-smi >/dev/null 2>&1; then \
		echo "NVIDIA GPU found: keeping pip's choice of torch build"; \
	else \
		$(PY) -m pip install -q --no-deps "$(TORCH_SPEC)" --extra-index-url "$(TORCH_INDEX_URL)"; \
	fi
	$(PY) -m pip install -q -e ".[$(EXTRAS)]"
	@touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/torchwise train examples/digits.yaml --run-dir runs --name demo

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow and not distributed and not gpu"

test-slow: $(STAMP)
	$(PY) -m pytest -q -m "(slow or distributed) and not gpu"

test-all: test test-slow

# The docs site, as CI builds it: every warning an error, then no broken internal link.
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict
	$(PY) tests/site_links.py site

bench: $(STAMP)
	$(PY) benchmarks/overhead.py

lint: $(STAMP)
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf $(VENV) runs site .pytest_cache
