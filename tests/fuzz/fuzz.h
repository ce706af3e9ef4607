/* fuzz.h — the one entry point every fuzz target defines (libFuzzer's contract). Built two
 * ways (tests/fuzz/meson.build): with clang's -fsanitize=fuzzer for `make fuzz`, and with
 * replay.c as a plain program that make check runs over the saved corpus and every input that
 * once crashed (tests/fuzz/regress/), so a fixed crash stays fixed. */
#ifndef TMPI_FUZZ_H
#define TMPI_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
