# The two commands users need (see README.md): `make run` and `make test`.
# Everything else is CMake; this file only picks build folders and flags.
BUILD      ?= build
TEST_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
RUN_ARGS   ?=

.PHONY: all deps build run test dist fuzz bench clean
all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) >/dev/null || \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: `llmprof run` on the built-in model (GPU when usable, else CPU).
run: build
	$(BUILD)/bin/llmprof run $(RUN_ARGS)

# Sanitizer build (ASan + UBSan), every test through CTest.
test: deps
	@cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLP_SANITIZE=ON $(CMAKE_ARGS) >/dev/null || \
	  cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLP_SANITIZE=ON $(CMAKE_ARGS)
	@cmake --build $(TEST_BUILD) -j $(JOBS)
	cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS)

# Relocatable binaries for a GPU host that lacks libyaml/jansson/sqlite3/zlib.
dist: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DLP_STATIC_DEPS=ON -DLP_BUILD_TESTS=ON $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

fuzz: deps
	CC=clang cmake -S . -B build-fuzz -DLP_BUILD_FUZZERS=ON -DLP_BUILD_TESTS=OFF -DLP_WITH_CUDA=OFF
	cmake --build build-fuzz -j $(JOBS)

bench: build
	@echo "benchmarks: see bench/README.md"

clean:
	rm -rf $(BUILD) $(TEST_BUILD) build-fuzz
