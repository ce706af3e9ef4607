/* dl_lock.h — dlopen and dlclose under one lock of ours.
 *
 * glibc serialises dlopen and dlclose with a lock inside ld.so that ThreadSanitizer cannot
 * see, so two jobs loading and unloading at once look like races in ld.so's own memory.  Every
 * dlopen and dlclose of a program image (loader.c, image_copy.c) goes through these: the lock
 * costs nothing (they are serialised anyway) and makes the order visible.  Any thread. */
#ifndef TMPI_AGENT_DL_LOCK_H
#define TMPI_AGENT_DL_LOCK_H

#include <stddef.h>
#include <stdint.h>

/* dlopen(path, flags) under the lock; NULL with dlerror() set on failure. */
void *dl_open(const char *path, int flags);

/* Writes the image bytes into a memfd named label and dlopens it (RTLD_NOW | RTLD_LOCAL)
 * under the lock: the memfd (the object's file, to keep open while it is loaded) with *ret the
 * handle, or a negative errno with the reason in err. */
int dl_open_bytes(const uint8_t *bytes, size_t size, const char *label, void **ret, char *err,
                  size_t errlen);

/* dlclose(h) under the lock. */
void dl_close(void *h);

#endif
