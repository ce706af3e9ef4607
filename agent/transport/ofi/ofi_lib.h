/* ofi_lib.h — libfabric, opened when the OFI transport is first asked for.  tmpid does not link
 * libfabric: loading it pulls in every provider's libraries (verbs, EFA, PSM, PSM2 ...), whose
 * constructors run in every agent and job host, and one of them (libinfinipath) installs a
 * SIGSEGV handler of its own over the default a rank's crash relies on.  The few calls that
 * are functions (the rest of the API is inline, through the objects' operation tables) are
 * looked up here. */
#ifndef TMPI_AGENT_OFI_LIB_H
#define TMPI_AGENT_OFI_LIB_H

#include <rdma/fabric.h>
#include <stddef.h>

struct ofi_lib {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
};

/* The library's calls, loaded once (any thread); NULL when libfabric.so.1 cannot be loaded, with
 * the loader's reason in why. */
const struct ofi_lib *ofi_lib_get(char *why, size_t why_len);

#endif
