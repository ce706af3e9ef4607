/* split_hw.c — MPI_Comm_split_type (MPI 4.1 §7.4.2) and MPI_Get_hw_resource_info (§11.4.3):
 * the kinds that follow the hardware.  A rank is a thread, so the resources it is restricted
 * to are those its calling thread's CPU binding lies in (agent/host/binding.c pins rank
 * threads, tmpi-launch --bind-to); the node's topology is hwloc's, loaded once per job on
 * first use.  Levels are named as hwloc names object types ("Package", "NUMANode", "L3Cache",
 * "Core", "PU", case-insensitive, with Open MPI's and MPICH's "socket" and "hwthread"), plus
 * the standard's "mpi_shared_memory" (the node: ranks share memory exactly when they share
 * a node). */
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "comm.h"
#include "errh.h"
#include "info.h"
#include "intercomm.h"
#include "job.h"
#include "lib.h"

#define HW_KEY "mpi_hw_resource_type"
#define HW_SHARED "mpi_shared_memory"

static void hw_free(struct tm_job *j)
{
    if (j->hw_topo) hwloc_topology_destroy(j->hw_topo);
    j->hw_topo = NULL;
}

/* The job's topology of this node, loaded by the first caller; NULL when hwloc cannot. */
static hwloc_topology_t hw_topo(struct tm_job *j)
{
    pthread_mutex_lock(&j->hw_lock);
    if (!j->hw_topo) {
        hwloc_topology_t t;
        if (hwloc_topology_init(&t) == 0) {
            if (hwloc_topology_load(t) == 0) {
                j->hw_topo = t;
                j->hw_free = hw_free;
            } else {
                hwloc_topology_destroy(t);
            }
        }
    }
    hwloc_topology_t t = j->hw_topo;
    pthread_mutex_unlock(&j->hw_lock);
    return t;
}

/* The CPUs of the thread the rank runs on (the rank's binding), or NULL; the caller frees it.
 * Asked of the kernel directly, not through libc's sched_getaffinity: the job host answers
 * that, for a rank on a carrier (user-level switching), with the CPUs of all the job's
 * carriers (interpose_proc.c, where the rank may run), so every carried rank would seem to
 * span every core and HW_GUIDED "Core" gave MPI_COMM_NULL.  A carried rank runs on the
 * carrier that started it, pinned to one core when the job is bound (job_bind.h), and leaves
 * it only when another carrier rescues it after RESCUE_NS: the ranks one carrier runs share
 * its core, as MPI 4.1 §7.4.2 asks of ranks restricted to one resource. */
static hwloc_bitmap_t hw_binding(hwloc_topology_t t)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (!set) return NULL;
    if (syscall(SYS_sched_getaffinity, 0, sizeof cpus, &cpus) < 0 ||
        hwloc_cpuset_from_glibc_sched_affinity(t, set, &cpus, sizeof cpus) < 0) {
        hwloc_bitmap_free(set);
        return NULL;
    }
    hwloc_bitmap_and(set, set, hwloc_topology_get_topology_cpuset(t));
    if (hwloc_bitmap_iszero(set)) hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(t));
    return set;
}

/* The object at depth d that holds all of set, NULL when set spans several (or none). */
static hwloc_obj_t hw_obj_at(hwloc_topology_t t, int d, hwloc_const_bitmap_t set)
{
    int n = hwloc_get_nbobjs_by_depth(t, d);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_depth(t, d, (unsigned)i);
        if (o && o->cpuset && hwloc_bitmap_isincluded(set, o->cpuset)) return o;
    }
    return NULL;
}

/* The type a level name names exactly (hwloc's own parser also takes abbreviations such as
 * "n" that a program did not mean); -1 when it names none. */
static int hw_type(const char *name, hwloc_obj_type_t *ret)
{
    if (!strcasecmp(name, "hwthread")) name = "PU";
    if (!strcasecmp(name, "socket")) name = "Package";
    for (int ty = HWLOC_OBJ_MACHINE; ty < HWLOC_OBJ_TYPE_MAX; ty++)
        if (!strcasecmp(name, hwloc_obj_type_string((hwloc_obj_type_t)ty))) {
            *ret = (hwloc_obj_type_t)ty;
            return 0;
        }
    return -1;
}

