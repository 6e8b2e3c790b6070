# fxport — see README.md. Two commands set everything up on a fresh machine:
#   make run    builds fxport, exports a small CNN captured by genuine torch.export to every
#               target and checks the results in ONNX Runtime and the genuine ExecuTorch runtime
#   make test   vet + every test (golden, unit, race, short fuzz)
GO       ?= go
BIN      := bin/fxport
EXAMPLE  := examples/cnn
OUT      := out
# fuzz-short runs a fixed number of inputs per target: a count, unlike a
# duration, is not subject to Go 1.26's spurious "context deadline exceeded"
# ends of time-limited fuzzing (golang/go#75804). `make fuzz` runs longer.
FUZZTIME ?= 20000x

.PHONY: all build run test vet unit race fuzz-short fuzz bench generate kernels docs clean ort flatc chromium venv fixtures fixtures-check anchors ops-anchors bench-programs bench-genuine

all: build

build:
	$(GO) build -o $(BIN) ./cmd/fxport

# The main job: export the model of examples/cnn (examples/cnn/model.py,
# captured by genuine torch.export with tools/fxgen into program.pt2 and io/)
# to every target, then judge the results: the ONNX model in ONNX Runtime
# against torch eager's output (fxport verify), the portable and XNNPACK
# .pte on the genuine ExecuTorch runtime (tools/etjudge, from the venv);
# last, the pipeline explorer page of the XNNPACK export.
run: build ort venv
	@mkdir -p $(OUT)
	./$(BIN) export $(EXAMPLE)/program.pt2 --target all -o $(OUT)
	./$(BIN) verify $(EXAMPLE)/program.pt2 --target onnx
	@printf '[%s, %s]' \
	  '{"name": "executorch-portable", "pte": "$(OUT)/program.executorch-portable.pte", "inputs": "$(EXAMPLE)/io", "expected": "$(EXAMPLE)/io"}' \
	  '{"name": "executorch-xnnpack", "pte": "$(OUT)/program.executorch-xnnpack.pte", "inputs": "$(EXAMPLE)/io", "expected": "$(EXAMPLE)/io"}' \
	  | $(VENV_PY) tools/etjudge/etjudge.py
	./$(BIN) explore $(EXAMPLE)/program.pt2 --target executorch-xnnpack -o $(OUT)/explore.html

test: vet unit race fuzz-short fixtures-check

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './third_party/*')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi

# The genuine ExecuTorch runtime's judgement of every corpus .pte runs on
# its own, uncached, so that its counts are printed on every run.
GENUINE_ET := ^TestGenuineExecuTorchRuntime$$
unit: ort flatc chromium venv
	$(GO) test -skip '$(GENUINE_ET)' ./...
	@mkdir -p $(OUT)
	@$(GO) test -count=1 -run '$(GENUINE_ET)' -v ./cmd/fxport > $(OUT)/genuine-executorch.log 2>&1 || { cat $(OUT)/genuine-executorch.log; exit 1; }
	@grep '^genuine ExecuTorch runtime:' $(OUT)/genuine-executorch.log

# The project's Python environment: genuine torch (producer), ExecuTorch's
# runtime bindings, onnx, ONNX Runtime, onnxscript and transformers (judges
# and anchors), pinned in tools/requirements.txt and installed from PyPI into
# the git-ignored third_party/venv. Re-installed only when the pins change.
# Python 3.11 is required (executorch's wheels and the pins are for it).
PYTHON311 ?= python3
VENV      := third_party/venv
VENV_PY   := $(VENV)/bin/python
venv: $(VENV)/.installed
$(VENV)/.installed: tools/requirements.txt
	@$(PYTHON311) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "make venv needs Python 3.11 (set PYTHON311=...)")'
	@test -x $(VENV_PY) || $(PYTHON311) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet --disable-pip-version-check -r tools/requirements.txt
	@cp tools/requirements.txt $@

# ONNX Runtime for the ONNX target's tests and `fxport verify`: the shared
# library shipped in the npm package onnxruntime-node (install scripts off:
# they would download GPU providers). Skipped when already installed.
ORT_VERSION := 1.30.0
ORT_DIR     := third_party/ort
ORT_LIB     := $(ORT_DIR)/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
ort: $(ORT_LIB)
$(ORT_LIB):
	@mkdir -p $(ORT_DIR)
	ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix $(ORT_DIR) --no-audit --no-fund --ignore-scripts onnxruntime-node@$(ORT_VERSION)
	@test -f $@ || { echo "onnxruntime-node did not ship $@" >&2; exit 1; }

# flatc (Debian's flatbuffers-compiler) for the ExecuTorch schema tests
# (generated-code freshness, decoding the genuine .pte files with our
# schemas): installed when missing and running as root; those tests skip
# without it.
flatc:
	@command -v flatc >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends flatbuffers-compiler >/dev/null || \
	  echo "flatc unavailable: the ExecuTorch flatc tests will skip" >&2; }

# chromium (Debian's package) for the headless-browser test of the
# `fxport explore` page (cmd/fxport TestExplorePageInChromium): installed
# when missing and running as root, like flatc; without it that test skips,
# and fails under CI=true.
chromium:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null || \
	  echo "chromium unavailable: the explorer page's browser test will skip (and fail under CI=true)" >&2; }

# Patch scoping and the pass manager must hold under the race detector.
race:
	$(GO) test -race ./pm/... ./passes/...

