/* attr.c — keyvals and attribute lists for every object kind (attr.h). */
#include "attr.h"

#include <stdlib.h>

#include "job.h"
#include "objs.h"

struct tm_keyval {
    int kind;
    void (*copy)(void); /* NULL: copies nothing */
    void (*del)(void);  /* NULL: nothing to call */
    void *extra;
    int refs;  /* the program's handle (until freed) + attributes holding it (objs lock) */
    int freed; /* the program freed its handle: no new use */
};

/* Keyval k of kind (ref taken when ref), or NULL; with the caller's callbacks copied out. */
static struct tm_keyval *kv_get(struct tm_rank *me, int kind, int k, int live,
                                struct tm_keyval *out)
{
    struct tm_objs *o = me->objs;
    pthread_mutex_lock(&o->lock);
    struct tm_keyval *kv = tm_objtab_get(o->keyvals, TM_KEYVAL_BASE, k);
    if (kv && (kv->kind != kind || (live && kv->freed))) kv = NULL;
    if (kv && out) *out = *kv;
    pthread_mutex_unlock(&o->lock);
    return kv;
}

static void kv_ref(struct tm_rank *me, int k, int delta)
{
    struct tm_objs *o = me->objs;
    pthread_mutex_lock(&o->lock);
    struct tm_keyval *kv = tm_objtab_get(o->keyvals, TM_KEYVAL_BASE, k);
    if (kv) {
        kv->refs += delta;
        if (kv->refs == 0) {
            tm_objtab_del(o->keyvals, TM_KEYVAL_BASE, k);
            free(kv);
        }
    }
    pthread_mutex_unlock(&o->lock);
}

int tm_keyval_create(struct tm_rank *me, int kind, void (*copy)(void), void (*del)(void),
                     void *extra, int *keyval)
{
    struct tm_keyval *kv = malloc(sizeof *kv);
    if (!kv) return MPI_ERR_NO_MEM;
    *kv = (struct tm_keyval){kind, copy, del, extra, 1, 0};
    pthread_mutex_lock(&me->objs->lock);
    int h = tm_objtab_add(&me->objs->keyvals, TM_KEYVAL_BASE, kv);
    pthread_mutex_unlock(&me->objs->lock);
    if (h < 0) {
        free(kv);
        return MPI_ERR_NO_MEM;
    }
    *keyval = h;
    return MPI_SUCCESS;
}