/* The smallest object of type ty holding the rank's binding (types such as Group may sit at
 * several depths), NULL when the binding spans several of them or the machine has none. */
static hwloc_obj_t hw_obj_of_type(hwloc_topology_t t, hwloc_obj_type_t ty, hwloc_const_bitmap_t set)
{
    int d = hwloc_get_type_depth(t, ty);
    if (d == HWLOC_TYPE_DEPTH_UNKNOWN) return NULL;
    if (d != HWLOC_TYPE_DEPTH_MULTIPLE) return hw_obj_at(t, d, set);
    hwloc_obj_t best = NULL;
    for (d = 0; d < hwloc_topology_get_depth(t); d++)
        if (hwloc_get_depth_type(t, d) == ty) {
            hwloc_obj_t o = hw_obj_at(t, d, set);
            if (o) best = o;
        }
    return best;
}

/* A member's resource as a key of (node, object): HW_NONE when it is within no resource of
 * the level.  HW_GUIDED turns the members' keys into dense colours (hw_dense_color). */
#define HW_NONE INT64_MIN
#define HW_KEY_NODE(node) ((int64_t)(node) << 40)
/* Above every object's logical index: the carrier a rank runs on (hw_key) */
#define HW_KEY_CARRIER ((int64_t)1 << 32)

/* The key of the rank's resource named name, HW_NONE when the rank is not within one such
 * resource or name names none.  A carried rank whose carrier is not pinned within one object
 * of the level (the default when the ranks oversubscribe the node, job_bind.h) shares the
 * carrier's CPU, whichever it is, with the carrier's other ranks and with nobody else at any
 * moment: its resource is the carrier (the thread's kernel id), so that the ranks that share
 * a core share the communicator. */
