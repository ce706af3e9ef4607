/* spawn.c — MPI_Comm_spawn and MPI_Comm_spawn_multiple on one node (dynproc.bats).
 *   spawn parent N     spawns N copies of itself ("child"), talks to them over the parent
 *                      inter-communicator, merges with them, checks their globals are their own
 *   spawn multiple     spawn_multiple of "child-a" x1 and "child-b" x2: MPI_APPNUM 0 and 1
 *   spawn errors       a missing program and more ranks than the universe: MPI_ERR_SPAWN
 *   spawn across       (a job across nodes without free slots) spawning fails with
 *                      MPI_ERR_SPAWN, never hangs
 *   spawn universe     each rank prints MPI_UNIVERSE_SIZE
 *   spawn host H N     as parent N, the children on host H (info "host"; addhost: "add-host";
 *                      hostfile F N: the hosts of file F, info "hostfile")
 *   spawn repeat R N   parent N, R times one after the other: more children in all than the
 *                      universe has slots, as each spawn's children disconnect and finalize
 *   spawn badhost H N [fatal]  N children on host H fail with MPI_ERR_SPAWN in every errcode
 *                      (with fatal: MPI_ERRORS_ARE_FATAL says why and ends the job)
 *   spawn hosts H N [H N ...]  spawn_multiple of up to 4 commands ("child-h"), command k's N
 *                      ranks on host H ("-": none); MPI_APPNUM, world order, talk both ways
 *   spawn badhosts H N [H N ...]  the same must fail with MPI_ERR_SPAWN in every errcode; then
 *                      2 children on the first H (its slots that the failed spawn took are free)
 *   spawn slow S [N]   N children (default 1, "child-slow") compute S seconds before they
 *                      answer parent 0; the other parents wait in MPI_Comm_disconnect meanwhile
 *   spawn wdir DIR     a child started by name (info "path") in DIR (info "wdir", "host")
 *   spawn partial CMD N  (a job across nodes) the last rank spawns N of CMD ("child N"), which
 *                      one node cannot start: MPI_ERR_SPAWN in every errcode, and the
 *                      children another node started never run
 * Prints "spawn ok" on rank 0 of the parents when every check passed, and each child
 * "child R of N on NODE" (MPI_Get_processor_name). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abort_check.h"

static int counter; /* a global each rank's copy has to itself */

