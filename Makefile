# ferry's front door. `make demo` and `make test` work on a fresh Debian 12
# machine: they install what is missing (as root; otherwise they print the
# apt-get line to run), configure, build and run.
BUILD ?= build
MESON_OPTS ?= -Dwerror=true

.PHONY: all deps build test demo bench clean test-unit test-asan test-valgrind deb

all: build

deps:
	@tools/deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	meson setup --reconfigure $(BUILD) $(MESON_OPTS) >/dev/null
	ninja -C $(BUILD)

test: build
	@tools/run-tests.sh $(BUILD) $(TEST_ARGS)

test-unit: build
	@tools/run-tests.sh $(BUILD) --suite unit

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (which slow every test several-fold: meson's timeouts x3).
test-asan: deps
	$(MAKE) BUILD=build-asan MESON_OPTS="-Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false" \
		TEST_ARGS="--timeout-multiplier 3" test

# The unit tests under valgrind (memcheck; leaks are errors).
test-valgrind: build
	@tools/run-tests.sh $(BUILD) --suite unit \
		--wrapper 'valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite' \
		--timeout-multiplier 10

demo: build
	@tools/demo.sh $(BUILD)

# The Debian packages (build-deb/), from a clean copy of the tree, and
# lintian's verdict on them.
deb: deps
	@tools/deb.sh

clean:
	rm -rf $(BUILD)
