# Thin wrapper over the CMake presets. `make run` and `make test` are all a new
# machine needs: both install missing Debian packages first (scripts/bootstrap).
PRESET ?= dev
BUILD_DIR := $(if $(filter dev,$(PRESET)),build,build-$(PRESET))
JOBS ?= 2

.PHONY: all bootstrap configure build run test bench bench-http clean client-deps

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
# openai clients), from their lockfiles; `npm ci` runs only when node_modules
# is older than package-lock.json. Without node and npm the tests cannot run:
# scripts/bootstrap installs them.
NPM_TEST_DIRS := tests/mcp-client tests/clients
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

clean:
	rm -rf build build-release build-asan build-tsan
