/* binding.c — hwloc topology, thread pinning and the report line (binding.h). */
#include "binding.h"

#include <errno.h>
#include <hwloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bind_topo {
    hwloc_topology_t topo;
    hwloc_bitmap_t allowed; /* the CPUs the job may use: "not bound" means exactly these */
};

static hwloc_obj_type_t obj_type(enum bind_kind kind)
{
    switch (kind) {
    case BIND_KIND_HWTHREAD:
        return HWLOC_OBJ_PU;
    case BIND_KIND_CORE:
        return HWLOC_OBJ_CORE;
    case BIND_KIND_L3CACHE:
        return HWLOC_OBJ_L3CACHE;
    case BIND_KIND_NUMA:
        return HWLOC_OBJ_NUMANODE;
    case BIND_KIND_PACKAGE:
        return HWLOC_OBJ_PACKAGE;
    default:
        return HWLOC_OBJ_MACHINE;
    }
}

const char *bind_kind_name(enum bind_kind kind)
{
    static const char *const names[] = {
        [BIND_KIND_NONE] = "none", [BIND_KIND_HWTHREAD] = "hwthread",
        [BIND_KIND_CORE] = "core", [BIND_KIND_L3CACHE] = "l3cache",
        [BIND_KIND_NUMA] = "numa", [BIND_KIND_PACKAGE] = "package",
    };
    if ((int)kind < BIND_KIND_NONE || kind > BIND_KIND_PACKAGE) return NULL;
    return names[kind];
}

void bind_topo_free(struct bind_topo *t)
{
    if (!t) return;
    if (t->allowed) hwloc_bitmap_free(t->allowed);
    if (t->topo) hwloc_topology_destroy(t->topo);
    free(t);
}

int bind_topo_load(struct bind_topo **ret)
{
    *ret = NULL;
    struct bind_topo *t = calloc(1, sizeof *t);
    if (!t) return -ENOMEM;
    int r = -ENOMEM;
    if (hwloc_topology_init(&t->topo) < 0) {
        t->topo = NULL;
        goto err;
    }
#if HWLOC_API_VERSION >= 0x00020800
    /* what binding never looks at (it is loaded at every job's start: ~3 ms of CPU here) */
    hwloc_topology_set_flags(t->topo, HWLOC_TOPOLOGY_FLAG_NO_DISTANCES |
                                          HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS |
                                          HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS);
#endif
    r = -EIO;
    if (hwloc_topology_load(t->topo) < 0) goto err;
    r = -ENOMEM;
    t->allowed = hwloc_bitmap_alloc();
    if (!t->allowed) goto err;
    /* hwloc already leaves out CPUs a cgroup cpuset forbids; our own affinity (taskset, or an
     * agent srun bound) narrows it further. */
    if (hwloc_get_cpubind(t->topo, t->allowed, HWLOC_CPUBIND_THREAD) < 0) {
        r = errno ? -errno : -EIO;
        goto err;
    }
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(t->topo);
    hwloc_bitmap_and(t->allowed, t->allowed, all);
    if (hwloc_bitmap_iszero(t->allowed)) {
        r = -ENXIO;
        goto err;
    }
    if (!hwloc_bitmap_isequal(t->allowed, all) &&
        hwloc_topology_restrict(t->topo, t->allowed, 0) < 0) {
        r = errno ? -errno : -EIO;
        goto err;
    }
    *ret = t;
    return 0;
err:
    bind_topo_free(t);
    return r;
}

uint32_t bind_topo_cores(const struct bind_topo *t)
{
    int n = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
    if (n <= 0) n = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PU);
    return n > 0 ? (uint32_t)n : 1;
}

/* A kind the machine lacks (no L3 on some virtual machines, no core level on others) falls
 * back to the enclosing level, so a binding never fails for want of a level. */
