/* module_marker.h — how a TMPI program is recognised.  tmpicc links libtmpi_module.a, which puts
 * TMPI_MODULE_MAGIC into an ELF section named TMPI_MODULE_SECTION and exports it as the symbol
 * tmpi_module_abi.  A program linked by another build system (CMake's FindMPI, Meson,
 * pkg-config tmpi, plain -ltmpi) may lack the marker but names libtmpi among its needed
 * libraries (DT_NEEDED).  tmpi-launch reads the file before submitting; tmpid checks again
 * after loading.  One table of other MPIs' libraries serves both: a program that needs one of
 * them would call into that MPI instead of ours. */
#ifndef TMPI_PROTO_MODULE_MARKER_H
#define TMPI_PROTO_MODULE_MARKER_H

#include <stdbool.h>
#include <string.h>

#define TMPI_MODULE_SECTION ".tmpi_module"
#define TMPI_MODULE_MAGIC "TMPI-MODULE 1"
#define TMPI_MODULE_SYMBOL "tmpi_module_abi"

/* libtmpi's file name without its version: the soname is this plus ".N". */
#define TMPI_LIB_NAME "libtmpi.so"

/* Name prefixes of the system runtime: a program's libraries of these names stay shared by
 * the ranks of a node wherever they are installed (the agent's image_private.h; shown by
 * tmpi-launch --display-map).  Every library under the system's library directories stays
 * shared too: TMPI_SYSTEM_LIB_DIRS, except those of TMPI_PRIVATE_LIBS_DEFAULT. */
#define TMPI_SHARED_LIBS_DEFAULT                                                                   \
    "libc.so libm.so libpthread.so libdl.so librt.so libresolv.so libutil.so libcrypt.so "         \
    "libanl.so libmvec.so libnsl.so ld-linux libgcc_s.so libstdc++.so libgomp.so libatomic.so "    \
    "libquadmath.so libtmpi.so libasan.so libtsan.so libubsan.so liblsan.so"
#define TMPI_SYSTEM_LIB_DIRS "/lib/ /lib64/ /usr/lib/ /usr/lib64/"
/* Name prefixes of the system runtime copied per rank wherever installed, like the program's
 * own libraries, unless the caller's list keeps them shared: libgfortran's process state (its
 * I/O units, unit 6's buffer, the argv main passes to _gfortran_set_args, RANDOM_SEED's state,
 * the GFORTRAN_* settings read at start) is a process's, so each rank has its own. */
#define TMPI_PRIVATE_LIBS_DEFAULT "libgfortran.so"

/* Is a needed library's name (a DT_NEEDED string) libtmpi, of any version? */
static inline bool tmpi_lib_is_tmpi(const char *needed)
{
    size_t n = sizeof TMPI_LIB_NAME - 1;
    return strncmp(needed, TMPI_LIB_NAME, n) == 0 && (needed[n] == '\0' || needed[n] == '.');
}

/* Is it a library of another MPI?  Prefixes of the sonames Open MPI (libmpi.so.40,
 * libmpi_mpifh, libmpi_usempif08, libmpi_cxx, libopen-pal, libopen-rte), MPICH and its
 * derivatives (libmpich.so.12, libmpi.so.12, libmpicxx, libmpifort, libmpichcxx, libmpichfort,
 * libfmpich, libpmpi) and Intel MPI (libmpi.so.12, libmpifort) install.  Matched at the start
 * of the name and up to a '.' or '_' that ends the library's base name, so libmpiP (a profiler)
 * or libmpi4py do not match. */
static inline bool tmpi_lib_is_other_mpi(const char *needed)
{
    static const char *const bases[] = {
        "libmpi",       "libmpich",  "libmpicxx", "libmpifort",  "libmpichcxx", "libmpichf90",
        "libmpichfort", "libfmpich", "libpmpi",   "libopen-pal", "libopen-rte",
    };
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
        size_t n = strlen(bases[i]);
        if (strncmp(needed, bases[i], n) == 0 && (needed[n] == '.' || needed[n] == '_'))
            return true;
    }
    return false;
}

#endif
