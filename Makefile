# Thin wrapper around CMake presets; see README.md.
#   make          build the dev preset (ASan+UBSan) into build/, binary at build/houston
#   make test     install missing Debian packages, build, lint, run every test
#   make demo     build and run `houston demo` (8 GB200 racks, a laggard found and replaced,
#                 the dashboard on http://127.0.0.1:8080/); make agent-demo: the agent alone
#   make release  optimised build into build-release/
#   make bench    run the benchmarks (release build: bench/agent, ingest, jobs, step, straggler, sim) and
#                 print ratios against their peers
#   make tsan     ThreadSanitizer build into build-tsan/ and its tests
#   make format   clang-format every C file in place
#   make lint     clang-format check, cppcheck and clang-tidy

JOBS ?= $(shell nproc)
SOURCES = $(shell git ls-files '*.c' '*.h' 2>/dev/null || find src tests bench -name '*.[ch]')

.PHONY: all build deps web-deps test unit demo agent-demo release bench format lint tsan fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh

build/CMakeCache.txt:
	cmake --preset dev

build: build/CMakeCache.txt
	cmake --build build -j $(JOBS)

web-deps: deps
	bash scripts/web-deps.sh

# The release preset is built too, so that -O2-only warnings cannot hide until `make bench`.
test: deps build lint release web-deps
	ctest --test-dir build --output-on-failure -j 1

unit: build
	ctest --test-dir build --output-on-failure -L 'unit|fuzz'

demo: deps build web-deps
	bash scripts/demo.sh

agent-demo: deps build
	bash scripts/agent-demo.sh

build-release/CMakeCache.txt:
	cmake --preset release

release: build-release/CMakeCache.txt
	cmake --build build-release -j $(JOBS)

bench: deps release
	bash bench/agent/run.sh
	bash bench/ingest/run.sh
	bash bench/jobs/run.sh
	bash bench/step/run.sh
	bash bench/straggler/run.sh
	bash bench/sim/run.sh

format:
	clang-format -i $(SOURCES)

lint: build
	bash scripts/lint.sh

tsan:
	cmake --preset tsan && cmake --build build-tsan -j $(JOBS)
	ctest --test-dir build-tsan --output-on-failure -L 'unit|integration'

fuzz:
	cmake --preset fuzz && cmake --build build-fuzz -j $(JOBS)

clean:
	rm -rf build build-release build-fuzz build-tsan
