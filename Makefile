# fxport — see README.md. Two commands set everything up on a fresh machine:
#   make run    builds fxport and exports the bundled example program to every target
#   make test   vet + every test (golden, unit, race, short fuzz)
GO       ?= go
BIN      := bin/fxport
EXAMPLE  := examples/mlp/program.fxir
OUT      := out
FUZZTIME ?= 3s

.PHONY: all build run test vet unit race fuzz-short fuzz bench generate docs clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/fxport

# The main job: export the bundled example to every target, with the report
# of the passes and workarounds that ran.
run: build
	@mkdir -p $(OUT)
	./$(BIN) export $(EXAMPLE) --target all -o $(OUT) --report

test: vet unit race fuzz-short

vet:
	$(GO) vet ./...

unit:
	$(GO) test ./...

# Patch scoping and the pass manager must hold under the race detector.
race:
	$(GO) test -race ./pm/... ./passes/...

# Every parser's fuzz target, briefly; `make fuzz` runs them longer.
FUZZ_TARGETS := ./ir/sym:FuzzParse ./ir:FuzzParseIR ./gen/schema:FuzzParseSchema ./pm:FuzzParsePipeline
fuzz-short:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
	  $(GO) test -run=NONE -fuzz="^$$fn$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	done

fuzz:
	$(MAKE) fuzz-short FUZZTIME=2m

bench:
	$(GO) test -run=NONE -bench=. -benchmem ./ir/... ./pm/...

generate:
	$(GO) generate ./...
	$(GO) run ./cmd/fxport passes --markdown > docs/passes.md

clean:
	rm -rf bin $(OUT)