static hwloc_obj_type_t present_type(const struct bind_topo *t, enum bind_kind kind)
{
    hwloc_obj_type_t ty = obj_type(kind);
    if (ty == HWLOC_OBJ_CORE && hwloc_get_nbobjs_by_type(t->topo, ty) <= 0) return HWLOC_OBJ_PU;
    if (ty == HWLOC_OBJ_L3CACHE && hwloc_get_nbobjs_by_type(t->topo, ty) <= 0)
        ty = HWLOC_OBJ_PACKAGE;
    if (hwloc_get_nbobjs_by_type(t->topo, ty) <= 0) ty = HWLOC_OBJ_MACHINE;
    return ty;
}

uint32_t bind_topo_count(const struct bind_topo *t, enum bind_kind kind)
{
    if (kind == BIND_KIND_NONE) return 1;
    int n = hwloc_get_nbobjs_by_type(t->topo, present_type(t, kind));
    return n > 0 ? (uint32_t)n : 1;
}

int bind_thread(struct bind_topo *t, enum bind_kind kind, uint32_t index, pthread_t thread)
{
    if (kind == BIND_KIND_NONE) return 0;
    hwloc_obj_type_t ty = present_type(t, kind);
    uint32_t n = bind_topo_count(t, kind);
    hwloc_obj_t o = hwloc_get_obj_by_type(t->topo, ty, index % n);
    if (!o || !o->cpuset) return -ENOENT;
    hwloc_bitmap_t set = hwloc_bitmap_dup(o->cpuset);
    if (!set) return -ENOMEM;
    /* a NUMA node or cache may span CPUs we were not given */
    hwloc_bitmap_and(set, set, t->allowed);
    int r = hwloc_set_thread_cpubind(t->topo, thread, set, 0) < 0 ? (errno ? -errno : -EIO) : 0;
    hwloc_bitmap_free(set);
    return r;
}

/* ---- the report line ---------------------------------------------------------------------- */

struct line {
    char *p;
    size_t len, cap; /* cap keeps room for "..." and the terminator */
    int cut;
};

__attribute__((format(printf, 2, 3))) static void put(struct line *l, const char *fmt, ...)
{
    if (l->cut) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->p + l->len, l->cap - l->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= l->cap - l->len) {
        l->p[l->len] = '\0';
        l->cut = 1;
        return;
    }
    l->len += (size_t)n;
}

/* The logical indices of the objects of type ty inside set, as a list ("0-3,6"). */
static void put_index_list(struct line *l, struct bind_topo *t, hwloc_const_cpuset_t set,
                           hwloc_obj_type_t ty)
{
    hwloc_bitmap_t idx = hwloc_bitmap_alloc();
    if (!idx) {
        put(l, "?");
        return;
    }
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_inside_cpuset_by_type(t->topo, set, ty, o)) != NULL)
        hwloc_bitmap_set(idx, o->logical_index);
    char *s = NULL;
    if (hwloc_bitmap_list_asprintf(&s, idx) < 0 || !s)
        put(l, "?");
    else
        put(l, "%s", s);
    free(s);
    hwloc_bitmap_free(idx);
}

/* The object of type ty whose CPUs are exactly set, or NULL. */
static hwloc_obj_t exact_obj(struct bind_topo *t, hwloc_const_cpuset_t set, hwloc_obj_type_t ty)
{
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t->topo, ty, o)) != NULL)
        if (o->cpuset && hwloc_bitmap_isequal(o->cpuset, set)) return o;
    return NULL;
}

/* What the mask is, in hwloc's terms: an object that has exactly its CPUs ("core 1[hwt 1]",
 * "package 0[core 0-7]"), the kind asked for first (on a one-socket machine the package, its
 * NUMA node and its L3 are the same CPUs), else just its hardware threads. */