static int child_wdir(const char *want)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, want) == 0, "child in %s, not %s", cwd, want);
    int ok = 1;
    MPI_Send(&ok, 1, MPI_INT, 0, 3, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

static int child_slow(int secs)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    printf("child computing\n");
    fflush(stdout);
    sleep((unsigned)secs);
    int v = 5;
    MPI_Send(&v, 1, MPI_INT, 0, 6, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

static void slow_run(const char *self, const char *secs, int n)
{
    int rank, v = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *args[] = {"child-slow", (char *)secs, NULL};
    MPI_Comm kid;
    CHECK(MPI_Comm_spawn(self, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kid,
                         MPI_ERRCODES_IGNORE) == MPI_SUCCESS,
          "spawn");
    for (int i = 0; rank == 0 && i < n; i++) {
        MPI_Recv(&v, 1, MPI_INT, i, 6, kid, MPI_STATUS_IGNORE);
        CHECK(v == 5, "slow child %d sent %d", i, v);
    }
    MPI_Comm_disconnect(&kid);
}

static int child(const char *mode, int argc, char **argv)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent != MPI_COMM_NULL, "a spawned rank has no parent");
    int rank, size, rsize, inter, *appnum, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_remote_size(parent, &rsize);
    MPI_Comm_test_inter(parent, &inter);
    CHECK(inter, "the parent communicator is not an inter-communicator");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(counter == 0, "child %d sees counter %d: globals shared", rank, counter);
    const char *er = getenv("OMPI_COMM_WORLD_RANK"), *es = getenv("OMPI_COMM_WORLD_SIZE");
    CHECK(er && atoi(er) == rank && es && atoi(es) == size, "child %d: rank variables %s/%s", rank,
          er ? er : "-", es ? es : "-");
    counter = 1000 + rank;
    char host[MPI_MAX_PROCESSOR_NAME];
    int hl;
    MPI_Get_processor_name(host, &hl);
    printf("child %d of %d on %s\n", rank, size, host);
    if (strcmp(mode, "child") == 0) {
        CHECK(argc == 3 && atoi(argv[2]) == size, "argv/size: argc %d size %d", argc, size);
        CHECK(flag && *appnum == 0, "MPI_APPNUM %d", flag ? *appnum : -1);
        /* the parents' data, answered doubled; then a barrier over the children's world */
        int v;
        MPI_Recv(&v, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE);
        CHECK(v == 100 + rank, "child %d got %d", rank, v);
        v *= 2;
        MPI_Send(&v, 1, MPI_INT, 0, 8, parent);
        int sum = 0, one = 1;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == size, "children's allreduce %d", sum);
        MPI_Comm merged;
        MPI_Intercomm_merge(parent, 1, &merged);
        int mrank, msize, total = 0;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        CHECK(msize == size + rsize && mrank == rsize + rank, "merged %d of %d", mrank, msize);
        MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged);
        CHECK(total == msize * (msize - 1) / 2, "merged allreduce %d", total);
        MPI_Comm_free(&merged);
    } else if (strcmp(mode, "child-h") == 0) {
        /* spawn_multiple over hosts: the command's index is MPI_APPNUM and argv[2]; the
         * parents' value comes back doubled, plus the sum over the children's world */
        CHECK(argc == 3 && flag && *appnum == atoi(argv[2]), "MPI_APPNUM %d, argv %s",
              flag ? *appnum : -1, argc == 3 ? argv[2] : "-");
        int v, one = 1, sum = 0;
        MPI_Recv(&v, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE);
        CHECK(v == 100 + rank, "child %d got %d", rank, v);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == size, "children's allreduce %d of %d", sum, size);
        int back[3] = {2 * v, *appnum, counter};
        MPI_Send(back, 3, MPI_INT, 0, 8, parent);
    } else {
        int want = strcmp(mode, "child-a") == 0 ? 0 : 1;
        CHECK(size == 3, "spawn_multiple world %d", size);
        CHECK(flag && *appnum == want, "%s: MPI_APPNUM %d", mode, flag ? *appnum : -1);
        CHECK(rank == (want ? rank : 0) && (want == 0 || rank >= 1), "%s rank %d", mode, rank);
        int a = *appnum;
        MPI_Send(&a, 1, MPI_INT, 0, 9, parent);
    }
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

static void parent_run(const char *self, int n, const char *host, const char *key)
{
    int rank, size, *usize, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    CHECK(flag && *usize >= size + n, "MPI_UNIVERSE_SIZE %d", flag ? *usize : -1);
    counter = 111;
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", n);
    char *args[] = {"child", nbuf, NULL};
    int errs[64];
    MPI_Comm kids;
    MPI_Info info = MPI_INFO_NULL;
    if (host) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, host);
    }
    CHECK(MPI_Comm_spawn(self, args, n, info, 0, MPI_COMM_WORLD, &kids, errs) == MPI_SUCCESS,
          "spawn");
    if (host) MPI_Info_free(&info);
    for (int i = 0; rank == 0 && i < n; i++)
        CHECK(errs[i] == MPI_SUCCESS, "errcode %d: %d", i, errs[i]);
    int rsize, lsize;
    MPI_Comm_remote_size(kids, &rsize);
    MPI_Comm_size(kids, &lsize);
    CHECK(rsize == n && lsize == size, "intercomm sizes %d/%d", lsize, rsize);
    if (rank == 0)
        for (int i = 0; i < n; i++) {
            int v = 100 + i, back;
            MPI_Send(&v, 1, MPI_INT, i, 7, kids);
            MPI_Recv(&back, 1, MPI_INT, i, 8, kids, MPI_STATUS_IGNORE);
            CHECK(back == 2 * v, "child %d answered %d", i, back);
        }
    MPI_Comm merged;
    MPI_Intercomm_merge(kids, 0, &merged);
    int mrank, msize, total = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size + n && mrank == rank, "merged %d of %d", mrank, msize);
    MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK(total == msize * (msize - 1) / 2, "merged allreduce %d", total);
    MPI_Comm_free(&merged);
    CHECK(counter == 111, "the parent's counter became %d", counter);
    MPI_Comm_disconnect(&kids);
}

