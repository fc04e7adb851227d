# The two commands people need: `make serve` and `make test`. Both install missing Debian
# packages first (apt-get; sudo when not root).

SWIFT       ?= swift
PORT        ?= 8080
ARGS        ?=
APT_PACKAGES = libevent-dev pkg-config libdeflate-dev libcurl4-openssl-dev libsqlite3-dev libhiredis-dev libssl-dev libvips-dev \
	ca-certificates
TEST_APT_PACKAGES = prometheus redis-server chromium chromium-driver openssl nginx-light gdb libmagic1 systemd man-db \
	groff-base
SUDO        := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CONTRACT_VENV = .build/contract-venv
SCHEMATHESIS  = schemathesis==4.32.5
# The Python tests' venv (Selenium, jsonschema, iiif-prezi3, iiif-validator, httplint, REDbot:
# Tests/Python/requirements.txt), and one for the third-party Met clients test_met_clients runs
# (Tests/Python/requirements-clients.txt), apart because met-api needs pydantic<2 and
# iiif-prezi3 pydantic>=2.
PYTHON_VENV   = .build/python-venv
PYTHON_CLIENTS_VENV = .build/python-clients-venv
BENCH_ARGS  ?=
# command:package pairs that `make bench` installs when the command is missing.
BENCH_TOOLS  = wrk:wrk nginx:nginx-light redis-server:redis-server vipsthumbnail:libvips-tools

.PHONY: deps test-deps build serve demo install test test-unit test-tsan test-contract test-python bench bench-smoke lint \
	clean help fuzz

help:
	@echo "make serve        start themet against the real Met on http://127.0.0.1:$(PORT) (says at start-up whether the Met answers)"
	@echo "make demo         start themet with the bundled Fixtures/ as its upstream: no network needed"
	@echo "make build        the release build only"
	@echo "make install      the release build, then themet, its manual page, bash completion, an example config and"
	@echo "                  the systemd unit under DESTDIR + PREFIX (/usr/local): make install PREFIX=/usr DESTDIR=/tmp/pkg"
	@echo "make test         build and run every test: lint, unit, integration, contract, Python (browser, linters, Met clients)"
	@echo "make test-unit    the unit tests only (no servers started), in seconds"
	@echo "make test-contract  the running server against openapi.yaml (schemathesis)"
	@echo "make test-python  the Python tests: the explorer and CORS in headless Chromium, IIIF, HTTP linters, Met clients"
	@echo "make test-tsan    the Swift tests under ThreadSanitizer (CI runs them)"
	@echo "make bench        themet vs nginx proxy_cache on loopback, a few minutes (BENCH_ARGS='--markdown FILE')"
	@echo "make bench-smoke  the same benchmark in seconds, no thresholds (CI runs it)"
	@echo "make fuzz         the libFuzzer harnesses in Fuzz/, FUZZ_SECONDS (60) each (FUZZ_HARNESSES='request-head')"
	@echo "make lint         swift format lint --strict over the sources and tests"
	@echo "make deps         install the Debian packages the build needs"
	@echo "make test-deps    install those and the ones the tests need (redis-server, chromium, prometheus, ...)"
	@echo "make clean        remove .build"
	@echo "make help         this list"
	@echo "extra flags: make serve PORT=9090 ARGS='--log-level debug --cache-size 512MiB'"

# Installs the Debian packages of the list $(1) that are missing (apt-get; sudo when not root).
define apt_install
	@missing=""; \
	for package in $(1); do \
	    dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "installing Debian packages:$$missing"; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

## Installs the Debian packages the build needs, if any are missing.
deps:
	$(call apt_install,$(APT_PACKAGES))
	@command -v $(SWIFT) >/dev/null || { echo "the Swift toolchain (swift) is not on PATH"; exit 1; }

## And those the tests use: promtool (from prometheus) checks /metrics; redis-server is the shared
## tier of the multi-instance tests (Tests/with-redis starts one for the run and stops it after);
## chromium and chromium-driver run the explorer's tests (Tests/Python/run starts and stops them);
## openssl makes the certificate of their stand-in for the Met's image host; nginx-light is the
## reverse proxy the README documents, which the sharing tests put in front of themet; gdb prints
## the threads of a test run that passes its deadline (Tests/with-deadline); libmagic1 is what the
## IIIF validator's python-magic loads.
test-deps: deps
	$(call apt_install,$(TEST_APT_PACKAGES))

build: deps
	$(SWIFT) build -c release

## The release build, then what Packaging/install lists under $(DESTDIR)$(PREFIX).
PREFIX  ?= /usr/local
DESTDIR ?=
install: build
	Packaging/install .build/release "$(DESTDIR)" "$(PREFIX)"

serve: build
	.build/release/themet serve --port $(PORT) $(ARGS)

demo: build
	.build/release/themet serve --port $(PORT) --upstream Fixtures --data-dir .build/demo-data $(ARGS)

# The most seconds one run of the Swift tests may take (minutes are usual) before Tests/with-deadline
# prints its threads and stops it.
TEST_DEADLINE ?= 1200