static int64_t hw_key(struct tm_rank *me, hwloc_topology_t t, hwloc_const_bitmap_t set,
                      const char *name)
{
    int node = me->info ? me->info->node : 0;
    if (!strcasecmp(name, HW_SHARED)) return HW_KEY_NODE(node);
    hwloc_obj_type_t ty;
    if (!t || !set || hw_type(name, &ty) < 0) return HW_NONE;
    if (hwloc_get_type_depth(t, ty) == HWLOC_TYPE_DEPTH_UNKNOWN) return HW_NONE;
    hwloc_obj_t o = hw_obj_of_type(t, ty, set);
    if (o) return HW_KEY_NODE(node) + (int64_t)o->logical_index;
    if (me->info && me->info->carried)
        return HW_KEY_NODE(node) + HW_KEY_CARRIER + (int64_t)syscall(SYS_gettid);
    return HW_NONE;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int dense_index(const int64_t *keys, int n, int64_t key);

/* The colour of key among the keys of over's members (all of them gathered): the index of
 * key among their distinct values, MPI_UNDEFINED for HW_NONE.  Collective over over. */
static int hw_dense_color(struct tm_rank *me, const char *fn, MPI_Comm over, int64_t key,
                          int *ret_color)
{
    int n = 0;
    PMPI_Comm_size(over, &n);
    int64_t *all = malloc((size_t)n * sizeof *all);
    if (!all) return tm_err(me, over, MPI_ERR_NO_MEM, fn, "out of memory");
    int err = PMPI_Allgather(&key, 1, MPI_INT64_T, all, 1, MPI_INT64_T, over);
    if (!err) {
        qsort(all, (size_t)n, sizeof *all, cmp_i64);
        *ret_color = dense_index(all, n, key);
    }
    free(all);
    return err;
}

/* A level's key (hw_key) and name for MPI_COMM_TYPE_HW_UNGUIDED: level 0 is the node, level
 * k the hwloc depth k below the machine; HW_NONE past the machine's levels. */
static int64_t hw_level(struct tm_rank *me, hwloc_topology_t t, hwloc_const_bitmap_t set, int k,
                        const char **ret_name)
{
    *ret_name = HW_SHARED;
    int node = me->info ? me->info->node : 0;
    if (k == 0) return HW_KEY_NODE(node);
    if (!t || !set || k >= hwloc_topology_get_depth(t)) return HW_NONE;
    *ret_name = hwloc_obj_type_string(hwloc_get_depth_type(t, k));
    hwloc_obj_t o = hw_obj_at(t, k, set);
    if (o) return HW_KEY_NODE(node) + (int64_t)o->logical_index;
    if (me->info && me->info->carried)
        return HW_KEY_NODE(node) + HW_KEY_CARRIER + (int64_t)syscall(SYS_gettid);
    return HW_NONE;
}

/* A member that passed MPI_UNDEFINED while the others asked for MPI_COMM_TYPE_HW_UNGUIDED:
 * it takes part in choosing the level but is in no group (below HW_NONE: sorts first). */
#define HW_OUT (INT64_MIN + 1)

/* Whether keys (n of them, sorted here) split the members that take part (all but HW_OUT)
 * into groups each strictly smaller than all of them, every one of them in a group. */
static int strict_split(int64_t *keys, int n)
{
    qsort(keys, (size_t)n, sizeof *keys, cmp_i64);
    int first = 0;
    while (first < n && (keys[first] == HW_NONE || keys[first] == HW_OUT))
        if (keys[first++] == HW_NONE) return 0; /* a member in no resource of the level */
    int m = n - first;
    if (m < 2) return 0;
    int run = 1;
    for (int i = first + 1; i < n; i++) {
        run = keys[i] == keys[i - 1] ? run + 1 : 1;
        if (run == m) return 0;
    }
    return 1;
}

/* The colour of key among sorted keys (n): the index of its value among the distinct values
 * that name a resource; MPI_UNDEFINED for one that names none. */
static int dense_index(const int64_t *keys, int n, int64_t key)
{
    if (key == HW_NONE || key == HW_OUT) return MPI_UNDEFINED;
    int color = 0;
    for (int i = 0; i < n && keys[i] != key; i++)
        color += keys[i] != HW_NONE && keys[i] != HW_OUT && (i == 0 || keys[i] != keys[i - 1]);
    return color;
}

/* Sets key = value on newcomm's info (MPI_Comm_get_info shows it). */
static int set_hint(MPI_Comm newcomm, const char *value)
{
    MPI_Info in;
    int err = PMPI_Info_create(&in);
    if (err) return err;
    err = PMPI_Info_set(in, HW_KEY, value);
    if (!err) err = PMPI_Comm_set_info(newcomm, in);
    PMPI_Info_free(&in);
    return err;
}

/* 32 bits of FNV-1a over the split type and the level asked for (case-insensitive): what the
 * members must agree on.  MPI_UNDEFINED asks nothing (INT64_MIN: no maximum changes). */
static int64_t ask_hash(int split_type, const char *value)
{
    if (split_type == MPI_UNDEFINED) return INT64_MIN;
    uint32_t h = 2166136261u ^ (uint32_t)split_type;
    h *= 16777619u;
    for (const char *p = value ? value : ""; *p; p++) {
        h ^= (unsigned char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        h *= 16777619u;
    }
    return (int64_t)h + (value ? 1 : 0);
}

/* MPI_COMM_TYPE_HW_UNGUIDED's level over the members of over (comm, or both groups of an
 * inter-communicator merged): the first, from the node down, whose resources split them into
 * strict subsets with every member in one, the next smaller resource level (MPI 4.1 §7.4.2).
 * *ret_color this member's resource there (out: the caller passed MPI_UNDEFINED, which asks
 * nothing), *ret_name the level's name; *ret_found 0 when no level does. */
static int unguided_level(struct tm_rank *me, const char *fn, MPI_Comm over, int out,
                          hwloc_topology_t t, hwloc_const_bitmap_t set, int *ret_found,
                          int *ret_color, const char **ret_name)
{
    int n = 0, levels = !out && t ? hwloc_topology_get_depth(t) : 1, maxlev = 0;
    *ret_found = 0;
    PMPI_Comm_size(over, &n);
    int err = PMPI_Allreduce(&levels, &maxlev, 1, MPI_INT, MPI_MAX, over);
    if (err) return err;
    int64_t *keys = malloc((size_t)n * sizeof *keys);
    if (!keys) return tm_err(me, over, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int k = 0; k < maxlev; k++) {
        const char *name = HW_SHARED;
        int64_t mine = out ? HW_OUT : hw_level(me, t, set, k, &name);
        err = PMPI_Allgather(&mine, 1, MPI_INT64_T, keys, 1, MPI_INT64_T, over);
        if (err) break;
        if (!strict_split(keys, n)) continue;
        *ret_found = 1;
        *ret_color = dense_index(keys, n, mine);
        *ret_name = name;
        break;
    }
    free(keys);
    return err;
}

/* MPI_COMM_TYPE_HW_UNGUIDED; out: the caller passed MPI_UNDEFINED (it gets MPI_COMM_NULL).
 * On an inter-communicator (over: both groups merged) the level is the one that splits both
 * groups together, and each new inter-communicator pairs a local group's members of one
 * resource with the remote group's members of the same resource, as MPI_Comm_split pairs
 * colours (MPI_COMM_NULL where the other group has none there).  The level chosen is named by
 * mpi_hw_resource_type in newcomm's info and, as MPICH does and its users read it, in the
 * caller's info object (unless MPI_INFO_NULL). */
static int split_unguided(struct tm_rank *me, const char *fn, struct tm_commref *cr, MPI_Comm comm,
                          MPI_Comm over, int key, int out, hwloc_topology_t t,
                          hwloc_const_bitmap_t set, MPI_Info info, MPI_Comm *newcomm)
{
    int found = 0, color = MPI_UNDEFINED;
    const char *name = HW_SHARED;
    int err = unguided_level(me, fn, over, out, t, set, &found, &color, &name);
    if (err) return err;
    if (!found) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    err = cr->c->inter ? tm_intercomm_split(me, cr, comm, color, key, newcomm)
                       : tm_comm_split(me, fn, comm, color, key, newcomm);
    if (err || *newcomm == MPI_COMM_NULL) return err;
    err = set_hint(*newcomm, name);
    if (!err && info != MPI_INFO_NULL) err = PMPI_Info_set(info, HW_KEY, name);
    return err;
}

TM_API int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_split_type";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED &&
        split_type != MPI_COMM_TYPE_HW_GUIDED && split_type != MPI_COMM_TYPE_HW_UNGUIDED &&
        split_type != MPI_COMM_TYPE_RESOURCE_GUIDED)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "invalid split_type %d", split_type);
    const struct tm_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = tm_info_get(me, info)))
        return tm_err(me, comm, MPI_ERR_INFO, fn, "invalid info %d", info);
    int guided =
        split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_RESOURCE_GUIDED;
    const char *value = guided && in ? tm_info_lookup(in, HW_KEY) : NULL;

    /* The members agree first on the kind and the level: one asked differently gives all of
     * them MPI_COMM_NULL.  A member passing MPI_UNDEFINED asks nothing and follows the
     * others' kind, so it meets their collectives. */
    int64_t mine[2], all[2] = {INT64_MIN, INT64_MIN};
    mine[0] = ask_hash(split_type, value);
    mine[1] = mine[0] == INT64_MIN ? INT64_MIN : -mine[0];
    int kind = split_type;
    /* An inter-communicator agrees over both groups, merged (both ask the same) */
    MPI_Comm over = comm;
    if (cr->c->inter) {
        int err = PMPI_Intercomm_merge(comm, 0, &over);
        if (err) return err;
    }
    int err = PMPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_MAX, over);
    if (!err && all[0] != INT64_MIN && all[0] != -all[1]) {
        if (over != comm) PMPI_Comm_free(&over);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (split_type == MPI_UNDEFINED && all[0] == ask_hash(MPI_COMM_TYPE_HW_UNGUIDED, NULL))
        kind = MPI_COMM_TYPE_HW_UNGUIDED;
    /* A guided split with a level gathers the members' resources (hw_dense_color); a member
     * passing MPI_UNDEFINED meets that collective with no resource. */
    int gather = guided && value;
    if (split_type == MPI_UNDEFINED && all[0] != INT64_MIN &&
        all[0] != ask_hash(MPI_COMM_TYPE_SHARED, NULL) &&
        all[0] != ask_hash(MPI_COMM_TYPE_HW_UNGUIDED, NULL) &&
        all[0] != ask_hash(MPI_COMM_TYPE_HW_GUIDED, NULL) &&
        all[0] != ask_hash(MPI_COMM_TYPE_RESOURCE_GUIDED, NULL))
        gather = 1, kind = MPI_COMM_TYPE_HW_GUIDED;
    if (err || (kind != MPI_COMM_TYPE_HW_UNGUIDED && !gather)) {
        if (over != comm) PMPI_Comm_free(&over);
        if (err) return err;
    }
    if (kind == MPI_COMM_TYPE_SHARED || kind == MPI_UNDEFINED) {
        int color = kind == MPI_UNDEFINED ? MPI_UNDEFINED : (me->info ? me->info->node : 0);
        /* An inter-communicator: each group's members on one node, with the other group's
         * members on that node as the remote group (MPI_COMM_NULL where the other group has
         * none). */
        if (cr->c->inter) return tm_intercomm_split(me, cr, comm, color, key, newcomm);
        return tm_comm_split(me, fn, comm, color, key, newcomm);
    }
    hwloc_topology_t t = hw_topo(me->job);
    hwloc_bitmap_t set = t ? hw_binding(t) : NULL;
    if (kind == MPI_COMM_TYPE_HW_UNGUIDED) {
        err = split_unguided(me, fn, cr, comm, over, key, split_type == MPI_UNDEFINED, t, set, info,
                             newcomm);
        if (over != comm) PMPI_Comm_free(&over);
    } else {
        /* over both groups of an inter-communicator: the colours pair resources across them */
        int color = MPI_UNDEFINED;
        if (gather) {
            int64_t k = value && split_type != MPI_UNDEFINED ? hw_key(me, t, set, value) : HW_NONE;
            err = hw_dense_color(me, fn, over, k, &color);
            if (over != comm) PMPI_Comm_free(&over);
        }
        if (!err && cr->c->inter)
            err = tm_intercomm_split(me, cr, comm, color, key, newcomm);
        else if (!err)
            err = tm_comm_split(me, fn, comm, color, key, newcomm);
        if (!err && *newcomm != MPI_COMM_NULL) err = set_hint(*newcomm, value);
    }
    if (set) hwloc_bitmap_free(set);
    return err;
}
TM_ALIAS(Comm_split_type)

