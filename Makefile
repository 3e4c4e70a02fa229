# Thin wrapper over the CMake presets. `make run` and `make test` are all a new
# machine needs: both install missing Debian packages first (scripts/bootstrap).
PRESET ?= dev
BUILD_DIR := $(if $(filter dev,$(PRESET)),build,build-$(PRESET))
JOBS ?= 2

.PHONY: all bootstrap configure build run test bench clean

all: build

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then cmake --preset $(PRESET) >/dev/null; fi

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@scripts/demo $(BUILD_DIR)/engram

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 600

bench: build
	@$(BUILD_DIR)/engram bench

clean:
	rm -rf build build-release build-asan build-tsan
