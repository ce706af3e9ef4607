/* dlist.h — intrusive circular doubly linked lists with a sentinel head: O(1) append and
 * unlink, which the matching queues need (a message leaves the arrival-order list and its hash
 * chain at once).  Not thread-safe: the owner of the list provides the locking. */
#ifndef TMPI_LIBCLIENT_DLIST_H
#define TMPI_LIBCLIENT_DLIST_H

#include <stddef.h>

struct tm_dl {
    struct tm_dl *prev, *next;
};

#define tm_dl_entry(p, type, member) ((type *)((char *)(p)-offsetof(type, member)))

static inline void tm_dl_init(struct tm_dl *h)
{
    h->prev = h->next = h;
}
static inline int tm_dl_empty(const struct tm_dl *h)
{
    return h->next == h;
}

static inline void tm_dl_append(struct tm_dl *h, struct tm_dl *n)
{
    n->prev = h->prev;
    n->next = h;
    h->prev->next = n;
    h->prev = n;
}

static inline void tm_dl_unlink(struct tm_dl *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}

#endif
