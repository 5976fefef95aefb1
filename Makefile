# waitroom — run `make help` for the targets.
export PATH := $(PATH):/usr/local/go/bin:$(shell go env GOPATH 2>/dev/null)/bin
GO ?= go

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: deps
deps: ## install test and benchmark dependencies (redis-server, redis-tools, nginx, caddy, haproxy, pebble, prometheus, chromium, xvfb, wrk, curl, python3, nodejs) when missing
	@scripts/deps

.PHONY: build
build: ## build the static binary bin/waitroom
	scripts/build bin/waitroom

.PHONY: test
test: deps lint ## everything CI checks: the lint target, config-doc drift, go test -race -shuffle=on ./..., then the Allocs tests without -race, the Kubernetes manifests' check module and the JavaScript client's tests (node --test)
	$(GO) test -race -shuffle=on -timeout 20m ./...
	$(GO) test -count=1 -run 'Allocs' ./proxy/... ./static/... ./admission/... ./inventory/... ./challenge/...
	cd deploy/kubernetes/check && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd clients/js && node --test test/*.test.js

.PHONY: lint
# staticcheck's version is pinned by the tool directive in go.mod; after
# `go mod download` it runs offline.
lint: ## gofmt, go vet and staticcheck on the whole module
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

.PHONY: vulncheck
vulncheck: ## govulncheck against the Go vulnerability database fetched as the Go module golang.org/x/vulndb (VULNDB=file:///path for another copy)
	scripts/vulncheck

.PHONY: fuzz
# FUZZTIME is an execution count by default: with a duration, Go 1.26's fuzz
# coordinator can fail a target with "context deadline exceeded" as the time
# runs out, having found nothing (go.dev/issue/75804, fixed in Go 1.27).
fuzz: ## run every fuzz target for FUZZTIME each (default 100000x executions; a duration such as 20s works too)
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $${FUZZTIME:-100000x} $$pkg || exit 1; \
	  done; \
	done

.PHONY: bench
bench: bench-inventory bench-proxy bench-challenge bench-bots ## the side-by-side benchmarks below

.PHONY: bench-inventory
bench-inventory: deps build ## the sidecar vs redis-benchmark EVAL: holds/s, hot seats, memory; ratios and medians
	$(GO) run ./bench/inventory -bin bin/waitroom

.PHONY: bench-proxy
bench-proxy: deps build ## the proxy vs nginx, status vs a bare fasthttp server, joins per store; ratios and medians
	$(GO) run ./bench/proxy -bin bin/waitroom

.PHONY: bench-controller
bench-controller: deps build ## the admission controller vs fixed rates on a shop of known capacity: fill, overload, brown-out (BENCH_FLAGS=-full: the issue's scenario)
	$(GO) run ./bench/controller -bin bin/waitroom $(BENCH_FLAGS)

.PHONY: bench-challenge
bench-challenge: ## proof-of-work verification per core vs raw SHA-256 (target 200,000/s); powcal: solve times in headless Chromium
	$(GO) run ./bench/challenge

.PHONY: bench-bots
bench-bots: deps build ## what a queue place costs bots (curl, Python, Go, Chrome-copying Go, hybrids, headless Chromium) vs a fan's Chromium, example config over TLS
	$(GO) run ./bench/bots -bin bin/waitroom $(BENCH_FLAGS)

.PHONY: chaos
chaos: deps ## the long chaos scenario: 3 replicas on a 3-master Redis Cluster with replicas, a crowd, replica and master killed -9 and restarted (the short one runs in make test)
	$(GO) test -count=1 -run 'TestChaos$$' -timeout 30m -v ./bench/chaos -chaos.long

.PHONY: sim
sim: ## the deterministic flash-sale simulation of the admission engine (report on stdout)
	$(GO) run ./cmd/waitroom-load sim

.PHONY: demo
demo: build ## waitroom demo: the waiting room in front of a demo ticket shop, no Redis, on http://127.0.0.1:8080/
	bin/waitroom demo $(DEMO_FLAGS)

.PHONY: sidecar-demo
sidecar-demo: build ## the seat-hold sidecar alone on the embedded store, with a scripted walk-through of its API
	scripts/demo bin/waitroom

.PHONY: clean
clean: ## remove build output
	rm -rf bin bench/out
