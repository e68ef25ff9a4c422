# The two commands users need (see README.md): `make run` and `make test`.
# Everything else is CMake; this file only picks build folders and flags.
BUILD      ?= build
TEST_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
RUN_ARGS   ?=

.PHONY: all deps test-deps build run test dist fuzz fuzz-run bench clean
all: build

deps:
	@scripts/install-deps

# What the tests need on top: Debian's chromium for the report.html browser test.
test-deps:
	@scripts/install-deps --tests

# The log stays short: one line per step (scripts/quiet-build); what cmake, make and the compilers
# print goes to $(BUILD)/make-run.log and $(TEST_BUILD)/make-test.log.
MAKEFLAGS += --no-print-directory
RUN_TARGETS ?= llmprof llmprof-llm llmprof_inject

# Everything, tests included (what `make` alone does).
build: deps
	@JOBS=$(JOBS) scripts/quiet-build $(BUILD) $(BUILD)/make-build.log \
	  "-DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)"

# The main job: `llmprof run` on the built-in model (GPU when usable, else CPU). Builds only the
# CLI, the reference workload and the tracer.
run: deps
	@JOBS=$(JOBS) scripts/quiet-build $(BUILD) $(BUILD)/make-run.log \
	  "-DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)" $(RUN_TARGETS)
	@echo "run        $(BUILD)/bin/llmprof run $(RUN_ARGS)"
	@$(BUILD)/bin/llmprof run $(RUN_ARGS)

# Sanitizer build (ASan + UBSan), every test through CTest. The per-test lines and the output of
# failed tests are in $(TEST_BUILD)/make-test.log; the terminal gets the summary and the failures.
test: test-deps
	@JOBS=$(JOBS) scripts/quiet-build $(TEST_BUILD) $(TEST_BUILD)/make-test.log \
	  "-DCMAKE_BUILD_TYPE=Debug -DLP_SANITIZE=ON $(CMAKE_ARGS)"
	@echo "test       ctest -j $(JOBS) in $(TEST_BUILD) (log: $(TEST_BUILD)/make-test.log)"
	@cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS) >>make-test.log 2>&1; rc=$$?; \
	  awk '/% tests passed/ { on = 1 } /^Label Time Summary/ { skip = 1 } skip && /^$$/ { skip = 0; next } \
	    on && !skip && !/^Total Test time/ && !/^Errors while running CTest/ && NF { print "           " $$0 }' make-test.log; \
	  exit $$rc

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
