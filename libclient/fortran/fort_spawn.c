/* fort_spawn.c — the Fortran entry points of MPI_Comm_spawn and MPI_Comm_spawn_multiple, whose
 * CHARACTER arrays become C argv arrays (fortran-gen's SPECIAL table names them).
 *
 * A Fortran CHARACTER array is one block of fixed-length strings (the hidden length is each
 * element's), so a C argv is built from it: argv(*) ends at its first blank string (MPI 4.1
 * 11.8.2, Example 11.2), array_of_commands(*) has count strings and no terminator, and
 * array_of_argv(count, *) holds command i's arguments in row i (elements i, i + count, ...:
 * column-major order), each row ended by a blank string.  MPI_ARGV_NULL, MPI_ARGVS_NULL and
 * MPI_ERRCODES_IGNORE are COMMON blocks whose addresses mean C's NULL.
 *
 * These arguments are significant only at root, where they are converted: at another rank
 * the program may pass anything, and scanning it for a blank string could read past it.
 * When the root runs out of memory converting them it still enters the collective call, with
 * no command, so that every rank returns an error instead of the others waiting for it. */
#include <stdlib.h>
#include <string.h>

#include "fort_util.h"

/* The body is variadic: its declarations have commas. */
#define TF_DEF(ret, name, params, ...)                                                             \
    TF_API ret p##name params;                                                                     \
    TF_API ret name params TF_WEAK_OF(p##name);                                                    \
    TF_API ret p##name params __VA_ARGS__

static int blank(const char *f, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (f[i] != ' ') return 0;
    return 1;
}

/* A command name: leading and trailing blanks dropped (MPI 4.1 11.8.2). */
static char *command_in(const char *f, size_t len)
{
    while (len > 0 && *f == ' ')
        f++, len--;
    return tf_str_in(f, len);
}

static void argv_free(char **v)
{
    if (!v) return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

/* The strings at f, f + step, ... (each len bytes, trailing blanks dropped) as a NULL-ended
 * argv: n of them, or with n < 0 up to the first blank one.  NULL: no memory. */
static char **argv_in(const char *f, size_t len, size_t step, int n)
{
    size_t cnt = 0;
    if (n >= 0)
        cnt = (size_t)n;
    else
        while (!blank(f + cnt * step, len))
            cnt++;
    char **v = calloc(cnt + 1, sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < cnt; i++) {
        v[i] = n >= 0 ? command_in(f + i * step, len) : tf_str_in(f + i * step, len);
        if (!v[i]) {
            argv_free(v);
            return NULL;
        }
    }
    return v;
}

static int is_root(const MPI_Fint *comm, const MPI_Fint *root)
{
    int r = -1;
    return PMPI_Comm_rank(*comm, &r) == MPI_SUCCESS && r == *root;
}

static int *errcodes_c(MPI_Fint *e)
{
    return e == tmpi_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : e;
}

TF_DEF(void, mpi_comm_spawn_,
       (const char *command, const char *argv, const MPI_Fint *maxprocs, const MPI_Fint *info,
        const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *intercomm,
        MPI_Fint *array_of_errcodes, MPI_Fint *ierror, size_t command_len, size_t argv_len),
       {
           char *cmd = NULL, **av = MPI_ARGV_NULL;
           int nomem = 0;
           if (is_root(comm, root)) {
               cmd = command_in(command, command_len);
               if (argv != tmpi_argv_null_) av = argv_in(argv, argv_len, argv_len, -1);
               if (!cmd || (argv != tmpi_argv_null_ && !av)) {
                   nomem = 1;
                   argv_free(av);
                   free(cmd);
                   cmd = NULL;
                   av = MPI_ARGV_NULL;
               }
           }
           MPI_Comm ic = MPI_COMM_NULL;
           int rc = PMPI_Comm_spawn(cmd, av, *maxprocs, *info, *root, *comm, &ic,
                                    errcodes_c(array_of_errcodes));
           *intercomm = ic;
           argv_free(av);
           free(cmd);
           *ierror = nomem ? MPI_ERR_NO_MEM : rc;
       })

/* The C arrays of spawn_multiple at root: count commands and, unless MPI_ARGVS_NULL, count
 * argv arrays (row i of the Fortran array). */
struct tf_spawn_args {
    char **cmds;
    char ***argvs;
    int n;
};

static void spawn_args_free(struct tf_spawn_args *a)
{
    if (a->argvs)
        for (int i = 0; i < a->n; i++)
            argv_free(a->argvs[i]);
    free(a->argvs);
    argv_free(a->cmds);
}

static int spawn_args_in(struct tf_spawn_args *a, int count, const char *cmds, size_t cmds_len,
                         const char *argvs, size_t argvs_len)
{
    a->n = count;
    a->cmds = argv_in(cmds, cmds_len, cmds_len, count);
    if (!a->cmds) return MPI_ERR_NO_MEM;
    if (argvs == tmpi_argvs_null_) return MPI_SUCCESS;
    a->argvs = calloc((size_t)count, sizeof *a->argvs);
    if (!a->argvs) return MPI_ERR_NO_MEM;
    for (int i = 0; i < count; i++) {
        a->argvs[i] =
            argv_in(argvs + (size_t)i * argvs_len, argvs_len, (size_t)count * argvs_len, -1);
        if (!a->argvs[i]) return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

TF_DEF(void, mpi_comm_spawn_multiple_,
       (const MPI_Fint *count, const char *array_of_commands, const char *array_of_argv,
        const MPI_Fint *array_of_maxprocs, const MPI_Fint *array_of_info, const MPI_Fint *root,
        const MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *array_of_errcodes, MPI_Fint *ierror,
        size_t commands_len, size_t argv_len),
       {
           struct tf_spawn_args a = {0};
           int nomem = 0;
           /* A count below 1 reaches C unconverted, which says what is wrong with it. */
           if (*count > 0 && is_root(comm, root) &&
               spawn_args_in(&a, *count, array_of_commands, commands_len, array_of_argv,
                             argv_len) != MPI_SUCCESS) {
               nomem = 1;
               spawn_args_free(&a);
               a = (struct tf_spawn_args){0};
           }
           MPI_Comm ic = MPI_COMM_NULL;
           int rc =
               PMPI_Comm_spawn_multiple(*count, a.cmds, a.argvs, array_of_maxprocs, array_of_info,
                                        *root, *comm, &ic, errcodes_c(array_of_errcodes));
           *intercomm = ic;
           spawn_args_free(&a);
           *ierror = nomem ? MPI_ERR_NO_MEM : rc;
       })
