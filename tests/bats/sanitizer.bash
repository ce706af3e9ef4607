# sanitizer.bash — for bats files: which sanitizer the build tree under test has.

# The sanitizer the build tree was configured with ("address,undefined", "thread"; empty:
# none), from its tmpicc.  A sanitized process's memory figures include the sanitizer's own
# (TSan: shadow and metadata several times the program's memory).
build_sanitizer() {
    sed -n 's/^TMPI_SANFLAGS="-fsanitize=\(.*\)"$/\1/p' "$TMPI_BUILD/launcher/tmpicc"
}

# Under ThreadSanitizer every process the tests start (agents, job hosts, launchers) reads the
# suppressions of tests/tsan.supp (why each is not ours is written there).
if [ "$(build_sanitizer)" = thread ] && [[ "${TSAN_OPTIONS:-}" != *suppressions=* ]]; then
    export TSAN_OPTIONS="suppressions=$TMPI_SRC/tests/tsan.supp${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
fi