int tm_keyval_free(struct tm_rank *me, int kind, int *keyval)
{
    struct tm_objs *o = me->objs;
    pthread_mutex_lock(&o->lock);
    struct tm_keyval *kv = tm_objtab_get(o->keyvals, TM_KEYVAL_BASE, *keyval);
    int ok = kv && kv->kind == kind, again = ok && kv->freed;
    if (ok) kv->freed = 1;
    pthread_mutex_unlock(&o->lock);
    if (!ok) return MPI_ERR_KEYVAL;
    /* Freed already, and still held by attributes: the handle is still valid (as for get and
     * delete), and the free has nothing more to release. */
    if (again) {
        *keyval = MPI_KEYVAL_INVALID;
        return MPI_SUCCESS;
    }
    /* Attributes still set keep it until they are deleted (MPI 3.1 §6.7.2). */
    kv_ref(me, *keyval, -1);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static int call_del(const struct tm_keyval *kv, int handle, int keyval, void *val)
{
    if (!kv->del) return MPI_SUCCESS;
    /* Every kind's handle is an int: one call shape. */
    return ((MPI_Comm_delete_attr_function *)(void *)kv->del)(handle, keyval, val, kv->extra);
}

int tm_attr_set(struct tm_rank *me, int kind, int handle, struct tm_attr **list, int keyval,
                void *val)
{
    struct tm_keyval kv;
    if (!kv_get(me, kind, keyval, 1, &kv)) return MPI_ERR_KEYVAL;
    for (struct tm_attr *a = *list; a; a = a->next)
        if (a->keyval == keyval) {
            int err = call_del(&kv, handle, keyval, a->val);
            if (err) return err;
            a->val = val;
            return MPI_SUCCESS;
        }
    struct tm_attr *a = malloc(sizeof *a);
    if (!a) return MPI_ERR_NO_MEM;
    *a = (struct tm_attr){NULL, keyval, val};
    struct tm_attr **pp = list;
    while (*pp)
        pp = &(*pp)->next;
    *pp = a;
    kv_ref(me, keyval, 1);
    return MPI_SUCCESS;
}

/* Get and delete take a freed keyval while attributes still hold it: the free takes effect
 * when the last reference goes (MPI 3.1 §6.7.2).  Set takes only a live one. */
int tm_attr_get(struct tm_rank *me, int kind, struct tm_attr *list, int keyval, void **val,
                int *flag)
{
    if (!kv_get(me, kind, keyval, 0, NULL)) return MPI_ERR_KEYVAL;
    *flag = 0;
    for (struct tm_attr *a = list; a; a = a->next)
        if (a->keyval == keyval) {
            *val = a->val;
            *flag = 1;
            break;
        }
    return MPI_SUCCESS;
}

/* Deletes attribute a of *list (delete callback first; on its error nothing changes).  The
 * callback may delete other attributes of the same object (MPI allows it): a is found again
 * from the head afterwards, the links around it may have gone. */
static int del_one(struct tm_rank *me, int kind, int handle, struct tm_attr **list,
                   struct tm_attr *a)
{
    struct tm_keyval kv;
    if (kv_get(me, kind, a->keyval, 0, &kv)) {
        int err = call_del(&kv, handle, a->keyval, a->val);
        if (err) return err;
    }
    struct tm_attr **pp = list;
    while (*pp && *pp != a)
        pp = &(*pp)->next;
    if (!*pp) return MPI_SUCCESS; /* the callback deleted it itself */
    *pp = a->next;
    kv_ref(me, a->keyval, -1);
    free(a);
    return MPI_SUCCESS;
}

int tm_attr_delete(struct tm_rank *me, int kind, int handle, struct tm_attr **list, int keyval)
{
    if (!kv_get(me, kind, keyval, 0, NULL)) return MPI_ERR_KEYVAL;
    for (struct tm_attr **pp = list; *pp; pp = &(*pp)->next)
        if ((*pp)->keyval == keyval) return del_one(me, kind, handle, list, *pp);
    return MPI_SUCCESS;
}

int tm_attr_delete_all(struct tm_rank *me, int kind, int handle, struct tm_attr **list)
{
    /* Last set first: walk to the tail each time (lists are short). */
    while (*list) {
        struct tm_attr **pp = list;
        while ((*pp)->next)
            pp = &(*pp)->next;
        int err = del_one(me, kind, handle, list, *pp);
        if (err) return err;
    }
    return MPI_SUCCESS;
}

void tm_attr_drop_all(struct tm_attr **list)
{
    while (*list) {
        struct tm_attr *a = *list;
        *list = a->next;
        free(a);
    }
}

int tm_attr_copy_all(struct tm_rank *me, int kind, int oldh, struct tm_attr *src,
                     struct tm_attr **dst)
{
    struct tm_attr **tail = dst;
    while (*tail)
        tail = &(*tail)->next;
    for (struct tm_attr *a = src; a; a = a->next) {
        struct tm_keyval kv;
        if (!kv_get(me, kind, a->keyval, 0, &kv) || !kv.copy) continue;
        void *out = NULL;
        int flag = 0;
        int err = ((MPI_Comm_copy_attr_function *)(void *)kv.copy)(oldh, a->keyval, kv.extra,
                                                                   a->val, &out, &flag);
        struct tm_attr *n = NULL;
        if (!err && flag && !(n = malloc(sizeof *n))) err = MPI_ERR_NO_MEM;
        if (err) {
            while (*dst) { /* copies made so far: never seen by the program */
                struct tm_attr *d = *dst;
                *dst = d->next;
                kv_ref(me, d->keyval, -1);
                free(d);
            }
            return err;
        }
        if (!flag) continue;
        *n = (struct tm_attr){NULL, a->keyval, out};
        *tail = n;
        tail = &n->next;
        kv_ref(me, a->keyval, 1);
    }
    return MPI_SUCCESS;
}
