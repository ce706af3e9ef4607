/* attr_predef.c — the predefined attribute callbacks (MPI_COMM_DUP_FN and its kin).
 *
 * MPI defines them as functions a program may pass to MPI_*_create_keyval or call itself:
 * NULL_COPY does not copy the attribute to the new object, DUP copies its value (the pointer
 * itself, not what it points to), NULL_DELETE does nothing.  They have no PMPI twin: they are
 * callbacks, not entry points. */
#include "lib.h"

#define TM_COPY_FNS(PREFIX, objtype)                                                               \
    TM_API int PREFIX##NULL_COPY_FN(objtype old, int keyval, void *extra_state, void *in,          \
                                    void *out, int *flag)                                          \
    {                                                                                              \
        (void)old, (void)keyval, (void)extra_state, (void)in, (void)out;                           \
        *flag = 0;                                                                                 \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TM_API int PREFIX##DUP_FN(objtype old, int keyval, void *extra_state, void *in, void *out,     \
                              int *flag)                                                           \
    {                                                                                              \
        (void)old, (void)keyval, (void)extra_state;                                                \
        *(void **)out = in;                                                                        \
        *flag = 1;                                                                                 \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TM_API int PREFIX##NULL_DELETE_FN(objtype obj, int keyval, void *value, void *extra_state)     \
    {                                                                                              \
        (void)obj, (void)keyval, (void)value, (void)extra_state;                                   \
        return MPI_SUCCESS;                                                                        \
    }

TM_COPY_FNS(MPI_COMM_, MPI_Comm)
TM_COPY_FNS(MPI_TYPE_, MPI_Datatype)
TM_COPY_FNS(MPI_WIN_, MPI_Win)
TM_COPY_FNS(MPI_, MPI_Comm) /* the deprecated MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN */
