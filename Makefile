# Takoform build and test entry points. `make test` is the project's test
# command: .ci/run calls exactly it.

GO ?= go

.PHONY: test fmt-check vet lint tofu workerd unit conformance acceptance build generate fuzz fuzz-space bench bench-runtime bench-runtime-replicas demo bench-provider walk docs release-snapshot

# The tests run against a throwaway PostgreSQL cluster (scripts/postgres.sh
# installs Debian's PostgreSQL when missing and sets TAKOFORM_TEST_POSTGRES);
# `make unit` and friends on their own skip the PostgreSQL tests, saying so.
test: fmt-check vet lint tofu workerd
	TAKOFORM_WORKERD="$$(./scripts/workerd.sh)" ./scripts/postgres.sh run -- $(MAKE) --no-print-directory unit conformance acceptance
	$(MAKE) --no-print-directory demo

# OpenTofu v1.12.6, built from the Go module proxy into tools/ (pinned,
# cached); the provider's acceptance tests find it there.
tofu:
	./scripts/opentofu.sh

# workerd 1.20261117.1 (the data plane's engine, spec/runtime-v1.md §0.3),
# installed from the npm registry into tools/ (pinned, cached); tests that
# run workers find it through TAKOFORM_WORKERD or tools/ and, under CI=true,
# fail without it.
workerd:
	./scripts/workerd.sh

fmt-check:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi; \
	echo "gofmt: clean"

vet:
	$(GO) vet ./...

# No ignored error and no unchecked type assertion in the non-test code of
# the host and the provider (.golangci.yml: errcheck and forcetypeassert);
# golangci-lint v2.15.0 is built from the Go module proxy into tools/
# (pinned, cached) by scripts/golangci-lint.sh.
LINT_PATHS ?= ./host/... ./internal/provider/...
lint:
	@lint="$$(GO=$(GO) ./scripts/golangci-lint.sh)" && echo "$$lint run $(LINT_PATHS)" && "$$lint" run $(LINT_PATHS)

unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v -e '/conformance$$' -e '/conformance/runtimeabi$$' -e '/internal/provider$$')

# The provider driven through a real OpenTofu CLI against our host
# (terraform-plugin-testing), listed by test (-v).
acceptance: tofu
	$(GO) test -count=1 -v -timeout 45m ./internal/provider

# The black-box Host API checks against our host on a real SQLite file,
# listed by check ID (-v), and the runtime checks against it on workerd,
# listed by behaviour.
conformance:
	$(GO) test -count=1 -v ./conformance ./conformance/runtimeabi

build:
	$(GO) build -o bin/takoform ./cmd/takoform

# The main job, end to end (the last step of `make test`): OpenTofu deploys
# examples/quickstart through the
# provider to a host on a fresh SQLite file running workers on workerd
# (scripts/workerd.sh), requests the worker's URL and prints its answers (a
# visit counter in KV and SQLite), plans empty, rolls out changed code and
# prints the new answer, destroys, and prints the wall time of each step.
demo:
	GO=$(GO) ./scripts/demo.sh

# Regenerate committed generated files (the SpaceID JSON Schema, the
# Edge family documents and the provider's equivalent identities, read
# from ../shared/reference beside the clone); tests fail when they drift.
generate:
	$(GO) generate ./spaceid ./forms/edge ./internal/provider

# Regenerate docs/ (terraform-plugin-docs over this build's
# `tofu providers schema -json`, templates/ and examples/; the guides are
# written in templates/guides/ and copied into docs/guides/) and the import
# examples; TestDocsAreCurrent in `make test` fails when docs/ is stale.
docs: tofu
	GO=$(GO) ./scripts/docs.sh

# The release archives, built locally and never published: provider zips
# for linux/darwin/windows x amd64/arm64, SHA256SUMS, the takoform binary
# (goreleaser from the Go module proxy; .goreleaser.yml). Not part of test.
GORELEASER ?= github.com/goreleaser/goreleaser/v2@v2.17.0
release-snapshot:
	$(GO) run $(GORELEASER) release --snapshot --clean --skip=sign,publish

# Every fuzz target over what the host parses from strangers (request
# bodies through the router, import IDs, cron, hostnames, tokens files) and
# the SpaceID agreement, each for FUZZTIME.
FUZZTIME ?= 30s
FUZZ_TARGETS = ./host:FuzzRouter ./host:FuzzTokensFile ./internal/provider:FuzzImportID \
	./forms/edge:FuzzCron ./forms/edge:FuzzHostname ./spaceid:FuzzAgreement
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; echo "== $$fn ($$pkg, $(FUZZTIME))"; \
		log=$$(mktemp); \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s >$$log 2>&1 || { cat $$log; rm -f $$log; exit 1; }; \
		grep 'execs:' $$log | tail -n 1; rm -f $$log; \
	done

# The SpaceID agreement fuzz test (Go validator vs the JSON Schema).
fuzz-space:
	$(GO) test ./spaceid -run '^$$' -fuzz FuzzAgreement -fuzztime 150s

# Host benchmarks over real HTTP (32 concurrent clients; 0 and 100,000
# stored resources), then `host serve` processes on SQLite and on a
# throwaway PostgreSQL with one and two replicas beside bare pgx
# (internal/replicatest prints them with their targets), edge.sql calls
# through a database's owner replica and through the other one beside a
# SQLite file's (host/runtime/gateway), and the
# peak RSS of one `host serve` on SQLite at 10,000 stored beside its
# 60 MB budget: the budgets of PERFORMANCE.md.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./host ./host/store/sqlite
	./scripts/postgres.sh run -- $(GO) test -run '^$$' -bench Replicas -benchtime 3s -timeout 30m ./internal/replicatest ./host/runtime/gateway
	$(GO) test -run '^$$' -bench ServeRSS -benchtime 1x ./internal/replicatest

# The data plane on real workerd (installed first), each figure beside its
# floor of the same run (internal/runtimebench): hello-world requests/s
# and latency at c = 32 through the ingress, a bare reverse proxy and
# workerd's socket; a KV read-after-write through a worker; a shard's
# resident memory and each further worker's; the time from a version's
# apply to its first answer; queue messages/s end to end and the delay of
# a cron firing. Then bench-runtime-replicas. PERFORMANCE.md lists the knobs.
bench-runtime: workerd
	TAKOFORM_WORKERD="$$(./scripts/workerd.sh)" $(GO) test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 30m ./internal/runtimebench
	$(MAKE) --no-print-directory bench-runtime-replicas

# The data plane on `host serve` replicas on a throwaway PostgreSQL, each
# with its own workerd (internal/replicatest, BenchmarkDataPlane*): queue
# messages/s end to end on one and on two replicas beside sends alone and
# the store's own delivery transactions; hello-world requests/s through
# two replicas' ingresses beside one's and beside their workerd sockets.
bench-runtime-replicas: workerd
	TAKOFORM_WORKERD="$$(./scripts/workerd.sh)" ./scripts/postgres.sh run -- $(GO) test -count=1 -run '^$$' -bench DataPlane -benchtime 1x -timeout 30m ./internal/replicatest

# Which files and packages one create passes through (ARCHITECTURE.md §4).
walk:
	GO=$(GO) ./scripts/walk.sh --files

# The provider against the protocol floor: tofu apply, plan (no changes) and
# destroy of 500 takoform_edge_kv_namespace resources on our host beside 500
# resources of a do-nothing provider, in the same run.
bench-provider:
	GO=$(GO) ./scripts/bench-provider.sh
