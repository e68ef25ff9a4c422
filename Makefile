# The two commands users need (see README.md): `make run` and `make test`.
# Everything else is CMake; this file only picks build folders and flags.
BUILD      ?= build
TEST_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
RUN_ARGS   ?=

.PHONY: all deps build run test dist fuzz fuzz-run bench clean
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

# libFuzzer targets (clang): the library under test is built with coverage + ASan + UBSan too.
# `make fuzz-run FUZZ_SECONDS=N` runs every target N seconds on a copy of its corpus and fails
# on the first crash (FUZZ_JOBS targets at a time, under nice). See docs/fuzzing.md.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 1
fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE= -DCMAKE_C_FLAGS="-O1 -g" \
	  -DLP_BUILD_FUZZERS=ON -DLP_BUILD_TESTS=OFF -DLP_WITH_CUDA=OFF >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target lp_fuzzers

fuzz-run: fuzz
	fuzz/run.sh -b $(FUZZ_BUILD) -t $(FUZZ_SECONDS) -j $(FUZZ_JOBS)

bench: build
	@echo "benchmarks: see bench/README.md"

clean:
	rm -rf $(BUILD) $(TEST_BUILD) build-fuzz
