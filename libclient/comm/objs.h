/* objs.h — a rank's tables of groups, info objects, error handlers, keyvals and the error
 * classes and codes the program added.  MPI handles are local to a process (here a rank) but
 * any thread of the rank may use them under MPI_THREAD_MULTIPLE, so every table is under the
 * rank's objs lock.  Made with the rank's communicator table (commtab.c), freed with it. */
#ifndef TMPI_LIBCLIENT_OBJS_H
#define TMPI_LIBCLIENT_OBJS_H

#include <pthread.h>

#include "errh.h"
#include "mpi.h"
#include "objtab.h"

struct tm_objs {
    pthread_mutex_t lock;       /* every field below */
    struct tm_objtab *groups;   /* group.h */
    struct tm_objtab *infos;    /* info.h */
    struct tm_objtab *errhs;    /* errh.h (errh_obj.c) */
    struct tm_objtab *keyvals;  /* attr.h */
    struct tm_objtab *sessions; /* session/session.h (adds and deletes under lock) */
    /* The tool interface's state (tools_if/mpit.h), made by the first MPI_T_init_thread and
     * freed with the rest through the callback it registers (a layer above this one). */
    void *mpit;
    void (*mpit_free)(void *mpit);
    /* MPI_Add_error_class / _code / _string (errh_obj.c): codes MPI_ERR_LASTCODE .. lastcode;
     * class_of[code - MPI_ERR_LASTCODE], str[...] (NULL: none set). */
    int lastcode;
    int *class_of;
    char **str;
    int ncap;
    int predef[8];          /* values of the predefined attributes, by key (attr_api.c) */
    MPI_Errhandler file_eh; /* MPI_FILE_NULL's handler (errh_obj.c), MPI_ERRORS_RETURN first */
    struct tm_info *env;    /* MPI_INFO_ENV (info.c), made on first use */
    /* MPI-IO (io/io.h): open files, registered data representations, and the function that
     * frees both (set by io/ when it makes them, so this layer needs no io header) */
    struct tm_objtab *files;
    struct tm_datarep_node *datareps;
    void (*io_free)(struct tm_objs *o);
    /* MPI_Init's argc and argv (the rank's own, alive while its main runs), read when
     * MPI_INFO_ENV is first used: a copy at MPI_Init cost every rank its arguments' size */
    int env_argc;
    char **env_argv;
    /* Attribute lists of the predefined datatypes, by handle (type_attr.c, made on first
     * use; ntype_attrs entries): MPI 3.1 §6.7.4 allows attributes on any datatype, and the
     * predefined ones are shared by every rank, so each rank keeps its own lists here. */
    struct tm_attr **type_attrs;
    int ntype_attrs;
    /* The reasons of the last TM_ERR_DETAILS errors of predefined classes that were returned
     * to the program (errh.c), so that MPI_Error_string of the class gives the specific
     * text, as MPICH's and Open MPI's users expect; next is the slot to write. */
    struct tm_err_detail {
        int code;
        char text[TM_ERR_DETAIL_LEN];
    } details[TM_ERR_DETAILS];
    int next_detail;
};

struct tm_rank;
int tm_objs_init(struct tm_rank *me);
void tm_objs_free(struct tm_rank *me);

#endif
