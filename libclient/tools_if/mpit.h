/* mpit.h — the tools information interface (MPI_T, MPI 4.0 §15.3): what libtmpi exposes, and
 * the per-rank state of the interface.
 *
 * Variables are one fixed table (mpit_vars.c), so an index names the same variable in every
 * rank and every run of one build; the names are those of tmpid.conf ("mpi.eager_limit" is
 * [mpi] eager_limit) and of the job's TMPI_* variables ("TMPI_COLL_BCAST"), so `tmpictl`,
 * tmpid.conf(5) and a tool agree (docs/USER.md "MPI_T variables").
 *
 * Control variables: the agent's settings (scope MPI_T_SCOPE_CONSTANT or _READONLY: the
 * agent reads them at its start and a job cannot change them; the ones libtmpi uses with their
 * types, every other tmpid.conf key as text through svc config_item) and the job's own settings as
 * libtmpi applies them (READONLY: read once per job).  Performance variables: the collective
 * counters of the job on this node (MPIX_Coll_counters) and counters of the calling rank.
 *
 * State: the rank's struct tm_mpit (objs.h `mpit`, made by the first MPI_T_init_thread, which
 * may come before MPI_Init), under its own mutex: MPI_T calls are thread-safe at every thread
 * level (the interface provides MPI_THREAD_MULTIPLE). */
#ifndef TMPI_LIBCLIENT_MPIT_H
#define TMPI_LIBCLIENT_MPIT_H

#include <stdint.h>

#include "mpi.h"

struct tm_rank;

/* What a variable's reader writes into buf (count elements of datatype). */
enum tm_t_type { TM_T_INT, TM_T_UNSIGNED, TM_T_ULL, TM_T_STRING };

struct tm_t_var {
    const char *name, *desc;
    enum tm_t_type type;
    int verbosity;
    int scope;     /* cvars: MPI_T_SCOPE_* */
    int var_class; /* pvars: MPI_T_PVAR_CLASS_* */
    int category;  /* index into tm_t_cats */
    int enumtype;  /* -1, or index into tm_t_enums */
    /* Reads the value for me: integers into *v, strings as a pointer into *s (NULL: unset). */
    /* buf: TM_T_STR_MAX bytes the reader may put a string in */
    void (*read)(struct tm_rank *me, int arg, uint64_t *v, const char **s, char *buf);
    int arg;
};

struct tm_t_cat {
    const char *name, *desc;
};

struct tm_t_enum {
    const char *name;
    int n;
    const char *const *items; /* item i has value i */
};

/* The tables (mpit_vars.c); sizes from the functions, fixed for the build. */
#define TM_T_NAME_MAX 64
#define TM_T_STR_MAX 1024 /* a string variable's longest value (longer ones are cut) */
/* Variable i into *out (its name may be made in name); 0, or -1 when i is out of range. */
int tm_t_cvar(int i, struct tm_t_var *out, char name[TM_T_NAME_MAX]);
int tm_t_pvar(int i, struct tm_t_var *out, char name[TM_T_NAME_MAX]); /* 0, -1 out of range */
int tm_t_ncvars(void);
int tm_t_npvars(void);
extern const struct tm_t_cat tm_t_cats[];
extern const int tm_t_ncats;
extern const struct tm_t_enum tm_t_enums[];
extern const int tm_t_nenums;

/* The index of the entry called name in a table (mpit_find.c), or -1.  name_at(i, arg, buf)
 * gives entry i's name (it may make it in buf), tm_t_skip for an entry the search leaves out,
 * NULL past the last entry. */
typedef const char *(*tm_t_name_at_fn)(int i, void *arg, char buf[TM_T_NAME_MAX]);
extern const char tm_t_skip[];
int tm_t_find(const char *name, tm_t_name_at_fn name_at, void *arg);
/* A category's index by name (the category table's name_at), or -1. */
int tm_t_cat_find(const char *name);

void tm_mpit_free(void *mpit); /* the rank's state, with its objs */

/* For the other files of the interface: the calling rank's state, locked (NULL: MPI_T is not
 * initialized), its unlock, and its event registrations (mpit_events.c; under the lock). */
struct tm_mpit;
struct tm_t_events;
struct tm_mpit *tm_mpit_enter(void);
void tm_mpit_leave(struct tm_mpit *t);
struct tm_t_events **tm_mpit_events(struct tm_mpit *t);
/* MPI's string out-arguments (mpit.c): the length needed, or up to *len - 1 characters. */
void tm_t_put_str(const char *s, char *buf, int *len);
/* Frees the registrations (the last MPI_T_finalize, the rank's end); NULL: nothing. */
void tm_t_events_free(struct tm_t_events *ev);

#endif
