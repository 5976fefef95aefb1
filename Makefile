# waitroom — run `make help` for the targets.
export PATH := $(PATH):/usr/local/go/bin:$(shell go env GOPATH 2>/dev/null)/bin
GO ?= go

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: deps
deps: ## install test and benchmark dependencies (redis-server, redis-tools, nginx, chromium, wrk, curl) when missing
	@scripts/deps

.PHONY: build
build: ## build the static binary bin/waitroom
	scripts/build bin/waitroom

.PHONY: test
test: deps ## everything CI checks: gofmt, go vet, config-doc drift, go test -race -shuffle=on ./..., then the Allocs tests without -race
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -race -shuffle=on -timeout 20m ./...
	$(GO) test -count=1 -run 'Allocs' ./proxy/... ./static/... ./admission/... ./inventory/...

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (default 20s)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-20s} $$pkg || exit 1; \
	  done; \
	done

.PHONY: bench
bench: deps build ## side-by-side benchmarks (sidecar vs redis-benchmark EVAL), ratios and medians
	$(GO) run ./bench/inventory -bin bin/waitroom

.PHONY: sim
sim: ## the deterministic flash-sale simulation of the admission engine (report on stdout)
	$(GO) run ./cmd/waitroom-load sim

.PHONY: demo
demo: build ## run the seat-hold sidecar on the embedded store with a scripted walk-through
	scripts/demo bin/waitroom

.PHONY: clean
clean: ## remove build output
	rm -rf bin bench/out
