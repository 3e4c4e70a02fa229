# Thin wrapper over the CMake presets. `make run` and `make test` are all a new
# machine needs: both install missing Debian packages first (scripts/bootstrap).
PRESET ?= dev
BUILD_DIR := $(if $(filter dev,$(PRESET)),build,build-$(PRESET))
JOBS ?= 2

.PHONY: all bootstrap configure build run test bench bench-http clean client-deps \
        sanitize-configure sanitize-build check-asan fuzz-smoke fuzz-long check-tsan check-deep

all: build

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then cmake --preset $(PRESET) >/dev/null; fi

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@scripts/demo $(BUILD_DIR)/engram

# The npm packages of the real-client tests (the MCP SDK; the mem0ai and
# openai clients; the previous mem0ai client), from their lockfiles; `npm ci` runs only when node_modules
# is older than package-lock.json. Without node and npm the tests cannot run:
# scripts/bootstrap installs them.
NPM_TEST_DIRS := tests/mcp-client tests/clients tests/mem0-earlier-client
client-deps:
	@for d in $(NPM_TEST_DIRS); do \
	  if [ ! -f $$d/node_modules/.package-lock.json ] || \
	     [ $$d/package-lock.json -nt $$d/node_modules/.package-lock.json ]; then \
	    npm ci --prefix $$d --no-audit --no-fund --loglevel=error || exit 1; \
	  fi; \
	done

test: build client-deps
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

bench: build
	@$(BUILD_DIR)/engram bench

# Mixed HTTP load on loopback (docs/PERFORMANCE.md): the release build when present
# (make build PRESET=release), else $(BUILD_DIR), on SQLite, on PostgreSQL and with two servers on
# one PostgreSQL (scripts/bench-http-backends). Settings: see scripts/bench-http.
bench-http: build
	@scripts/bench-http-backends

# Deeper checks (README.md, docs/RELIABILITY.md) share one clang build, the
# `sanitize` preset (build-sanitize): ASan+UBSan that halt on the first error,
# plus the libFuzzer targets of fuzz/.
SANITIZE_DIR := build-sanitize
# fuzz-long defaults to 30 minutes a target unless FUZZ_SECONDS is given.
FUZZ_LONG_SECONDS := $(if $(filter command line environment,$(origin FUZZ_SECONDS)),$(FUZZ_SECONDS),1800)
FUZZ_SECONDS ?= 15
# Sanitizer settings of check-asan: stop at the first report; leaks count;
# the suppressions are for third-party code only (each one documented there).
SANITIZER_ENV := ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:check_initialization_order=1:detect_stack_use_after_return=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$(CURDIR)/fuzz/ubsan.supp \
  LSAN_OPTIONS=suppressions=$(CURDIR)/fuzz/lsan.supp

sanitize-configure: bootstrap
	@if [ ! -f $(SANITIZE_DIR)/build.ninja ]; then cmake --preset sanitize >/dev/null; fi

sanitize-build: sanitize-configure
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)

# The whole ctest suite (PostgreSQL fixture and real clients included) under
# ASan+UBSan, plus one pass of every fuzz target over its corpus (label fuzz).
check-asan: sanitize-build client-deps
	@cd $(SANITIZE_DIR) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900

# Each fuzz target for FUZZ_SECONDS (15) from its corpus; fails on any crash,
# leak, timeout or out-of-memory. Builds only the fuzz targets and their layers.
fuzz-smoke: sanitize-configure
	@cmake --build $(SANITIZE_DIR) -j $(JOBS) --target engram_fuzz
	@scripts/fuzz smoke $(SANITIZE_DIR) $(FUZZ_SECONDS)

# Long runs (30 minutes a target by default); the working corpora are kept in
# build-sanitize/fuzz/corpora; summary of exec/s and coverage in build-sanitize/fuzz/summary-long.md.
fuzz-long: sanitize-configure
	@cmake --build $(SANITIZE_DIR) -j $(JOBS) --target engram_fuzz
	@scripts/fuzz long $(SANITIZE_DIR) $(FUZZ_LONG_SECONDS)

# ThreadSanitizer (the `tsan` preset, build-tsan) over the tests where threads
# and processes meet: the engine's concurrency and snapshot tests, the chain
# summaries that a snapshot's readers split on first use, the HTTP
# transport, the server end to end (hardening, limits) and the
# multi-process tests, on SQLite and PostgreSQL. Builds only those test
# binaries and the engram binary they start.
TSAN_DIR := build-tsan
TSAN_TESTS := Concurrency|Snapshot|LazySentences|HttpServer|ServerTest|ServerHardening|ServerLimits|MultiProcess
TSAN_ENV := TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/scripts/tsan.supp
check-tsan: bootstrap
	@if [ ! -f $(TSAN_DIR)/build.ninja ]; then cmake --preset tsan >/dev/null; fi
	@cmake --build $(TSAN_DIR) -j $(JOBS) --target unit_engine unit_retrieval unit_server integration_tests
	@cd $(TSAN_DIR) && $(TSAN_ENV) ctest --output-on-failure -j $(JOBS) --timeout 900 -R '$(TSAN_TESTS)'

# Every deeper check in one target (what .ci/run runs after make test): the
# whole suite under ASan+UBSan, every fuzz target for a bounded time, and the
# threaded tests under TSan.
check-deep: check-asan fuzz-smoke check-tsan

clean:
	rm -rf build build-release build-asan build-tsan build-sanitize
