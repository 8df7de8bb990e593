# Thin wrappers around meson for people who just want to try orrery:
#   make demo    install missing packages, build, replay a sample trace (`orrery replay`)
#   make test    the same build, then every test suite but gpu and slow
# Everything real lives in meson.build; see README.md.

MESON        ?= meson
BUILD_DIR    ?= build
ASAN_DIR     ?= build-asan
FUZZ_DIR     ?= build-fuzz
# Extra `meson setup` options, e.g. MESON_FLAGS=-Dbuildtype=release.
MESON_FLAGS  ?=
TEST_FLAGS   ?= --print-errorlogs --no-suite gpu --no-suite slow
FUZZ_SECONDS ?= 20
# `make fuzz-long`: each target this long (an hour), e.g. FUZZ_TARGETS="kineto replay".
FUZZ_LONG_SECONDS ?= 3600
FUZZ_TARGETS ?=
DEMO_TRACE   ?= traces/samples/tiny-2rank

# WERROR=1 builds with warnings as errors (CI does).
ifeq ($(WERROR),1)
WERROR_FLAG := --werror
endif

ASAN_FLAGS := -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
FUZZ_FLAGS := -Dfuzz=enabled -Db_sanitize=address,undefined -Db_lundef=false
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Tracked C and C++ sources (`git add` a new file before checking it).
SOURCES_CMD := git ls-files -z -- '*.c' '*.h' '*.cpp'

# meson itself treats a directory with coredata.dat as configured.
configured = test -f $(1)/meson-private/coredata.dat

.PHONY: all deps build bundle demo test asan fuzz fuzz-long fuzz-build format check-format bench clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@if ! $(call configured,$(BUILD_DIR)); then \
		$(MESON) setup $(WERROR_FLAG) $(MESON_FLAGS) $(BUILD_DIR); \
	elif [ -n "$(WERROR_FLAG)" ]; then \
		$(MESON) configure -Dwerror=true $(BUILD_DIR); \
	fi
	$(MESON) compile -C $(BUILD_DIR)

# A relocatable tarball of the build (scripts/bundle.sh): bin/orrery, lib/ with every
# library it needs but glibc's, the tracer and the orrery_record module.  Its path is the
# last line printed.
bundle: build
	@bash scripts/bundle.sh $(BUILD_DIR)

demo: build
	./$(BUILD_DIR)/cli/orrery replay $(DEMO_TRACE)

test: build
	$(MESON) test -C $(BUILD_DIR) $(TEST_FLAGS)

asan: deps
	@$(call configured,$(ASAN_DIR)) || $(MESON) setup $(ASAN_FLAGS) $(MESON_FLAGS) $(ASAN_DIR)
	$(MESON) compile -C $(ASAN_DIR)
	$(ASAN_ENV) $(MESON) test -C $(ASAN_DIR) $(TEST_FLAGS)

fuzz-build: deps
	@$(call configured,$(FUZZ_DIR)) || \
		CC=clang CXX=clang++ $(MESON) setup $(FUZZ_FLAGS) $(MESON_FLAGS) $(FUZZ_DIR)
	$(MESON) compile -C $(FUZZ_DIR)

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_TARGETS="$(FUZZ_TARGETS)" \
		bash scripts/fuzz-smoke.sh $(FUZZ_DIR)

fuzz-long: fuzz-build
	FUZZ_SECONDS=$(FUZZ_LONG_SECONDS) FUZZ_TARGETS="$(FUZZ_TARGETS)" FUZZ_WORK=fuzz-long \
		bash scripts/fuzz-smoke.sh $(FUZZ_DIR)

format:
	$(SOURCES_CMD) | xargs -0 -r clang-format -i

check-format:
	$(SOURCES_CMD) | xargs -0 -r clang-format --dry-run --Werror

bench: build
	bash bench/run.sh
	bash bench/whatif-accuracy.sh
	bash bench/gemm-tiles.sh
	bash bench/h200-gpt.sh
	bash bench/whatif-launch.sh
	bash bench/whatif-ranking.sh
	bash bench/whatif-speed.sh
	bash bench/tracer-cost.sh

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(FUZZ_DIR)
