/* test_msg_check.c — the job-message checks (proto/control/msg_check.c): what they accept and
 * each refusal, with the reason they give. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "msg_check.h"

static uint8_t hash[32];

static void placement(Tmpi__NodePlacement *np, const char *host, uint32_t *ranks, size_t n)
{
    tmpi__node_placement__init(np);
    np->host = (char *)host;
    np->port = 7470;
    np->ranks = ranks;
    np->n_ranks = n;
}

static void job_assign(Tmpi__JobAssign *ja, Tmpi__NodePlacement **nodes, size_t n, uint32_t world)
{
    tmpi__job_assign__init(ja);
    ja->nodes = nodes;
    ja->n_nodes = n;
    ja->nprocs = world;
    ja->program_hash.data = hash;
    ja->program_hash.len = sizeof hash;
    ja->program_size = 100;
    ja->program_name = (char *)"./app";
    ja->cwd = (char *)"/tmp";
}

static void refused(int r, const char *err, const char *want)
{
    CHECK_EQ(r, -EINVAL);
    if (!strstr(err, want)) {
        fprintf(stderr, "expected a reason with '%s', got '%s'\n", want, err);
        exit(1);
    }
}

int main(void)
{
    char err[256];
    uint32_t a[] = {0, 1}, b[] = {2, 3}, dup[] = {1, 2}, far[] = {2, 9};
    Tmpi__NodePlacement n0, n1, *nodes[] = {&n0, &n1};
    Tmpi__JobAssign ja;

    placement(&n0, "node0", a, 2);
    placement(&n1, "node1", b, 2);
    job_assign(&ja, nodes, 2, 4);
    CHECK_EQ(msg_check_assign(&ja, err, sizeof err), 0);
    ja.bind_to = (Tmpi__BindTo)-1;
    refused(msg_check_assign(&ja, err, sizeof err), err, "unknown binding kind -1");
    ja.bind_to = TMPI__BIND_TO__BIND_CORE;
    CHECK_EQ(msg_check_assign(&ja, err, sizeof err), 0);

    /* A node with no ranks: refused even when the others hold every rank. */
    uint32_t all[] = {0, 1, 2, 3};
    placement(&n0, "node0", all, 4);
    placement(&n1, "node1", NULL, 0);
    refused(msg_check_assign(&ja, err, sizeof err), err, "needs a host, a port and ranks");
    /* ... unless it is a spare node with spawn slots (MPI_Comm_spawn's room), never node 0 */
    n1.spawn_slots = 3;
    CHECK_EQ(msg_check_assign(&ja, err, sizeof err), 0);
    placement(&n0, "node0", NULL, 0);
    n0.spawn_slots = 3;
    placement(&n1, "node1", all, 4);
    refused(msg_check_assign(&ja, err, sizeof err), err, "node 0 needs a host, a port and ranks");

    placement(&n0, "node0", a, 2);
    placement(&n1, "node1", dup, 2);
    refused(msg_check_assign(&ja, err, sizeof err), err, "rank 1 placed twice");
    placement(&n1, "node1", far, 2);
    refused(msg_check_assign(&ja, err, sizeof err), err, "rank 9 placed twice or out of range");
    placement(&n1, "node1", b, 1);
    refused(msg_check_assign(&ja, err, sizeof err), err, "3 ranks placed for a job of 4");
    placement(&n1, "", b, 2);
    refused(msg_check_assign(&ja, err, sizeof err), err, "node 1 needs a host");
    placement(&n1, "node1", b, 2);
    ja.node = 2;
    refused(msg_check_assign(&ja, err, sizeof err), err, "node 2 of 2");
    ja.node = 0;

    /* Spawn slots (MPI_Comm_spawn's room): at most MSG_MAX_SPAWN_SLOTS over all nodes. */
    n0.spawn_slots = MSG_MAX_SPAWN_SLOTS - 1;
    n1.spawn_slots = 1;
    CHECK_EQ(msg_check_assign(&ja, err, sizeof err), 0);
    n1.spawn_slots = 2;
    refused(msg_check_assign(&ja, err, sizeof err), err, "4097 spawn slots (at most 4096)");
    n0.spawn_slots = n1.spawn_slots = 0;

    /* Sizes of what a job carries. */
    ja.cwd = (char *)"relative";
    refused(msg_check_assign(&ja, err, sizeof err), err, "working directory not absolute");
    ja.cwd = (char *)"/tmp";
    ja.program_hash.len = 31;
    refused(msg_check_assign(&ja, err, sizeof err), err, "program hash of 31 bytes");
    ja.program_hash.len = 32;

    Tmpi__SubmitJob s;
    tmpi__submit_job__init(&s);
    s.nprocs = 4;
    s.program_hash.data = hash;
    s.program_hash.len = sizeof hash;
    s.program_size = 100;
    s.program_name = (char *)"./app";
    s.cwd = (char *)"/home/u";
    CHECK_EQ(msg_check_submit(&s, err, sizeof err), 0);
    static char big[1 << 20];
    memset(big, 'x', sizeof big - 1);
    char *args[5] = {big, big, big, big, big};
    s.args = args;
    s.n_args = 5;
    refused(msg_check_submit(&s, err, sizeof err), err, "arguments over");
    s.n_args = 3;
    CHECK_EQ(msg_check_submit(&s, err, sizeof err), 0);
    s.n_args = 0;
    Tmpi__EnvVar v = TMPI__ENV_VAR__INIT, *env[] = {&v};
    v.name = (char *)"A=B";
    s.env = env;
    s.n_env = 1;
    refused(msg_check_submit(&s, err, sizeof err), err, "bad environment variable name");
    s.n_env = 0;
    s.bind_to = TMPI__BIND_TO__BIND_PACKAGE;
    CHECK_EQ(msg_check_submit(&s, err, sizeof err), 0);
    s.bind_to = (Tmpi__BindTo)7;
    refused(msg_check_submit(&s, err, sizeof err), err, "unknown binding kind 7 (--bind-to)");
    s.bind_to = TMPI__BIND_TO__BIND_DEFAULT;
    s.nprocs = 0;
    refused(msg_check_submit(&s, err, sizeof err), err, "a job needs 1 to");

    Tmpi__Output o = TMPI__OUTPUT__INIT;
    o.rank = 3;
    o.stream = MSG_STREAM_STDERR;
    CHECK_EQ(msg_check_output(&o, 4, 1024, err, sizeof err), 0);
    o.rank = 4;
    refused(msg_check_output(&o, 4, 1024, err, sizeof err), err, "output of rank 4 in a job of 4");
    o.rank = 0;
    o.stream = 3;
    refused(msg_check_output(&o, 4, 1024, err, sizeof err), err, "stream 3");
    o.stream = MSG_STREAM_STDOUT;
    o.data.len = 1025;
    o.data.data = (uint8_t *)big;
    refused(msg_check_output(&o, 4, 1024, err, sizeof err), err, "1025 bytes");

    Tmpi__RankExit e = TMPI__RANK_EXIT__INIT;
    e.rank = 3;
    CHECK_EQ(msg_check_rank_exit(&e, 4, err, sizeof err), 0);
    e.rank = 4;
    refused(msg_check_rank_exit(&e, 4, err, sizeof err), err, "exit of rank 4 in a job of 4");

    /* several programs (MPMD): apps carry them, the top level names none, ranks add up */
    {
        uint8_t h[32] = {1};
        Tmpi__JobApp a0 = TMPI__JOB_APP__INIT, a1 = TMPI__JOB_APP__INIT;
        Tmpi__JobApp *apps[2] = {&a0, &a1};
        a0.nprocs = 2;
        a1.nprocs = 3;
        a0.program_hash.data = a1.program_hash.data = h;
        a0.program_hash.len = a1.program_hash.len = 32;
        a0.program_size = a1.program_size = 100;
        a0.program_name = "./a";
        a1.program_name = "./b";
        a1.cwd = "/elsewhere";
        Tmpi__SubmitJob m = TMPI__SUBMIT_JOB__INIT;
        m.nprocs = 5;
        m.cwd = "/tmp";
        m.n_apps = 2;
        m.apps = apps;
        CHECK_EQ(msg_check_submit(&m, err, sizeof err), 0);
        m.nprocs = 6;
        refused(msg_check_submit(&m, err, sizeof err), err, "the programs have 5 ranks in all");
        m.nprocs = 5;
        a1.cwd = "relative";
        refused(msg_check_submit(&m, err, sizeof err), err, "program 1: malformed job: working");
        a1.cwd = "";
        a0.nprocs = 0;
        refused(msg_check_submit(&m, err, sizeof err), err, "program 0 has no ranks");
        a0.nprocs = 2;
        m.program_name = "./c";
        refused(msg_check_submit(&m, err, sizeof err), err, "names them in apps only");
        m.program_name = "";
        a1.program_hash.len = 3;
        refused(msg_check_submit(&m, err, sizeof err), err,
                "program 1: malformed job: program hash");
    }

    /* forwarded signals: SIGUSR1 and SIGUSR2 only */
    Tmpi__SignalJob sj = TMPI__SIGNAL_JOB__INIT;
    sj.signo = 10;
    CHECK_EQ(msg_check_signal(&sj, err, sizeof err), 0);
    sj.signo = 12;
    CHECK_EQ(msg_check_signal(&sj, err, sizeof err), 0);
    sj.signo = 9;
    refused(msg_check_signal(&sj, err, sizeof err), err, "signal 9 cannot be forwarded");
    sj.signo = -10;
    refused(msg_check_signal(&sj, err, sizeof err), err, "signal -10 cannot be forwarded");

    /* name requests (MPI_Publish/Unpublish/Lookup_name): known operation, bounded names */
    static char longsvc[MSG_NAME_SERVICE_MAX + 2], longport[MSG_NAME_PORT_MAX + 2];
    memset(longsvc, 's', MSG_NAME_SERVICE_MAX + 1);
    memset(longport, 'p', MSG_NAME_PORT_MAX + 1);
    Tmpi__NameRequest nr = TMPI__NAME_REQUEST__INIT;
    nr.op = MSG_NAME_LOOKUP;
    nr.service = "svc";
    CHECK_EQ(msg_check_name_request(&nr, err, sizeof err), 0);
    nr.op = MSG_NAME_PUBLISH;
    refused(msg_check_name_request(&nr, err, sizeof err), err, "a port name of 0 bytes");
    nr.port = "tmpi-port:1:0:0";
    CHECK_EQ(msg_check_name_request(&nr, err, sizeof err), 0);
    nr.port = longport;
    refused(msg_check_name_request(&nr, err, sizeof err), err, "a port name of 256 bytes");
    nr.port = "tmpi-port:1:0:0";
    nr.service = longsvc;
    refused(msg_check_name_request(&nr, err, sizeof err), err, "a service name of 1025 bytes");
    nr.service = "";
    refused(msg_check_name_request(&nr, err, sizeof err), err, "a service name of 0 bytes");
    nr.service = "svc";
    nr.op = 9;
    refused(msg_check_name_request(&nr, err, sizeof err), err, "name operation 9");
    /* where a job's node runs (op 8, the relays' question): a job, no service needed */
    nr.op = MSG_NAME_JOB_FIND;
    refused(msg_check_name_request(&nr, err, sizeof err), err, "a job find without a job");
    nr.job_id = 7;
    CHECK_EQ(msg_check_name_request(&nr, err, sizeof err), 0);
    nr.job_id = 0;
    /* context ids between jobs (op 7): any non-empty service */
    nr.op = MSG_NAME_XCTX;
    nr.service = "ctx";
    CHECK_EQ(msg_check_name_request(&nr, err, sizeof err), 0);
    nr.service = "svc";
    /* port operations (MPI_Open_port, Close_port, a connect to another job's port): the port's
     * name as the service, 1 to MSG_NAME_PORT_MAX bytes, no port */
    nr.op = MSG_NAME_PORT_FIND;
    nr.port = "";
    nr.service = "tmpi-port:1:0:0";
    CHECK_EQ(msg_check_name_request(&nr, err, sizeof err), 0);
    nr.op = MSG_NAME_PORT_OPEN;
    nr.service = longport;
    refused(msg_check_name_request(&nr, err, sizeof err), err, "a port name of 256 bytes");
    printf("msg_check: ok\n");
    return 0;
}
