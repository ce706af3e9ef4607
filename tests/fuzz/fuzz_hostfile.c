/* fuzz_hostfile.c — tmpi-launch's host-file parser (HOST slots=N [max_slots=M] [port=P]) and
 * the -H list syntax, split at the first NUL byte of the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errlist.h"
#include "fuzz.h"
#include "hostfile.h"
#include "hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t flen = nul ? (size_t)(nul - data) : size;
    FILE *f = fmemopen((void *)data, flen ? flen : 1, "r");
    if (!f) return 0;
    struct hostlist l;
    memset(&l, 0, sizeof l);
    struct errlist err;
    memset(&err, 0, sizeof err);
    if (flen) hostfile_parse_stream(f, "fuzz", &l, &err);
    fclose(f);
    hostlist_free(&l);
    errlist_free(&err);

    if (nul) {
        size_t hlen = size - flen - 1;
        char *h = malloc(hlen + 1);
        if (!h) return 0;
        memcpy(h, nul + 1, hlen);
        h[hlen] = '\0';
        memset(&l, 0, sizeof l);
        memset(&err, 0, sizeof err);
        hostlist_parse_option(&l, h, &err);
        hostlist_free(&l);
        errlist_free(&err);
        free(h);
    }
    return 0;
}
