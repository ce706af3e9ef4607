/* rank_fmt.c — a waiting rank's call as text (rank_fmt.h). */
#include "rank_fmt.h"

#include <stdio.h>
#include <string.h>

/* A send names its peer as the destination; everything else (receives, probes, waits,
 * Sendrecv) as the source. */
static int names_dest(const char *call)
{
    static const char *const sends[] = {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"};
    for (size_t i = 0; i < sizeof sends / sizeof sends[0]; i++)
        if (strcmp(call, sends[i]) == 0) return 1;
    return 0;
}

void rank_fmt_call(const Tmpi__RankState *s, char *out, size_t len)
{
    const char *call = s->call && *s->call ? s->call : "MPI";
    const char *comm = s->comm && *s->comm ? s->comm : NULL;
    char args[200] = "";
    size_t n = 0;
    if (s->peer != RANK_FMT_PEER_NONE && s->peer != RANK_FMT_PEER_ALL) {
        if (s->peer == RANK_FMT_PEER_ANY)
            n += (size_t)snprintf(args + n, sizeof args - n, "MPI_ANY_SOURCE");
        else
            n += (size_t)snprintf(args + n, sizeof args - n, "%s %d",
                                  s->peer_is_dest || names_dest(call) ? "dest" : "source", s->peer);
    }
    if (s->tag != RANK_FMT_TAG_NONE && n < sizeof args) {
        if (s->tag == RANK_FMT_TAG_ANY)
            n += (size_t)snprintf(args + n, sizeof args - n, "%sMPI_ANY_TAG", n ? ", " : "");
        else
            n += (size_t)snprintf(args + n, sizeof args - n, "%stag %d", n ? ", " : "", s->tag);
    }
    if (comm && n < sizeof args)
        n += (size_t)snprintf(args + n, sizeof args - n, "%s%s", n ? ", " : "", comm);
    snprintf(out, len, "%s(%s)", call, args);
}
