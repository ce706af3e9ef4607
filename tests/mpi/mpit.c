/* mpit.c — the tools interface: MPI_T_init_thread before MPI_Init (nested), every control
 * variable described and read (agent settings, the job's TMPI_COLL_* from the rank's
 * environment, the thread level through its enumeration), writes refused, a collective
 * counter counting Allreduce calls on the node of rank 0 through a handle (read, readreset,
 * write, reset), a level refusing writes, categories, and the error codes of bad indices,
 * names, handles and sessions.  Events (MPI 4.0 §15.3.8): both event types described, their
 * callbacks called with the right elements when a receive takes an unexpected message and
 * when a buffered send finds no room, the dropped handler of a registration whose only
 * callback may not run there, free callbacks, sources, timestamps and the error codes. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define EXPECT(call, code)                                                                         \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (code), "%s: expected %s, got %d", #call, #code, e_);                          \
    } while (0)

static int cvar_index(const char *name)
{
    int i = -1;
    CHECK_MPI(MPI_T_cvar_get_index(name, &i));
    return i;
}

static void cvars_described(void)
{
    /* MPI 4.0 §15.3.2's binding of a variable to a session is a constant of its own */
    int binds[] = {MPI_T_BIND_NO_OBJECT,      MPI_T_BIND_MPI_COMM,    MPI_T_BIND_MPI_DATATYPE,
                   MPI_T_BIND_MPI_ERRHANDLER, MPI_T_BIND_MPI_FILE,    MPI_T_BIND_MPI_GROUP,
                   MPI_T_BIND_MPI_OP,         MPI_T_BIND_MPI_REQUEST, MPI_T_BIND_MPI_WIN,
                   MPI_T_BIND_MPI_MESSAGE,    MPI_T_BIND_MPI_INFO};
    for (size_t b = 0; b < sizeof binds / sizeof *binds; b++)
        CHECK(binds[b] != MPI_T_BIND_MPI_SESSION, "MPI_T_BIND_MPI_SESSION equals binding %zu", b);
    int n = 0;
    CHECK_MPI(MPI_T_cvar_get_num(&n));
    CHECK(n >= 50, "%d control variables (the fixed ones and tmpid.conf's)", n);
    for (int i = 0; i < n; i++) {
        char name[128], desc[512];
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        CHECK_MPI(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope));
        CHECK(nl == (int)strlen(name) + 1 && nl > 1, "cvar %d: name_len %d for \"%s\"", i, nl,
              name);
        CHECK(dt == MPI_INT || dt == MPI_UNSIGNED || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_CHAR,
              "cvar %s: datatype", name);
        CHECK(scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY, "cvar %s: scope %d",
              name, scope);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "cvar %s: bind %d", name, bind);
        int back = -1;
        CHECK_MPI(MPI_T_cvar_get_index(name, &back));
        CHECK(back == i, "cvar %s: index %d, get_index %d", name, i, back);
        /* the length alone */
        int need = 0;
        CHECK_MPI(MPI_T_cvar_get_info(i, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(need == nl, "cvar %s: needs %d, had %d", name, need, nl);
        /* every one can be read */
        MPI_T_cvar_handle h;
        int count;
        CHECK_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        char buf[4096];
        CHECK(count >= 1 && count < (int)sizeof buf, "cvar %s: count %d", name, count);
        CHECK_MPI(MPI_T_cvar_read(h, buf));
        if (dt == MPI_CHAR) CHECK((int)strlen(buf) == count - 1, "cvar %s: \"%s\"", name, buf);
        int v = 1;
        EXPECT(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
        CHECK_MPI(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset");
    }
    EXPECT(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    int i;
    EXPECT(MPI_T_cvar_get_index("mpi.no_such_setting", &i), MPI_T_ERR_INVALID_NAME);
}

static unsigned read_unsigned(const char *name)
{
    MPI_T_cvar_handle h;
    int count;
    unsigned v = 0;
    CHECK_MPI(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count));
    CHECK_MPI(MPI_T_cvar_read(h, &v));
    MPI_T_cvar_handle_free(&h);
    return v;
}

static void settings(void)
{
    CHECK(read_unsigned("mpi.intra_eager_limit") > 0, "mpi.intra_eager_limit 0");
    CHECK(read_unsigned("agent.ncpus") > 0, "agent.ncpus 0");
    /* the job's TMPI_COLL_BCAST as the rank's environment has it */
    setenv("TMPI_COLL_BCAST", "binomial", 1);
    MPI_T_cvar_handle h;
    int count;
    CHECK_MPI(MPI_T_cvar_handle_alloc(cvar_index("TMPI_COLL_BCAST"), NULL, &h, &count));
    char s[64] = "x";
    CHECK(count == 9, "TMPI_COLL_BCAST count %d", count);
    CHECK_MPI(MPI_T_cvar_read(h, s));
    CHECK(!strcmp(s, "binomial"), "TMPI_COLL_BCAST \"%s\"", s);
    MPI_T_cvar_handle_free(&h);
    unsetenv("TMPI_COLL_BCAST");
    /* every other tmpid.conf key as text: numbers, words, and no cluster key file */
    const char *keys[] = {"agent.max_jobs",    "pool.size",       "mpi.rank_switching",
                          "mesh.heartbeat_ms", "metrics.timeout", "agent.name"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        CHECK_MPI(MPI_T_cvar_handle_alloc(cvar_index(keys[k]), NULL, &h, &count));
        char v[1024];
        CHECK(count > 1 && count <= (int)sizeof v, "%s: count %d", keys[k], count);
        CHECK_MPI(MPI_T_cvar_read(h, v));
        CHECK((int)strlen(v) == count - 1, "%s: \"%s\", count %d", keys[k], v, count);
        if (k < 2) CHECK(atol(v) > 0, "%s: \"%s\"", keys[k], v);
        MPI_T_cvar_handle_free(&h);
    }
    int i;
    EXPECT(MPI_T_cvar_get_index("mesh.key_file", &i), MPI_T_ERR_INVALID_NAME);
}

/* job.thread_level through its enumeration; the handle made before MPI_Init reads after it. */
static MPI_T_cvar_handle level_handle;
static void thread_level(int expect)
{
    int idx = cvar_index("job.thread_level"), lvl = -1;
    MPI_T_enum en;
    CHECK_MPI(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL, NULL));
    CHECK(en != MPI_T_ENUM_NULL, "job.thread_level has no enumeration");
    int num;
    char name[64];
    int nl = sizeof name;
    CHECK_MPI(MPI_T_enum_get_info(en, &num, name, &nl));
    CHECK(num == 4, "%d thread levels", num);
    CHECK_MPI(MPI_T_cvar_read(level_handle, &lvl));
    CHECK(lvl == expect, "thread level %d, expected %d", lvl, expect);
    int value;
    nl = sizeof name;
    CHECK_MPI(MPI_T_enum_get_item(en, lvl, &value, name, &nl));
    const char *want[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                          "MPI_THREAD_MULTIPLE"};
    CHECK(value == lvl && !strcmp(name, want[lvl]), "item %d: %d \"%s\"", lvl, value, name);
    EXPECT(MPI_T_enum_get_item(en, 4, &value, name, &nl), MPI_T_ERR_INVALID_ITEM);
    EXPECT(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, name, &nl), MPI_T_ERR_INVALID_HANDLE);
}