# Every parser's fuzz target, briefly; `make fuzz` runs them longer.
FUZZ_TARGETS := ./ir/sym:FuzzParse ./ir:FuzzParseIR ./gen/schema:FuzzParseSchema ./pm:FuzzParsePipeline ./frontends/fxtext:FuzzParse ./pytree:FuzzDecode \
                ./frontends/pt2:FuzzReadArchive ./frontends/pt2:FuzzDecodeProgramJSON ./frontends/pt2:FuzzUnpickle ./targets/executorch/pte:FuzzReadPTE ./targets/executorch/run:FuzzRunPTE ./ir:FuzzDimOrderFromStrides
fuzz-short:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
	  $(GO) test -run=NONE -fuzz="^$$fn$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	done

fuzz:
	$(MAKE) fuzz-short FUZZTIME=2m

# Benchmarks, not part of `make test`. The whole-export ones run once per
# size (-benchtime=1x); BenchmarkExecuTorchScaling fails on a superlinear
# ExecuTorch export (docs/performance.md).
bench:
	$(GO) test -run=NONE -bench=. -benchmem ./ir/... ./passes/... ./interp/...
	$(GO) test -run=NONE -bench=. -benchmem -benchtime=1x ./targets/pt2/... ./targets/onnx/... ./targets/executorch

# Anchors (not part of `make test`): torch.onnx (dynamo + onnxscript
# optimizer) and exir (XNNPACK partitioner, to_executorch) beside fxport on
# every tests/corpus program, in one run; writes docs/benchmarks.md.
# The model sweep behind docs/models.md: tiny random transformers configs and
# torchvision models captured with fxport capture's machinery, exported to
# ONNX, portable and XNNPACK .pte, judged in ORT and on the genuine ExecuTorch
# runtime, beside transformers.exporters (tools/models/sweep.py; about an
# hour on 2 cores, so not part of make test; ONLY=a,b re-runs some entries).
models: build venv
	$(VENV_PY) tools/models/sweep.py --fxport $(BIN) $(if $(ONLY),--only $(ONLY))
	$(GO) test ./tools/models -run TestModelsDoc -update

# torch.onnx (dynamo) and exir beside fxport, one run -> docs/benchmarks.md:
# the tests/corpus programs and scaling.py's 10k-node stacks (cached by make
# bench-programs; those not captured are left out, said so on the page).
# ANCHORS=corpus,1k,decoder_10k,... picks the programs.
anchors: build venv
	$(VENV_PY) tools/anchors/anchors.py --fxport $(BIN) --out docs/benchmarks.md $(if $(ANCHORS),--programs $(ANCHORS))

# The op-by-op conformance sweep: every Core ATen op as a one-op torch.export
# program through fxport to ONNX, portable and XNNPACK, judged by ONNX Runtime
# and the genuine ExecuTorch runtime, beside torch's own exporters
# (tools/opsweep/results.json, docs/ops.md). OPS_DIR keeps the cases.
# OPS_ONLY=aten.x.default,... sweeps only those ops (without anchors, in a
# fresh case directory) and merges their rows into the results.
OPS_DIR ?= $(OUT)/ops
ops: venv
ifdef OPS_ONLY
	rm -rf $(OUT)/ops-only && $(VENV_PY) tools/opsweep/sweep.py gen $(OUT)/ops-only --only $(OPS_ONLY)
	$(GO) run ./tools/opsweep -merge -cases $(OUT)/ops-only -python $(VENV_PY)
else
	$(GO) run ./tools/opsweep -gen -anchors -cases $(OPS_DIR) -python $(VENV_PY)
endif

# Only torch's own exporters on every case (one worker process, resumable:
# rerun to continue), merged into the anchor columns of the results.
ops-anchors: venv
	$(VENV_PY) tools/opsweep/sweep.py anchors $(OPS_DIR)
	$(GO) run ./tools/opsweep -merge-anchors $(OPS_DIR)/anchors.json

# Genuine torch.export stacks (decoder, ViT, ResNet blocks at ~1k/10k/100k
# nodes), cached outside git ($$FXPORT_BENCH_CACHE or ~/.cache/fxport/bench),
# and the benchmark that exports them through every target and fails when
# 10x the nodes cost more than 12x the time (docs/performance.md).
bench-programs: venv
	$(VENV_PY) tools/anchors/scaling.py
bench-genuine: bench-programs
	$(GO) test -run=NONE -bench=GenuineScaling -benchtime=1x -timeout=4h ./cmd/fxport

generate:
	$(GO) generate ./...
	$(GO) run ./cmd/fxport passes --markdown > docs/passes.md

# The ExecuTorch kernel list (gen/etkernels.spec) from the installed
# executorch's kernel yaml files and torch's operator tags
# (gen/torchtags.spec); then the op table that reads them.
kernels: venv
	$(VENV_PY) gen/etkernels/etkernels.py -o gen/etkernels.spec
	$(VENV_PY) gen/torchtags/torchtags.py -o gen/torchtags.spec
	$(GO) generate ./ir

clean:
	rm -rf bin $(OUT)

# Regenerate tests/corpus from tools/fxgen/models with genuine torch.export
# (the venv's torch 2.14.1; FXGEN_PYTHON overrides). CI uses the committed
# corpus; fixtures-check needs only Python's standard library.
FXGEN_PYTHON ?= $(VENV_PY)
fixtures: $(if $(filter $(VENV_PY),$(FXGEN_PYTHON)),venv)
	$(FXGEN_PYTHON) tools/fxgen/gen_corpus.py
	$(FXGEN_PYTHON) tools/fxgen/fxgen.py --module examples/cnn/model.py --factory small_cnn --out examples/cnn

# Validate the committed corpus without torch (standard library only).
fixtures-check:
	python3 tools/fxgen/check_archive.py --ops-spec gen/ops.spec tests/corpus/*/ examples/cnn/
	python3 tools/fxgen/test_fxgen.py