static void multiple_run(const char *self)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *cmds[2] = {(char *)self, (char *)self};
    char *a0[] = {"x", NULL}, *a1[] = {"y", NULL};
    char **argvs[2] = {a0, a1};
    int maxp[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm kids;
    /* argv[1] of each: the mode, given as the command's first argument */
    a0[0] = "child-a";
    a1[0] = "child-b";
    CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, maxp, infos, 0, MPI_COMM_WORLD, &kids,
                                  MPI_ERRCODES_IGNORE) == MPI_SUCCESS,
          "spawn_multiple");
    if (rank == 0)
        for (int i = 0; i < 3; i++) {
            int a;
            MPI_Recv(&a, 1, MPI_INT, i, 9, kids, MPI_STATUS_IGNORE);
            CHECK(a == (i == 0 ? 0 : 1), "child %d appnum %d", i, a);
        }
    MPI_Comm_disconnect(&kids);
}

/* MPI_Comm_spawn_multiple with one command per host: hosts[k] (info key host) takes n[k]
 * ranks of the command k; "-" names no host.  The children's world ranks are the commands' in
 * order, each with its appnum, its own globals and a talk both ways with rank 0. */
static void hosts_run(const char *self, int count, char **hosts, const int *n, int fail)
{
    int rank, total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *cmds[4], **argvs[4], *args[4][3], num[4][8];
    MPI_Info infos[4];
    for (int k = 0; k < count; k++) {
        snprintf(num[k], sizeof num[k], "%d", k);
        args[k][0] = "child-h", args[k][1] = num[k], args[k][2] = NULL;
        cmds[k] = (char *)self;
        argvs[k] = args[k];
        infos[k] = MPI_INFO_NULL;
        if (strcmp(hosts[k], "-") != 0) {
            MPI_Info_create(&infos[k]);
            MPI_Info_set(infos[k], "host", hosts[k]);
        }
        total += n[k];
    }
    int errs[64];
    MPI_Comm kids = 5;
    if (fail) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn_multiple(count, cmds, argvs, (int *)n, infos, 0, MPI_COMM_WORLD, &kids,
                                     errs);
    for (int k = 0; k < count; k++)
        if (infos[k] != MPI_INFO_NULL) MPI_Info_free(&infos[k]);
    if (fail) {
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN && kids == MPI_COMM_NULL, "hosts: class %d", cls);
        for (int i = 0; rank == 0 && i < total && i < 64; i++)
            CHECK(errs[i] == MPI_ERR_SPAWN, "errcode %d: %d", i, errs[i]);
        if (rank == 0) printf("badhosts failed as it should\n");
        int two = 2;
        hosts_run(self, 1, hosts, &two, 0);
        return;
    }
    CHECK(rc == MPI_SUCCESS, "spawn_multiple over hosts");
    int rsize = 0;
    MPI_Comm_remote_size(kids, &rsize);
    CHECK(rsize == total, "%d children, %d asked", rsize, total);
    for (int i = 0; rank == 0 && i < total; i++) {
        int v = 100 + i;
        MPI_Send(&v, 1, MPI_INT, i, 7, kids);
    }
    for (int i = 0; rank == 0 && i < total; i++) {
        CHECK(errs[i] == MPI_SUCCESS, "errcode %d of child %d", errs[i], i);
        int v = 100 + i, back[3];
        MPI_Recv(back, 3, MPI_INT, i, 8, kids, MPI_STATUS_IGNORE);
        int k = 0;
        for (int below = n[0]; i >= below; below += n[++k])
            ;
        CHECK(back[0] == 2 * v && back[1] == k && back[2] == 1000 + i,
              "child %d answered %d, appnum %d, counter %d", i, back[0], back[1], back[2]);
    }
    MPI_Comm_disconnect(&kids);
}

