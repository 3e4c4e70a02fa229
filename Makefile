# Thin wrapper over the CMake presets. `make run` and `make test` are all a new
# machine needs: both install missing Debian packages first (scripts/bootstrap).
PRESET ?= dev
BUILD_DIR := $(if $(filter dev,$(PRESET)),build,build-$(PRESET))
JOBS ?= 2

.PHONY: all bootstrap configure build run test bench bench-http clean mcp-client-deps

all: build

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then cmake --preset $(PRESET) >/dev/null; fi

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@scripts/demo $(BUILD_DIR)/engram

# The MCP SDK client test's dependencies (only when node and npm exist; skipped
# when node_modules is up to date with package-lock.json).
MCP_CLIENT := tests/mcp-client
mcp-client-deps:
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  if [ ! -f $(MCP_CLIENT)/node_modules/.package-lock.json ] || \
	     [ $(MCP_CLIENT)/package-lock.json -nt $(MCP_CLIENT)/node_modules/.package-lock.json ]; then \
	    npm ci --prefix $(MCP_CLIENT) --no-audit --no-fund --loglevel=error; \
	  fi; \
	else echo "make: node/npm not found; the MCP SDK client test will be skipped" >&2; fi

test: build mcp-client-deps
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
