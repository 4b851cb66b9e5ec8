# Takoform build and test entry points. `make test` is the project's test
# command: .ci/run calls exactly it.

GO ?= go

.PHONY: test fmt-check vet unit build generate fuzz-space

test: fmt-check vet unit

fmt-check:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi; \
	echo "gofmt: clean"

vet:
	$(GO) vet ./...

unit:
	$(GO) test -count=1 ./...

build:
	$(GO) build -o bin/takoform ./cmd/takoform

# Regenerate committed generated files (the SpaceID JSON Schema and the
# Edge family documents); tests fail when they drift.
generate:
	$(GO) generate ./spaceid ./forms/edge

# The SpaceID agreement fuzz test (Go validator vs the JSON Schema).
fuzz-space:
	$(GO) test ./spaceid -run '^$$' -fuzz FuzzAgreement -fuzztime 150s
