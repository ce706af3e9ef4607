/* coll_base.c — the counter waits and the error class every collective folder uses
 * (coll_base.h). */
#include "coll_base.h"

#include <errno.h>

#include "job.h"
#include "wait.h"

struct counter_wait {
    _Atomic uint64_t *ctr;
    uint64_t target;
};

static int counter_cond(void *arg)
{
    struct counter_wait *w = arg;
    return atomic_load_explicit(w->ctr, memory_order_seq_cst) >= w->target;
}

void tm_coll_wait_ctr(struct tm_rank *me, _Atomic uint64_t *ctr, uint64_t target)
{
    struct counter_wait w = {ctr, target};
    tm_wait(me, counter_cond, &w);
}

int tm_coll_errclass(int r)
{
    switch (r) {
    case 0:
        return MPI_SUCCESS;
    case -EMSGSIZE:
        return MPI_ERR_TRUNCATE;
    case -ENOMEM:
        return MPI_ERR_NO_MEM;
    case -EINVAL:
        return MPI_ERR_ARG;
    case -ENOSYS:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    default:
        return MPI_ERR_INTERN;
    }
}
