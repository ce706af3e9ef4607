/* launch_place.c — where the ranks of this launch go.
 *
 * The hosts come from exactly one source, in this order of precedence: --hostfile, -H, a
 * Slurm allocation (only looked at when neither option is given), else none (the local
 * agent).  The parsers collect every problem; we print them all, so a user fixes a host file in
 * one round.  Host-file problems are printed bare, "FILE:LINE: what", the form editors jump
 * to; the others get the usual "tmpi-launch: " prefix.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile.h"
#include "launch.h"
#include "slurm.h"

static void print_errors(const struct errlist *e, const char *prefix)
{
    for (size_t i = 0; i < e->n; i++)
        fprintf(stderr, "%s%s\n", prefix, e->msg[i]);
    if (e->more)
        fprintf(stderr, "%s... and %zu more error%s\n", prefix, e->more, e->more == 1 ? "" : "s");
}

int launch_place(const struct launch_opts *o, struct placement *ret, bool *ret_slurm)
{
    *ret_slurm = false;
    struct hostlist hl = {0};
    struct errlist err = ERRLIST_INIT;
    int r = 0, status = 0;
    const char *nodelist = getenv("SLURM_JOB_NODELIST");

    if (o->hostfile) {
        r = hostfile_parse(o->hostfile, &hl, &err);
        if (r == -EINVAL) {
            print_errors(&err, "");
            size_t n = errlist_count(&err);
            fprintf(stderr, "tmpi-launch: %s: %zu error%s in the host file\n", o->hostfile, n,
                    n == 1 ? "" : "s");
            status = LAUNCH_EXIT_USAGE;
            goto out;
        }
    } else if (o->hosts) {
        r = hostlist_parse_option(&hl, o->hosts, &err);
    } else if (nodelist && *nodelist) {
        r = slurm_hosts(nodelist, getenv("SLURM_TASKS_PER_NODE"), &hl, &err);
        *ret_slurm = true;
    }
    if (r == 0 && hl.n == 0 && !o->ppn && !o->display_map) {
        /* Nothing to place: the local agent runs every rank, as before hosts existed.  No
         * per-rank arrays, so -n is bounded only by the agent's max_ranks. */
        *ret = (struct placement){.nprocs = o->nprocs};
    } else if (r == 0) {
        struct placement_request req = {.nprocs = o->nprocs,
                                        .ppn = o->ppn,
                                        .map_by = o->map_by,
                                        .oversubscribe = o->oversubscribe,
                                        /* a host file's other hosts are MPI_Comm_spawn's room
                                         * (an allocation's agents start only where ranks go) */
                                        .keep_spare = !*ret_slurm};
        r = placement_compute(&hl, &req, ret, &err);
    }
    if (r == -EINVAL) {
        print_errors(&err, "tmpi-launch: ");
        status = LAUNCH_EXIT_USAGE;
    } else if (r < 0) {
        fprintf(stderr, "tmpi-launch: cannot place the ranks: %s\n", strerror(-r));
        status = LAUNCH_EXIT_FAILURE;
    }
out:
    hostlist_free(&hl);
    errlist_free(&err);
    return status;
}