static void wdir_run(const char *self, const char *dir)
{
    char here[4096], name[256];
    const char *slash = strrchr(self, '/');
    CHECK(slash && (size_t)(slash - self) < sizeof here, "argv[0] %s has no directory", self);
    snprintf(here, sizeof here, "%.*s", (int)(slash - self), self);
    snprintf(name, sizeof name, "%s", slash + 1);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "path", here);
    MPI_Info_set(info, "wdir", dir);
    MPI_Info_set(info, "host", "localhost");
    char *args[] = {"child-wdir", (char *)dir, NULL};
    MPI_Comm kids;
    CHECK(MPI_Comm_spawn(name, args, 1, info, 0, MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE) ==
              MPI_SUCCESS,
          "spawn by name");
    MPI_Info_free(&info);
    int rank, ok = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) MPI_Recv(&ok, 1, MPI_INT, 0, 3, kids, MPI_STATUS_IGNORE);
    CHECK(rank != 0 || ok == 1, "child answered %d", ok);
    MPI_Comm_disconnect(&kids);
}

static void errors_run(const char *argv0)
{
    int rank, *usize, flag, errs[4] = {-1, -1, -1, -1};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm kids = 5;
    int rc = MPI_Comm_spawn("./no-such-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                            &kids, errs);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN && kids == MPI_COMM_NULL, "missing program: class %d", cls);
    CHECK(rank != 0 || (errs[0] == MPI_ERR_SPAWN && errs[1] == MPI_ERR_SPAWN), "errcodes %d %d",
          errs[0], errs[1]);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    rc = MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, *usize + 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                        &kids, MPI_ERRCODES_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN, "too many: class %d", cls);
    rc = MPI_Comm_spawn("/etc/hostname", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kids,
                        MPI_ERRCODES_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN, "not a program: class %d", cls);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", "no-such-node.invalid");
    rc = MPI_Comm_spawn("/bin/true", MPI_ARGV_NULL, 1, info, 0, MPI_COMM_WORLD, &kids,
                        MPI_ERRCODES_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN, "another host: class %d", cls);
    MPI_Info_set(info, "host", "localhost");
    MPI_Info_set(info, "wdir", "/no/such/dir");
    rc = MPI_Comm_spawn(argv0, MPI_ARGV_NULL, 1, info, 0, MPI_COMM_WORLD, &kids,
                        MPI_ERRCODES_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN, "a missing wdir: class %d", cls);
    MPI_Info_free(&info);
    /* the failed spawns gave their slots back: the whole rest of the universe spawns */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (*usize > size) parent_run(argv0, *usize - size, NULL, NULL);
}

static void partial_run(const char *cmd, int n)
{
    int rank, size, errs[64];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(n >= 1 && n <= 64, "partial: %d children", n);
    for (int i = 0; i < n; i++)
        errs[i] = -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char nstr[16];
    snprintf(nstr, sizeof nstr, "%d", n);
    char *args[] = {"child", nstr, NULL};
    MPI_Comm kids = 5;
    int cls = -1,
        rc = MPI_Comm_spawn(cmd, args, n, MPI_INFO_NULL, size - 1, MPI_COMM_WORLD, &kids, errs);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN && kids == MPI_COMM_NULL, "partial spawn: class %d", cls);
    for (int i = 0; rank == size - 1 && i < n; i++)
        CHECK(errs[i] == MPI_ERR_SPAWN, "errcode %d: %d", i, errs[i]);
    if (rank == size - 1) printf("partial spawn failed as it should\n");
}

