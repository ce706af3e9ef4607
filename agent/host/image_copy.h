/* image_copy.h — private copies of one program made without the dynamic loader.
 *
 * dlopen and dlclose walk every object the process has loaded, so loading one copy per rank
 * that way costs O(ranks) per copy and O(ranks^2) per job (16,384 ranks: most of 16 s).  Here
 * the program is dlopen'ed once, as a "master" copy whose constructors and destructors are
 * removed from its dynamic section so that it never runs: ld.so resolves its relocations
 * (symbol lookup, versions, interposition, IFUNCs) and nothing modifies them afterwards.
 * Every copy then maps the program's segments from the template memfd (image_share.h) at a
 * new base, and writes each relocated word as the master holds it, moved to the new base when
 * it points into the master: what points into the program now points into the copy, what
 * points into libraries stays.  Then its .eh_frame is registered with the unwinder (the copy is
 * no object ld.so knows, and pthread_exit and crash backtraces unwind through its frames) and
 * its constructors run, as ld.so would run them.
 *
 * Images this cannot copy (thread-local variables: the master's TLS module would be shared;
 * text relocations; relocation kinds other than RELATIVE, GLOB_DAT, JUMP_SLOT, 64, IRELATIVE;
 * COPY relocations are left to the caller's fixup)
 * make image_copy_src_open return -ENOTSUP: the caller dlopens each copy instead (loader.h).
 * Only the loading thread touches a source or a copy. */
#ifndef TMPI_AGENT_IMAGE_COPY_H
#define TMPI_AGENT_IMAGE_COPY_H

#include <stddef.h>
#include <stdint.h>

/* Loadable segments a copyable program may have (linkers emit four or five). */
#define IMAGE_COPY_MAX_SEGS 16

struct image_copy_seg {
    uintptr_t vaddr, filesz, memsz;
    uint64_t off;
    int prot;
};

/* One program's master and what a copy needs from it; read-only once opened. */
struct image_copy_src {
    void *master;     /* dl_open handle of the master, or NULL */
    int master_fd;    /* its memfd: open while it is loaded (loader.h) */
    uintptr_t mbias;  /* the master's load bias */
    uintptr_t lo, hi; /* page-aligned span of the loadable segments (file addresses) */
    struct image_copy_seg seg[IMAGE_COPY_MAX_SEGS];
    unsigned nseg;
    uintptr_t relro_lo, relro_hi; /* page-aligned; equal when there is no RELRO */
    uintptr_t eh_frame;           /* address of .eh_frame; 0 when the program has none */
    uintptr_t init, fini;         /* DT_INIT, DT_FINI; 0 when absent */
    uintptr_t init_array, fini_array;
    size_t ninit, nfini;
    int shared_tls;   /* IMAGE_COPY_SHARED_TLS was given and the image has a TLS segment */
    uintptr_t *slots; /* file addresses of every relocated word */
    size_t nslots;
};

/* One copy made by image_copy_make. */
struct image_copy {
    const struct image_copy_src *src; /* NULL: no copy */
    uintptr_t bias;                   /* its load bias */
    void *map;                        /* its reserved span and the span's length */
    size_t len;
    int registered; /* its .eh_frame is registered with the unwinder */
    int finished;   /* its destructors ran */
};

/* Opens the master of the program bytes (an ELF shared object) from a memfd named label and
 * reads what copies need.  0; -ENOTSUP when the image cannot be copied (the reason in err; the
 * caller dlopens each copy); another negative errno with the reason in err (e.g. ld.so's
 * message for an image it refuses).  A failed open leaves nothing to close. */
int image_copy_src_open(struct image_copy_src *src, const uint8_t *bytes, size_t size,
                        const char *label, char *err, size_t errlen);

/* image_copy_src_open with IMAGE_COPY_SHARED_TLS: an image whose thread-local variables are
 * all zero-initialised (.tbss only, reached through __tls_get_addr) is copied too, and every
 * copy reaches the master's TLS module: its thread-local variables are per thread, shared by
 * the copies.  For a library whose thread-local state is its own threads' only (libgfortran's
 * one word is the unit of an asynchronous-I/O thread it starts); the caller decides that. */
#define IMAGE_COPY_SHARED_TLS 1u
int image_copy_src_open_flags(struct image_copy_src *src, const uint8_t *bytes, size_t size,
                              const char *label, unsigned flags, char *err, size_t errlen);

/* The address in a copy with load bias bias of the master's symbol name defined by the
 * program itself (not a library it needs), or NULL. */
void *image_copy_sym(const struct image_copy_src *src, uintptr_t bias, const char *name);

/* Called once a copy's words are relocated, before its RELRO is made read-only and before its
 * constructors run: the caller's last writes (copy relocations, per-rank variables).  mbias
 * is the master's load bias, bias the copy's. */
typedef void (*image_copy_fixup_fn)(void *arg, uintptr_t mbias, uintptr_t bias);

/* Makes one copy: maps the segments from tmpl_fd (the program's template, image_share.h),
 * relocates, calls fixup (may be NULL), registers its unwind information and runs its
 * constructors.  0, or a negative errno with the reason in err and nothing left behind. */
int image_copy_make(const struct image_copy_src *src, int tmpl_fd, image_copy_fixup_fn fixup,
                    void *arg, struct image_copy *ret, char *err, size_t errlen);

/* A copy of another program of the same set (the program and its private libraries): a word
 * of one that points into the other's master is moved to that copy. */
struct image_copy_peer {
    const struct image_copy_src *src;
    uintptr_t bias;
};

/* The three steps of image_copy_make, for a set of copies that point into each other (every
 * bias must be known before any is relocated).  reserve: the copy's span (nothing mapped);
 * fill: segments, relocation (with peers), fixup, RELRO, unwind tables; init: constructors.
 * A failed reserve leaves nothing; after a failed fill, image_copy_free with finished set. */
int image_copy_reserve(const struct image_copy_src *src, struct image_copy *ret, char *err,
                       size_t errlen);
int image_copy_fill(struct image_copy *c, int tmpl_fd, const struct image_copy_peer *peers,
                    size_t npeers, image_copy_fixup_fn fixup, void *arg, char *err, size_t errlen);
void image_copy_init(struct image_copy *c);

/* Has libgcc sort the unwind tables of the copies made so far, now, on the calling thread.
 * libgcc sorts a registered table when a lookup first reaches it, allocating memory, and that
 * first lookup may come from a fault handler (a thread a rank started ends by pthread_exit),
 * where allocating is not safe.  libgcc 12 keeps registered tables in a list, and one lookup
 * that finds nothing sorts them all (O(copies)); a libgcc that looks them up by address range
 * sorts each table at its own first lookup instead.  Call once the copies are made. */
void image_copy_sort_unwind(void);

/* Runs the copy's destructors (atexit handlers it registered, static destructors) once, in
 * the order ld.so runs them at dlclose. */
void image_copy_finish(struct image_copy *c);

/* Finishes the copy if not yet done, deregisters its unwind information and unmaps it.
 * Accepts a copy never made. */
void image_copy_free(struct image_copy *c);

/* Closes the master.  Only after every copy is freed: the copies use the libraries it holds.
 * Accepts a source never opened. */
void image_copy_src_close(struct image_copy_src *src);

#endif
