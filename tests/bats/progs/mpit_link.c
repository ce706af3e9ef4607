/* mpit_link.c — the MPI_T performance variables of the job's data-link traffic (category
 * tmpi.link, named after the metrics endpoint's tmpi_messages_total / tmpi_bytes_total with
 * their channel and direction): 8 continuous counters in the category (start and stop say
 * MPI_T_ERR_PVAR_NO_STARTSTOP); through a pvar session, a handle of tmpi_bytes_total.p2p.sent
 * counts at least the bytes rank 0 sends to the last rank when that rank is on another node,
 * and nothing when every rank shares the node; readreset gives the count and starts again
 * from 0, so the next read counts only the later messages.  The pool variables (category
 * tmpi.pool) read the agent's buffer pool: a size above 0, a level not above it; rank 0
 * prints "pool capacity N" for the caller to compare with the agent's.  Prints OK at rank 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define MSGS 20
#define MSG_BYTES 65536

static int rank, fails;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: line %d: ", rank, __LINE__);                                 \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    int prov, size;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &prov);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    int one_node = nsize == size;

    int cat = -1, np = 0;
    CHECK(MPI_T_category_get_index("tmpi.link", &cat) == MPI_SUCCESS, "no category tmpi.link");
    char cname[64], cdesc[256];
    int cl = sizeof cname, dl = sizeof cdesc, ncv = 0, ncat = 0;
    MPI_T_category_get_info(cat, cname, &cl, cdesc, &dl, &ncv, &np, &ncat);
    CHECK(np == 8, "tmpi.link has %d pvars", np);
    int idx[8];
    MPI_T_category_get_pvars(cat, 8, idx);
    static const char *const want[8] = {
        "tmpi_messages_total.p2p.sent",  "tmpi_messages_total.p2p.received",
        "tmpi_messages_total.coll.sent", "tmpi_messages_total.coll.received",
        "tmpi_bytes_total.p2p.sent",     "tmpi_bytes_total.p2p.received",
        "tmpi_bytes_total.coll.sent",    "tmpi_bytes_total.coll.received"};
    for (int i = 0; i < 8 && i < np; i++) {
        char name[64], desc[256];
        int nl = sizeof name, dsl = sizeof desc, verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_T_pvar_get_info(idx[i], name, &nl, &verb, &cls, &dt, &en, desc, &dsl, &bind, &ro, &cont,
                            &atomic);
        CHECK(!strcmp(name, want[i]) && cls == MPI_T_PVAR_CLASS_COUNTER && cont,
              "pvar %d is %s class %d continuous %d", i, name, cls, cont);
    }

    int pv = -1;
    CHECK(MPI_T_pvar_get_index("tmpi_bytes_total.p2p.sent", MPI_T_PVAR_CLASS_COUNTER, &pv) == 0,
          "no tmpi_bytes_total.p2p.sent");
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int cnt = 0;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, pv, NULL, &h, &cnt);
    CHECK(cnt == 1, "count %d", cnt);
    CHECK(MPI_T_pvar_start(s, h) == MPI_T_ERR_PVAR_NO_STARTSTOP, "start of a continuous pvar");
    char *buf = calloc(1, MSG_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < MSGS; i++)
            MPI_Send(buf, MSG_BYTES, MPI_BYTE, size - 1, 1, MPI_COMM_WORLD);
    if (rank == size - 1)
        for (int i = 0; i < MSGS; i++)
            MPI_Recv(buf, MSG_BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long v = 0, v2 = 0;
    MPI_T_pvar_readreset(s, h, &v);
    if (rank == 0 && one_node) CHECK(v == 0, "one node, yet %llu bytes sent on links", v);
    if (rank == 0 && !one_node)
        CHECK(v >= (unsigned long long)MSGS * MSG_BYTES, "%llu bytes sent, want >= %d", v,
              MSGS * MSG_BYTES);
    MPI_T_pvar_read(s, h, &v2);
    CHECK(v2 < (unsigned long long)MSG_BYTES, "after readreset %llu", v2);
    /* The counters are the node's links', shared by its ranks: rank 0's next sends must not
     * start before every rank of its node has read the count just after its reset. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < MSGS; i++)
            MPI_Send(buf, MSG_BYTES, MPI_BYTE, size - 1, 2, MPI_COMM_WORLD);
    if (rank == size - 1)
        for (int i = 0; i < MSGS; i++)
            MPI_Recv(buf, MSG_BYTES, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_T_pvar_read(s, h, &v2);
    if (rank == 0 && one_node) CHECK(v2 == 0, "one node, yet %llu bytes after readreset", v2);
    if (rank == 0 && !one_node)
        CHECK(v2 >= (unsigned long long)MSGS * MSG_BYTES && v2 < v + (unsigned long long)MSG_BYTES,
              "after readreset %llu bytes, want the second %d messages' only (first %llu)", v2,
              MSGS, v);
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    free(buf);

    int pc = -1, pu = -1;
    CHECK(MPI_T_pvar_get_index("tmpi_pool_capacity_bytes", MPI_T_PVAR_CLASS_SIZE, &pc) == 0 &&
              MPI_T_pvar_get_index("tmpi_pool_used_bytes", MPI_T_PVAR_CLASS_LEVEL, &pu) == 0,
          "no pool pvars");
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle hc, hu;
    MPI_T_pvar_handle_alloc(s, pc, NULL, &hc, &cnt);
    MPI_T_pvar_handle_alloc(s, pu, NULL, &hu, &cnt);
    unsigned long long cap = 0, used = 0;
    MPI_T_pvar_read(s, hc, &cap);
    MPI_T_pvar_read(s, hu, &used);
    CHECK(cap > 0 && used <= cap, "pool used %llu of %llu", used, cap);
    CHECK(MPI_T_pvar_reset(s, hu) == MPI_T_ERR_PVAR_NO_WRITE, "reset of a level");
    if (rank == 0) printf("pool capacity %llu\n", cap);
    MPI_T_pvar_handle_free(s, &hc);
    MPI_T_pvar_handle_free(s, &hu);
    MPI_T_pvar_session_free(&s);

    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !all) printf("OK\n");
    MPI_Comm_free(&node);
    MPI_Finalize();
    MPI_T_finalize();
    return all != 0;
}