static void pvars(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* does my node host world rank 0, whose member counts the world's collectives? */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int low;
    MPI_Allreduce(&rank, &low, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    int idx;
    EXPECT(MPI_T_pvar_get_index("coll.allreduce.operations", MPI_T_PVAR_CLASS_LEVEL, &idx),
           MPI_T_ERR_INVALID_NAME);
    CHECK_MPI(MPI_T_pvar_get_index("coll.allreduce.operations", MPI_T_PVAR_CLASS_COUNTER, &idx));
    int ro, cont, atom, cls;
    MPI_Datatype dt;
    CHECK_MPI(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, NULL, &ro,
                                  &cont, &atom));
    CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && !ro && cont && atom,
          "counter info");
    MPI_T_pvar_session ses;
    MPI_T_pvar_handle h;
    int count;
    CHECK_MPI(MPI_T_pvar_session_create(&ses));
    CHECK_MPI(MPI_T_pvar_handle_alloc(ses, idx, NULL, &h, &count));
    CHECK(count == 1, "count %d", count);
    MPI_Barrier(MPI_COMM_WORLD);
    int x = 1, y;
    for (int i = 0; i < 3; i++)
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long v = 99;
    unsigned long long want = low == 0 ? 3 : 0;
    CHECK_MPI(MPI_T_pvar_read(ses, h, &v));
    CHECK(v == want, "coll.allreduce.operations read %llu, expected %llu", v, want);
    CHECK_MPI(MPI_T_pvar_readreset(ses, h, &v));
    CHECK(v == want, "readreset %llu", v);
    CHECK_MPI(MPI_T_pvar_read(ses, h, &v));
    CHECK(v == 0, "after readreset %llu", v);
    unsigned long long ten = 10;
    CHECK_MPI(MPI_T_pvar_write(ses, h, &ten));
    CHECK_MPI(MPI_T_pvar_read(ses, h, &v));
    CHECK(v == 10, "after write %llu", v);
    CHECK_MPI(MPI_T_pvar_reset(ses, MPI_T_PVAR_ALL_HANDLES));
    CHECK_MPI(MPI_T_pvar_read(ses, h, &v));
    CHECK(v == 0, "after reset %llu", v);
    EXPECT(MPI_T_pvar_start(ses, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK_MPI(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES));
    /* a level: read only */
    int lidx;
    CHECK_MPI(MPI_T_pvar_get_index("rank.bsend_bytes_used", MPI_T_PVAR_CLASS_LEVEL, &lidx));
    MPI_T_pvar_handle lh;
    CHECK_MPI(MPI_T_pvar_handle_alloc(ses, lidx, NULL, &lh, &count));
    CHECK_MPI(MPI_T_pvar_read(ses, lh, &v));
    CHECK(v == 0, "bsend bytes %llu", v);
    EXPECT(MPI_T_pvar_write(ses, lh, &ten), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_readreset(ses, lh, &v), MPI_T_ERR_PVAR_NO_ATOMIC);
    /* bad handles and sessions */
    MPI_T_pvar_session other;
    CHECK_MPI(MPI_T_pvar_session_create(&other));
    EXPECT(MPI_T_pvar_read(other, h, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_MPI(MPI_T_pvar_session_free(&other));
    EXPECT(MPI_T_pvar_read(other, h, &v), MPI_T_ERR_INVALID_SESSION);
    EXPECT(MPI_T_pvar_handle_alloc(ses, -1, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    CHECK_MPI(MPI_T_pvar_handle_free(ses, &lh));
    EXPECT(MPI_T_pvar_handle_free(ses, &lh), MPI_T_ERR_INVALID_HANDLE);
    CHECK_MPI(MPI_T_pvar_session_free(&ses)); /* frees h with it */
    /* the counter is in its category */
    int cat, ncv, npv, ncat;
    CHECK_MPI(MPI_T_category_get_index("tmpi.coll", &cat));
    CHECK_MPI(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, &ncv, &npv, &ncat));
    CHECK(ncv == 0 && npv >= 34 && ncat == 0, "tmpi.coll: %d cvars, %d pvars", ncv, npv);
    int *ix = malloc(sizeof *ix * (size_t)npv), found = 0;
    CHECK_MPI(MPI_T_category_get_pvars(cat, npv, ix));
    for (int i = 0; i < npv; i++)
        found += ix[i] == idx;
    CHECK(found == 1, "coll.allreduce.operations %d times in tmpi.coll", found);
    free(ix);
    int ncats, total = 0, stamp;
    CHECK_MPI(MPI_T_category_get_num(&ncats));
    for (int c = 0; c < ncats; c++) {
        CHECK_MPI(MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &ncv, NULL, NULL));
        total += ncv;
    }
    int ncvars;
    MPI_T_cvar_get_num(&ncvars);
    CHECK(total == ncvars, "categories hold %d of %d cvars", total, ncvars);
    CHECK_MPI(MPI_T_category_changed(&stamp));
    EXPECT(MPI_T_category_get_index("tmpi.none", &cat), MPI_T_ERR_INVALID_NAME);
}

struct ev_seen {
    int calls, source, tag, src_index;
    MPI_Count bytes, ts, copy[3];
    MPI_T_cb_safety safety;
};

static void on_event(MPI_T_event_instance ei, MPI_T_event_registration er, MPI_T_cb_safety cs,
                     void *user)
{
    (void)er;
    struct ev_seen *s = user;
    s->calls++;
    s->safety = cs;
    CHECK_MPI(MPI_T_event_read(ei, 0, &s->source));
    CHECK_MPI(MPI_T_event_read(ei, 1, &s->tag));
    CHECK_MPI(MPI_T_event_read(ei, 2, &s->bytes));
    CHECK_MPI(MPI_T_event_get_timestamp(ei, &s->ts));
    CHECK_MPI(MPI_T_event_get_source(ei, &s->src_index));
    EXPECT(MPI_T_event_read(ei, 3, &s->tag), MPI_T_ERR_INVALID_INDEX);
}

static void on_bsend(MPI_T_event_instance ei, MPI_T_event_registration er, MPI_T_cb_safety cs,
                     void *user)
{
    (void)er, (void)cs;
    struct ev_seen *s = user;
    s->calls++;
    CHECK_MPI(MPI_T_event_copy(ei, s->copy)); /* dest (int), pad, need, avail */
    CHECK_MPI(MPI_T_event_read(ei, 0, &s->source));
    CHECK_MPI(MPI_T_event_read(ei, 1, &s->bytes));
}

static void never(MPI_T_event_instance ei, MPI_T_event_registration er, MPI_T_cb_safety cs,
                  void *user)
{
    (void)ei, (void)er, (void)cs;
    CHECK(0, "a callback for MPI_T_CB_REQUIRE_NONE ran inside MPI (user %p)", user);
}

static int ndropped;
static MPI_Count dropped_count;
static void on_dropped(MPI_Count count, MPI_T_event_registration er, int source, MPI_T_cb_safety cs,
                       void *user)
{
    (void)er, (void)cs, (void)user;
    ndropped++;
    dropped_count = count;
    CHECK(source == 0, "dropped: source %d", source);
}

static int nfreed;
static void on_free(MPI_T_event_registration er, MPI_T_cb_safety cs, void *user)
{
    (void)er, (void)cs;
    nfreed += *(int *)user;
}

/* A receive of a message that was queued before it: Issend to oneself (synchronous mode never
 * takes the fast boxes), then the receive takes it from the unexpected queue. */
static void unexpected_self(int tag, int count)
{
    int out[64] = {1}, in[64];
    MPI_Request r;
    CHECK_MPI(MPI_Issend(out, count, MPI_INT, 0, tag, MPI_COMM_SELF, &r));
    CHECK_MPI(MPI_Recv(in, count, MPI_INT, 0, tag, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

static void events(void)
{
    int n, idx, len, verb, nel, bind;
    CHECK_MPI(MPI_T_event_get_num(&n));
    CHECK(n == 2, "MPI_T_event_get_num: %d", n);
    const char *names[] = {"tmpi.p2p.unexpected_matched", "tmpi.bsend.buffer_full"};
    for (int i = 0; i < n; i++) {
        char name[128], desc[512];
        int dlen = sizeof desc;
        MPI_Datatype types[4];
        MPI_Aint displs[4];
        MPI_Info info;
        MPI_T_enum en;
        len = sizeof name;
        nel = 4;
        CHECK_MPI(MPI_T_event_get_info(i, name, &len, &verb, types, displs, &nel, &en, &info, desc,
                                       &dlen, &bind));
        CHECK(!strcmp(name, names[i]), "event %d is %s", i, name);
        CHECK(nel == 3 && types[0] == MPI_INT && types[2] == MPI_COUNT && displs[0] == 0,
              "event %s: %d elements", name, nel);
        CHECK(bind == MPI_T_BIND_NO_OBJECT && en == MPI_T_ENUM_NULL && dlen > 1, "event %s", name);
        CHECK_MPI(MPI_Info_free(&info));
        nel = 0; /* the count alone */
        CHECK_MPI(MPI_T_event_get_info(i, NULL, NULL, NULL, NULL, NULL, &nel, NULL, NULL, NULL,
                                       NULL, NULL));
        CHECK(nel == 3, "element count alone: %d", nel);
        CHECK_MPI(MPI_T_event_get_index(names[i], &idx));
        CHECK(idx == i, "index of %s: %d", names[i], idx);
    }
    EXPECT(
        MPI_T_event_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_event_get_index("no.such.event", &idx), MPI_T_ERR_INVALID_NAME);

    /* the source and its clock */
    MPI_Count tps, maxt, t0, t1;
    MPI_T_source_order ord;
    CHECK_MPI(MPI_T_source_get_num(&n));
    CHECK(n == 1, "MPI_T_source_get_num: %d", n);
    CHECK_MPI(MPI_T_source_get_info(0, NULL, &len, NULL, NULL, &ord, &tps, &maxt, NULL));
    CHECK(len > 1 && ord == MPI_T_SOURCE_ORDERED && tps == 1000000000 && maxt > 0, "source 0");
    EXPECT(MPI_T_source_get_info(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    CHECK_MPI(MPI_T_source_get_timestamp(0, &t0));

    /* categories: the events are the rank's */
    int cat, ne;
    CHECK_MPI(MPI_T_category_get_index("tmpi.rank", &cat));
    CHECK_MPI(MPI_T_category_get_num_events(cat, &ne));
    int ev[2] = {-1, -1};
    CHECK_MPI(MPI_T_category_get_events(cat, 2, ev));
    CHECK(ne == 2 && ev[0] == 0 && ev[1] == 1, "tmpi.rank events: %d (%d %d)", ne, ev[0], ev[1]);
    CHECK_MPI(MPI_T_category_get_num_events(0, &ne));
    CHECK(cat == 0 || ne == 0, "category 0 has %d events", ne);
    EXPECT(MPI_T_category_get_num_events(-1, &ne), MPI_T_ERR_INVALID_INDEX);

    /* an unexpected message fires the callback of the lowest level at least
     * MPI_RESTRICTED; a registration with a NONE callback only drops it */
    MPI_T_event_registration reg, dropper, full;
    struct ev_seen seen = {0}, fseen = {0};
    CHECK_MPI(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg));
    CHECK_MPI(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, &seen,
                                            on_event));
    CHECK_MPI(
        MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, never));
    EXPECT(MPI_T_event_register_callback(reg, (MPI_T_cb_safety)7, MPI_INFO_NULL, NULL, never),
           MPI_T_ERR_INVALID);
    CHECK_MPI(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &dropper));
    CHECK_MPI(
        MPI_T_event_register_callback(dropper, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, never));
    CHECK_MPI(MPI_T_event_set_dropped_handler(dropper, on_dropped));
    unexpected_self(77, 16);
    CHECK(seen.calls == 1, "unexpected_matched: %d calls", seen.calls);
    CHECK(seen.source == 0 && seen.tag == 77 && seen.bytes == 16 * (MPI_Count)sizeof(int),
          "unexpected_matched: source %d tag %d bytes %lld", seen.source, seen.tag,
          (long long)seen.bytes);
    CHECK(seen.safety == MPI_T_CB_REQUIRE_MPI_RESTRICTED && seen.src_index == 0,
          "unexpected_matched: safety %d source %d", seen.safety, seen.src_index);
    CHECK_MPI(MPI_T_source_get_timestamp(0, &t1));
    CHECK(t0 <= seen.ts && seen.ts <= t1, "timestamp %lld not in [%lld, %lld]", (long long)seen.ts,
          (long long)t0, (long long)t1);
    CHECK(ndropped == 1 && dropped_count == 1, "dropped handler: %d calls, count %lld", ndropped,
          (long long)dropped_count);

    /* hints of the handle and of a callback */
    MPI_Info hin, hout;
    char v[16];
    int flag;
    CHECK_MPI(MPI_Info_create(&hin));
    CHECK_MPI(MPI_Info_set(hin, "k", "v1"));
    CHECK_MPI(MPI_T_event_handle_set_info(reg, hin));
    CHECK_MPI(MPI_T_event_handle_get_info(reg, &hout));
    len = sizeof v;
    CHECK_MPI(MPI_Info_get_string(hout, "k", &len, v, &flag));
    CHECK(flag && !strcmp(v, "v1"), "handle info");
    CHECK_MPI(MPI_Info_free(&hout));
    CHECK_MPI(MPI_T_event_callback_set_info(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, hin));
    CHECK_MPI(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, &hout));
    CHECK_MPI(MPI_Info_free(&hout));
    EXPECT(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, &hout),
           MPI_T_ERR_INVALID);
    CHECK_MPI(MPI_Info_free(&hin));

    /* a buffered send without room */
    CHECK_MPI(MPI_T_event_handle_alloc(1, NULL, MPI_INFO_NULL, &full));
    CHECK_MPI(MPI_T_event_register_callback(full, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL,
                                            &fseen, on_bsend));
    char small[16];
    int one = 1;
    CHECK_MPI(MPI_Buffer_attach(small, sizeof small));
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    EXPECT(MPI_Bsend(&one, 1, MPI_INT, 0, 5, MPI_COMM_SELF), MPI_ERR_BUFFER);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    void *b;
    int bs;
    CHECK_MPI(MPI_Buffer_detach(&b, &bs));
    CHECK(fseen.calls == 1 && fseen.source == 0 && fseen.bytes == 4 + MPI_BSEND_OVERHEAD &&
              fseen.copy[1] == 4 + MPI_BSEND_OVERHEAD && fseen.copy[2] == 16,
          "buffer_full: %d calls, dest %d need %lld avail %lld", fseen.calls, fseen.source,
          (long long)fseen.bytes, (long long)fseen.copy[2]);

    /* freed: the free callback runs once, no callback after, the handle is gone */
    int one_free = 1;
    CHECK_MPI(MPI_T_event_handle_free(reg, &one_free, on_free));
    CHECK_MPI(MPI_T_event_handle_free(dropper, &one_free, on_free));
    CHECK_MPI(MPI_T_event_handle_free(full, &one_free, NULL));
    CHECK(nfreed == 2, "free callbacks: %d", nfreed);
    EXPECT(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_set_dropped_handler(reg, on_dropped), MPI_T_ERR_INVALID_HANDLE);
    unexpected_self(78, 4);
    CHECK(seen.calls == 1 && ndropped == 1, "a freed registration was called");
    EXPECT(MPI_T_event_read(NULL, 0, &n), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_event_handle_alloc(2, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
}

int main(int argc, char **argv)
{
    int provided, n;
    EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_T provided %d", provided);
    int count;
    CHECK_MPI(MPI_T_cvar_handle_alloc(cvar_index("job.thread_level"), NULL, &level_handle, &count));
    thread_level(MPI_THREAD_SINGLE);
    cvars_described();
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    thread_level(provided);
    settings();
    pvars();
    events();
    CHECK_MPI(MPI_T_finalize());
    CHECK_MPI(MPI_T_cvar_get_num(&n)); /* one init left */
    CHECK_MPI(MPI_T_finalize());
    EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    return finish_ok();
}
