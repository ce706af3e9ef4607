/* main_export.c — part of libtmpi: makes every executable linked with libtmpi export main.
 *
 * The agent finds a program's main by name in its dynamic symbol table.  A shared object
 * (tmpicc's link) exports it anyway; a position-independent executable does not, unless a
 * shared library in its link refers to it: the linker then exports it so that the reference
 * can be resolved at run time.  This reference is that: it makes a PIE built by any build
 * system that links libtmpi (CMake's MPI_C_LIBRARIES alone, pkg-config, a bare -ltmpi) export
 * main without a flag of ours.  Weak, so libtmpi loads where there is no main; never called.
 */
extern int main(int argc, char **argv) __attribute__((weak));

/* Read by nobody: its relocation is the reference. */
__attribute__((used)) int (*const tm_main_export)(int, char **) = main;
