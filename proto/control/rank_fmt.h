/* rank_fmt.h — one RankState's MPI call as people read it, shared by the agent's deadlock
 * report and tmpictl ranks: "MPI_Recv(source 1, tag 7, MPI_COMM_WORLD)". */
#ifndef TMPI_PROTO_RANK_FMT_H
#define TMPI_PROTO_RANK_FMT_H

#include <stddef.h>

#include "control.pb-c.h"

/* RankState.peer and .tag values that are not a rank or tag (control.proto). */
#define RANK_FMT_PEER_ANY (-1)
#define RANK_FMT_PEER_NONE (-2)
#define RANK_FMT_PEER_ALL (-3)
#define RANK_FMT_TAG_ANY (-1)
#define RANK_FMT_TAG_NONE (-2)

void rank_fmt_call(const Tmpi__RankState *s, char *out, size_t len);

#endif