static void badhost_run(const char *self, const char *host, int n, int fatal)
{
    int rank, errs[64];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!fatal) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", host);
    char *args[] = {"child", "1", NULL};
    MPI_Comm kids = 5;
    int cls = -1, rc = MPI_Comm_spawn(self, args, n, info, 0, MPI_COMM_WORLD, &kids, errs);
    MPI_Info_free(&info);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN && kids == MPI_COMM_NULL, "host %s: class %d", host, cls);
    for (int i = 0; rank == 0 && i < n; i++)
        CHECK(errs[i] == MPI_ERR_SPAWN, "errcode %d: %d", i, errs[i]);
    if (rank == 0) printf("badhost failed as it should\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "parent";
    if (strcmp(mode, "child-wdir") == 0) return child_wdir(argc > 2 ? argv[2] : "");
    if (strcmp(mode, "child-slow") == 0) return child_slow(argc > 2 ? atoi(argv[2]) : 1);
    if (strncmp(mode, "child", 5) == 0) return child(mode, argc, argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "the job's own rank has a parent");
    if (strcmp(mode, "parent") == 0) parent_run(argv[0], argc > 2 ? atoi(argv[2]) : 1, NULL, NULL);
    if (strcmp(mode, "host") == 0 && argc > 3) parent_run(argv[0], atoi(argv[3]), argv[2], "host");
    if (strcmp(mode, "addhost") == 0 && argc > 3)
        parent_run(argv[0], atoi(argv[3]), argv[2], "add-host");
    if (strcmp(mode, "hostfile") == 0 && argc > 3)
        parent_run(argv[0], atoi(argv[3]), argv[2], "hostfile");
    if (strcmp(mode, "badhost") == 0 && argc > 3)
        badhost_run(argv[0], argv[2], atoi(argv[3]), argc > 4);
    if (strcmp(mode, "repeat") == 0 && argc > 3)
        for (int r = atoi(argv[2]); r > 0; r--)
            parent_run(argv[0], atoi(argv[3]), NULL, NULL);
    if (strcmp(mode, "multiple") == 0) multiple_run(argv[0]);
    int bad = strcmp(mode, "badhosts") == 0;
    if ((bad || strcmp(mode, "hosts") == 0) && argc >= 4 && argc % 2 == 0 && argc <= 10) {
        int n[4], count = (argc - 2) / 2;
        char *hosts[4];
        for (int k = 0; k < count; k++)
            hosts[k] = argv[2 + 2 * k], n[k] = atoi(argv[3 + 2 * k]);
        hosts_run(argv[0], count, hosts, n, bad);
    }
    if (strcmp(mode, "errors") == 0) errors_run(argv[0]);
    if (strcmp(mode, "across") == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm kids;
        int cls = -1, rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0,
                                          MPI_COMM_WORLD, &kids, MPI_ERRCODES_IGNORE);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN && kids == MPI_COMM_NULL, "across nodes: class %d", cls);
    }
    if (strcmp(mode, "wdir") == 0 && argc > 2) wdir_run(argv[0], argv[2]);
    if (strcmp(mode, "partial") == 0 && argc > 3) partial_run(argv[2], atoi(argv[3]));
    if (strcmp(mode, "slow") == 0)
        slow_run(argv[0], argc > 2 ? argv[2] : "1", argc > 3 ? atoi(argv[3]) : 1);
    if (strcmp(mode, "universe") == 0) {
        int *usize, flag;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
        printf("universe %d\n", flag ? *usize : -1);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("spawn ok\n");
    MPI_Finalize();
    return 0;
}
