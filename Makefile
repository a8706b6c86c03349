# Parley — the one place commands are spelled.
SHELL := /bin/bash

DATASTAR_VERSION := v1.0.2
DATASTAR_SHA256  := 2837d87acf6ee0ba8e4e63765926c25a98d63883b02f88be194a86b81d3fd24a
DESKTOP_TAGS     := desktop,production,webkit2_41
GO               ?= go

.PHONY: assets build desktop run test unit e2e bench generate vet fmt check mastra-cli mastra-oracle axe deps dist temml

# The Datastar client comes from its Go module, checked, never committed.
assets: ui/static/datastar.js

ui/static/datastar.js:
	@dir=$$($(GO) mod download -json github.com/starfederation/datastar@$(DATASTAR_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	test -n "$$dir" || { echo "could not download github.com/starfederation/datastar@$(DATASTAR_VERSION)"; exit 1; }; \
	echo "$(DATASTAR_SHA256)  $$dir/bundles/datastar.js" | sha256sum --check --quiet - || { echo "datastar.js checksum mismatch"; exit 1; }; \
	install -m 0644 "$$dir/bundles/datastar.js" $@

# Temml (TeX to MathML, run by ui/markdown/temml.go) is committed, so that
# building needs nothing but Go. `make temml` fetches the pinned release
# again, checks the tarball against npm's integrity for it, and copies the
# converter, its licence and its stylesheet (ui/markdown's test checks the
# converter's sha256 against the one temml.go names).
TEMML_VERSION   := 0.13.5
TEMML_INTEGRITY := sha512-aPkDDgunanpLNL0ql32HbolqLep+w8DRcVXRql7rWrMt/PhczdLgL4UBYYVU3BYjCNjkGq4EqwIicu/zWr1iOg==

temml:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	(cd "$$tmp" && npm pack --silent temml@$(TEMML_VERSION) >/dev/null) && \
	got="sha512-$$(openssl dgst -sha512 -binary "$$tmp/temml-$(TEMML_VERSION).tgz" | base64 -w0)" && \
	{ test "$$got" = "$(TEMML_INTEGRITY)" || { echo "temml $(TEMML_VERSION): tarball integrity mismatch"; exit 1; }; } && \
	tar -xzf "$$tmp/temml-$(TEMML_VERSION).tgz" -C "$$tmp" && \
	install -m 0644 "$$tmp/package/dist/temml.min.js" "$$tmp/package/LICENSE" ui/markdown/temml/ && \
	install -m 0644 "$$tmp/package/dist/Temml-Local.css" ui/static/temml.css && \
	install -m 0644 "$$tmp/package/dist/Temml.woff2" ui/static/Temml.woff2 && \
	echo "temml $(TEMML_VERSION) copied; check git diff"

# The real mastra CLI (npm), an external client of the JSON API in the e2e
# tests; its exact version is pinned by e2e/mastracli/package-lock.json.
MASTRA_CLI_STAMP := e2e/mastracli/node_modules/.installed

mastra-cli: $(MASTRA_CLI_STAMP)

$(MASTRA_CLI_STAMP): e2e/mastracli/package.json e2e/mastracli/package-lock.json
	npm ci --prefix e2e/mastracli --no-audit --no-fund
	touch $@

# The real @mastra/core Agent (npm), run beside Parley on the same scripted
# model by the differential test (e2e/mastra_oracle_test.go); its exact
# version, the one the pinned CLI installs, is pinned by
# e2e/mastraoracle/package-lock.json.
MASTRA_ORACLE_STAMP := e2e/mastraoracle/node_modules/.installed

mastra-oracle: $(MASTRA_ORACLE_STAMP)

$(MASTRA_ORACLE_STAMP): e2e/mastraoracle/package.json e2e/mastraoracle/package-lock.json
	npm ci --prefix e2e/mastraoracle --no-audit --no-fund
	touch $@

# axe-core (npm), injected into every screen by the e2e accessibility test;
# its exact version is pinned by e2e/axe/package-lock.json.
AXE_STAMP := e2e/axe/node_modules/.installed

axe: $(AXE_STAMP)

$(AXE_STAMP): e2e/axe/package.json e2e/axe/package-lock.json
	npm ci --prefix e2e/axe --no-audit --no-fund
	touch $@

# -trimpath as in build/dist.sh, so that a release after these builds only
# links (the compiled packages are shared through the build cache).
build: assets
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/parley .

desktop: assets
	CGO_ENABLED=1 $(GO) build -trimpath -tags $(DESKTOP_TAGS) -o bin/parley-desktop .

# The system packages the tests need (cgo, GTK/WebKitGTK, Chromium, Xvfb,
# X tools, dbus-daemon, node): installed with apt-get when missing, a single
# dpkg-query when not; build/deps.sh says what each is for.
deps:
	@build/deps.sh

# Release artifacts in dist/: the web binary for every platform, the Linux
# desktop app as .deb and .tar.gz, SHA256SUMS (build/dist.sh).
dist: assets
	@build/deps.sh desktop
	rm -rf dist
	VERSION=$(VERSION) build/dist.sh

# Flags for `parley serve` go in ARGS: make run ARGS="--addr 127.0.0.1:9000".
run: build
	./bin/parley serve $(ARGS)

generate:
	$(GO) tool templ generate

vet: assets
	$(GO) vet ./...

# What a change must leave clean, run first by `make test`: gofmt, the
# committed templ output, go vet (also the desktop build's files) and
# staticcheck (pinned in go.mod as a tool; staticcheck.conf says which checks).
GO_FILES = $$(git ls-files '*.go')

check: assets
	@out=$$(gofmt -l $(GO_FILES)); test -z "$$out" || { echo "gofmt would change these (make fmt):"; echo "$$out"; exit 1; }
	@$(GO) tool templ generate >/dev/null 2>&1 || { $(GO) tool templ generate; exit 1; }
	@git diff --quiet -- '*_templ.go' || { echo "templ generate changed these committed files (commit them):"; git diff --name-only -- '*_templ.go'; exit 1; }
	$(GO) vet ./...
	CGO_ENABLED=1 $(GO) vet -tags $(DESKTOP_TAGS) ./app/
	$(GO) tool staticcheck ./...

fmt:
	gofmt -w $(GO_FILES)
	$(GO) tool templ generate

# Every test: the system packages first, unit packages in parallel, then the
# browser e2e suite and the desktop smoke test (under Xvfb) against the real
# server.
test: deps check desktop mastra-cli mastra-oracle axe
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /e2e -e /build)
	$(GO) test -count=1 -run '^TestBigReplyMemoryHandedBack$$' ./storage/ # resident memory: not under -race
	$(GO) test -count=1 -timeout 30m ./build/
	PARLEY_DESKTOP_BIN=$(CURDIR)/bin/parley-desktop xvfb-run -a -s "-screen 0 1280x800x24" \
		$(GO) test -count=1 -timeout 20m ./e2e/...

unit: assets
	$(GO) test -count=1 $$($(GO) list ./... | grep -v -e /e2e -e /build)

e2e: deps assets desktop mastra-cli mastra-oracle axe
	PARLEY_DESKTOP_BIN=$(CURDIR)/bin/parley-desktop xvfb-run -a -s "-screen 0 1280x800x24" \
		$(GO) test -count=1 -timeout 20m -v ./e2e/...

# Prints BENCH <name> <value> <unit> lines. The long-thread bench starts
# bin/parley as its own process to time its start-up and read its memory;
# the release builds' tests print the artifacts' sizes.
bench: build
	set -o pipefail; PARLEY_BIN=$(CURDIR)/bin/parley $(GO) test -v -count=1 -run '^TestBench' -timeout 20m ./e2e/... -args -bench \
		| grep -E '^(BENCH|--- FAIL|FAIL|ok|panic)|_test.go:'
	set -o pipefail; $(GO) test -v -count=1 -run '^TestBench(Figures|FinalWrite|BranchFigures)$$' ./agentcore/ ./agentcore/partialjson/ ./agentcore/llm/ ./storage/ -args -bench-figures \
		| grep -E '^(BENCH|--- FAIL|FAIL|panic)|_test.go:'
	set -o pipefail; $(GO) test -run '^$$' -bench . -benchmem ./storage/ ./ui/markdown/ \
		| awk '/^Benchmark/ { printf "BENCH %s %s ns/op\n", $$1, $$3 } /^(FAIL|ok)/'
	set -o pipefail; $(GO) test -v -count=1 -timeout 30m -run '^TestDist' ./build/ \
		| grep -E '^(BENCH|--- FAIL|FAIL|panic)|_test.go:'
