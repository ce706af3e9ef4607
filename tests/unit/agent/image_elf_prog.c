/* A program for test_image_elf, built both as a PIE executable (its optind and environ are
 * copy relocations) and as a shared object (reached through GOT slots).  main(1, NULL) counts
 * up its own optind and a global; main(2, v) says whether environ is v. */
#include <unistd.h>

extern char **environ;

__attribute__((visibility("default"))) const char tmpi_module_abi[] = "TMPI-MODULE 1";

static int counter;

int main(int argc, char **argv)
{
    if (argc == 2) return environ == argv;
    counter++;
    optind++;
    return optind * 10 + counter;
}