static void put_what(struct line *l, struct bind_topo *t, hwloc_const_cpuset_t set,
                     enum bind_kind asked)
{
    static const hwloc_obj_type_t order[] = {HWLOC_OBJ_CORE, HWLOC_OBJ_PU, HWLOC_OBJ_L3CACHE,
                                             HWLOC_OBJ_NUMANODE, HWLOC_OBJ_PACKAGE};
    hwloc_obj_t o = NULL;
    if (asked > BIND_KIND_NONE) o = exact_obj(t, set, obj_type(asked));
    for (size_t i = 0; !o && i < sizeof order / sizeof order[0]; i++)
        o = exact_obj(t, set, order[i]);
    if (!o) {
        put(l, "hwt ");
        put_index_list(l, t, set, HWLOC_OBJ_PU);
        return;
    }
    if (o->type == HWLOC_OBJ_PU || o->type == HWLOC_OBJ_CORE) {
        hwloc_obj_t core = o->type == HWLOC_OBJ_CORE
                               ? o
                               : hwloc_get_ancestor_obj_by_type(t->topo, HWLOC_OBJ_CORE, o);
        if (core) put(l, "core %u[", core->logical_index);
        put(l, "hwt ");
        put_index_list(l, t, set, HWLOC_OBJ_PU);
        if (core) put(l, "]");
        return;
    }
    const char *name = o->type == HWLOC_OBJ_NUMANODE  ? "numa"
                       : o->type == HWLOC_OBJ_PACKAGE ? "package"
                                                      : "l3cache";
    put(l, "%s %u[core ", name, o->logical_index);
    put_index_list(l, t, set,
                   hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE
                                                                         : HWLOC_OBJ_PU);
    put(l, "]");
}

/* One bracket per package, its cores separated by '/', one character per hardware thread:
 * B when set has it. */
static void put_layout(struct line *l, struct bind_topo *t, hwloc_const_cpuset_t set)
{
    int npkg = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PACKAGE);
    int have_cores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE) > 0;
    hwloc_obj_type_t unit = have_cores ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    for (int p = 0; p < (npkg > 0 ? npkg : 1); p++) {
        hwloc_obj_t pkg = npkg > 0 ? hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE, (unsigned)p)
                                   : hwloc_get_root_obj(t->topo);
        if (!pkg || !pkg->cpuset) continue;
        put(l, "[");
        hwloc_obj_t u = NULL;
        int first = 1;
        while ((u = hwloc_get_next_obj_inside_cpuset_by_type(t->topo, pkg->cpuset, unit, u))) {
            if (!first) put(l, "/");
            first = 0;
            hwloc_obj_t pu = NULL;
            while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(t->topo, u->cpuset, HWLOC_OBJ_PU,
                                                                  pu)))
                put(l, "%c", hwloc_bitmap_isset(set, pu->os_index) ? 'B' : '.');
        }
        put(l, "]");
    }
}

int bind_describe(struct bind_topo *t, pthread_t thread, enum bind_kind asked, char *buf,
                  size_t len)
{
    if (len < 8) return -ENOSPC;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) return -ENOMEM;
    if (hwloc_get_thread_cpubind(t->topo, thread, set, 0) < 0) {
        int r = errno ? -errno : -EIO;
        hwloc_bitmap_free(set);
        return r;
    }
    struct line l = {.p = buf, .cap = len - 4};
    buf[0] = '\0';
    /* A mask wider than ours (the host's CPUs we were not given) is no binding either; one of
     * exactly our CPUs is, when it is the object asked for (--bind-to package on a machine of
     * one package). */
    int whole = hwloc_bitmap_isincluded(t->allowed, set);
    if (whole && asked > BIND_KIND_NONE && exact_obj(t, t->allowed, present_type(t, asked)))
        whole = 0;
    if (whole) {
        hwloc_bitmap_copy(set, t->allowed);
        put(&l, "not bound: ");
    } else {
        hwloc_bitmap_and(set, set, t->allowed);
        put(&l, "bound to ");
        put_what(&l, t, set, asked);
        put(&l, ": ");
    }
    put_layout(&l, t, set);
    char *cpus = NULL;
    if (hwloc_bitmap_list_asprintf(&cpus, set) >= 0 && cpus) put(&l, " (cpus %s)", cpus);
    free(cpus);
    if (l.cut) strcpy(buf + l.len, "...");
    hwloc_bitmap_free(set);
    return 0;
}
