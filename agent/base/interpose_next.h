/* interpose_next.h — the libc function an override stands in front of, for the callers that
 * are not ranks (agent threads, unit tests). */
#ifndef TMPI_AGENT_INTERPOSE_NEXT_H
#define TMPI_AGENT_INTERPOSE_NEXT_H

/* The definition of name after tmpid's own (libc's, or a sanitizer's interceptor in front of
 * it), looked up once and kept in *slot; NULL when there is none.  Any thread. */
void *interpose_next(void *_Atomic *slot, const char *name);

/* The next definition of function fn, typed as fn, cached in the struct member slots.fn. */
#define INTERPOSE_NEXT(slots, fn) ((__typeof__(&fn))interpose_next(&(slots).fn, #fn))

#endif