test: test-deps lint
	$(SWIFT) build --build-tests
	Tests/with-redis Tests/with-deadline $(TEST_DEADLINE) $(SWIFT) test --skip-build
	Tests/with-redis $(MAKE) test-contract
	$(MAKE) test-python

## The explorer and CORS in a headless Chromium (Selenium), the IIIF manifests against their JSON
## schema, httplint and REDbot over the answers, and third-party Met clients against the mirror,
## each against the built servers; Python packages from PyPI in two venvs under .build.
test-python: test-deps $(PYTHON_VENV)/installed $(PYTHON_CLIENTS_VENV)/installed
	$(SWIFT) build
	THEMET_CLIENTS_PYTHON=$(PYTHON_CLIENTS_VENV)/bin/python \
	Tests/Python/run "$$($(SWIFT) build --show-bin-path)" $(PYTHON_VENV)/bin/python

# $(1): the venv's directory, $(2): its requirements file.
define python_venv
	python3 -m venv $(1) || { \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv && python3 -m venv $(1); }
	$(1)/bin/pip install --quiet --disable-pip-version-check -r $(2)
	touch $(1)/installed
endef

$(PYTHON_VENV)/installed: Tests/Python/requirements.txt
	$(call python_venv,$(PYTHON_VENV),$<)

$(PYTHON_CLIENTS_VENV)/installed: Tests/Python/requirements-clients.txt
	$(call python_venv,$(PYTHON_CLIENTS_VENV),$<)

## The running server against openapi.yaml, with schemathesis (from PyPI, in a venv under .build).
test-contract: deps $(CONTRACT_VENV)/bin/schemathesis
	$(SWIFT) build
	Tests/Contract/run "$$($(SWIFT) build --show-bin-path)" $(CONTRACT_VENV)/bin/schemathesis

$(CONTRACT_VENV)/bin/schemathesis:
	python3 -m venv $(CONTRACT_VENV) || { \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv && python3 -m venv $(CONTRACT_VENV); }
	$(CONTRACT_VENV)/bin/pip install --quiet --disable-pip-version-check $(SCHEMATHESIS)

## The same tests with ThreadSanitizer, on the test process and on the servers it starts; any
## report (written to .build-tsan/reports) fails the run, and is printed even when a test failed
## too (a server that TSan stopped with exit 66 fails its test). The tests that time the Met's
## arrivals (TIMED_TESTS) run afterwards, alone: beside the others, the sanitizer's cost on two
## cores stretches the way from the pacer's token to the fake by seconds.
TIMED_TESTS = aFloodFromOneClientLeavesAnothersMissItsTurn|underLoadOnEveryInstanceTheUpstreamNeverSeesMoreThanTheGroupsBudget
test-tsan: test-deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	rm -rf .build-tsan/reports && mkdir -p .build-tsan/reports
	status=0; export THEMET_BIN_DIR="$$($(SWIFT) build --sanitize=thread --scratch-path .build-tsan --show-bin-path)" \
	TSAN_OPTIONS="log_path=$(CURDIR)/.build-tsan/reports/tsan"; \
	Tests/with-redis Tests/with-deadline $(TEST_DEADLINE) $(SWIFT) test --skip-build --sanitize=thread \
	    --scratch-path .build-tsan --skip '$(TIMED_TESTS)' || status=$$?; \
	Tests/with-redis Tests/with-deadline $(TEST_DEADLINE) $(SWIFT) test --skip-build --sanitize=thread \
	    --scratch-path .build-tsan --filter '$(TIMED_TESTS)' --no-parallel || status=$$?; \
	if ls .build-tsan/reports/tsan* >/dev/null 2>&1; then \
	    cat .build-tsan/reports/tsan*; echo "ThreadSanitizer reported data races"; exit 1; fi; \
	exit $$status

## The libFuzzer harnesses (Fuzz/NAME.swift with seeds in Fuzz/corpus/NAME/), built with ASan
## against MetCore and run FUZZ_SECONDS each; any crash fails. FUZZ_HARNESSES picks some (default all).
FUZZ_SECONDS   ?= 60
FUZZ_HARNESSES ?=
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) Fuzz/run $(FUZZ_HARNESSES)

## Benchmarks/run (wrk and nginx from Debian, installed like `deps` does if missing), on a
## release build. $(1): extra arguments.
define bench_run
	@missing=""; PATH="$$PATH:/usr/sbin:/sbin"; \
	for tool in $(BENCH_TOOLS); do \
	    command -v $${tool%%:*} >/dev/null || missing="$$missing $${tool#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
	    echo "installing Debian packages:$$missing"; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	$(SWIFT) build -c release
	Benchmarks/run --bin-dir "$$($(SWIFT) build -c release --show-bin-path)" $(1) $(BENCH_ARGS)
endef

bench: deps
	$(call bench_run)

bench-smoke: deps
	$(call bench_run,--smoke)

test-unit: deps
	$(SWIFT) test --filter 'MetCoreTests|MetDiskTests|MetRedisTests|ThemetTests|HTTPWireTests|MetHTTPTests'

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

clean:
	rm -rf .build
