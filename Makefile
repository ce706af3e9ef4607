# Thin wrapper over meson + ninja.  See README.md.
BUILD  ?= build
PREFIX ?= /usr/local
NINJA  ?= ninja
MESON  ?= meson

.PHONY: all deps check install demo bench soak clean sanitize tsan deb format format-check fuzz

all: $(BUILD)/build.ninja
	$(NINJA) -C $(BUILD)

$(BUILD)/build.ninja:
	$(MESON) setup $(BUILD) --prefix=$(abspath $(PREFIX)) --libdir=lib $(MESON_ARGS)

# Every tracked C source and header formatted by the root .clang-format (CI runs this through
# make check, so formatting cannot drift).
# libFuzzer targets (tests/fuzz) under clang + ASan/UBSan, FUZZ_SECONDS each (default 60).
fuzz:
	tools/fuzz

format-check:
	tools/format-check

format:
	tools/format-check --fix

deps:
	tools/install-deps.sh

check: all
	tests/check.sh $(BUILD)

# Sanitizer builds of the same tree run the same suite (slower: unit test timeouts scaled).
sanitize:
	TMPI_TIMEOUT_MULTIPLIER=3 $(MAKE) check BUILD=build-asan MESON_ARGS="-Db_sanitize=address,undefined -Db_lundef=false"
tsan:
	TMPI_TIMEOUT_MULTIPLIER=5 $(MAKE) check BUILD=build-tsan MESON_ARGS="-Db_sanitize=thread -Db_lundef=false"

install: $(BUILD)/build.ninja
	$(MESON) configure $(BUILD) -Dprefix=$(abspath $(PREFIX)) -Dlibdir=lib
	$(NINJA) -C $(BUILD)
	$(MESON) install -C $(BUILD) --no-rebuild $(if $(DESTDIR),--destdir "$(DESTDIR)")

# Debian packages (debian/) built from a copy of this tree, into $(BUILD)/deb.
deb:
	packaging/build-deb.sh $(BUILD)/deb

# Benchmarks beside Open MPI and MPICH (tests/bench/run.py): writes docs/bench/RESULTS.md and
# PNG plots. QUICK=1: a few minutes. Not part of check: nothing here asserts on a time.
bench: all
	tests/bench/run.py --build $(BUILD) $(if $(QUICK),--quick) $(BENCH_ARGS)
	tests/bench/fabric.py --build $(BUILD) $(if $(QUICK),--quick) --results docs/bench/RESULTS.md
	$(if $(NO_SOAK),,$(MAKE) soak)

# Two users' mixed jobs across 3 emulated hosts with packet loss (tests/bench/soak.py, root):
# nothing lost, agent memory and descriptors flat. SOAK_MINUTES (default 60); QUICK=1: 10.
SOAK_MINUTES ?= $(if $(QUICK),10,60)
soak: all
	tests/bench/soak.py --build $(BUILD) --minutes $(SOAK_MINUTES) --report $(BUILD)/soak-report.txt

demo: deps all
	$(BUILD)/launcher/tmpicc -O2 -o $(BUILD)/hello examples/hello.c
	$(BUILD)/launcher/tmpi-launch -n 4 $(BUILD)/hello

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