/* Adds key = the logical index of the rank's object at each level it lies within. */
static int hw_info_fill(struct tm_rank *me, MPI_Info in, hwloc_topology_t t,
                        hwloc_const_bitmap_t set)
{
    char v[32];
    snprintf(v, sizeof v, "%d", me->info ? me->info->node : 0);
    int err = PMPI_Info_set(in, HW_SHARED, v);
    for (int d = 1; !err && t && set && d < hwloc_topology_get_depth(t); d++) {
        hwloc_obj_t o = hw_obj_at(t, d, set);
        if (!o) break; /* deeper levels are smaller still */
        snprintf(v, sizeof v, "%u", o->logical_index);
        err = PMPI_Info_set(in, hwloc_obj_type_string(o->type), v);
    }
    /* NUMA nodes are memory beside the levels, not one of them (hwloc 2) */
    hwloc_obj_t numa = t && set ? hw_obj_of_type(t, HWLOC_OBJ_NUMANODE, set) : NULL;
    if (!err && numa) {
        snprintf(v, sizeof v, "%u", numa->logical_index);
        err = PMPI_Info_set(in, hwloc_obj_type_string(HWLOC_OBJ_NUMANODE), v);
    }
    return err;
}

TM_API int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    const char *fn = "MPI_Get_hw_resource_info";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!hw_info) return tm_err_noco(MPI_ERR_ARG, fn, "hw_info is NULL");
    MPI_Info in;
    int err = PMPI_Info_create(&in);
    if (err) return err;
    hwloc_topology_t t = hw_topo(me->job);
    hwloc_bitmap_t set = t ? hw_binding(t) : NULL;
    err = hw_info_fill(me, in, t, set);
    if (set) hwloc_bitmap_free(set);
    if (err) {
        PMPI_Info_free(&in);
        return err;
    }
    *hw_info = in;
    return MPI_SUCCESS;
}
TM_ALIAS(Get_hw_resource_info)
