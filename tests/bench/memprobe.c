/* memprobe.c — the machine's memory-copy bandwidth now, for labelling a benchmark series with
 * the machine's state (run.py): copies a 64 MiB buffer into another, beyond every cache, for
 * about SECONDS (argv[1], default 1) and prints "GB/s VALUE".  The VM this runs on flips between
 * a fast and a slow state between runs; a figure is only compared with figures of its state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF (64u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    char *a = malloc(BUF), *b = malloc(BUF);
    if (!a || !b || secs <= 0) {
        fprintf(stderr, "memprobe: %s\n",
                secs <= 0 ? "usage: memprobe [SECONDS > 0]" : "out of memory");
        return 2;
    }
    /* first touch outside the timed part: page faults are not bandwidth */
    memset(a, 1, BUF);
    memset(b, 2, BUF);
    double t0 = now(), t;
    unsigned long long copied = 0;
    do {
        memcpy((copied / BUF) & 1 ? a : b, (copied / BUF) & 1 ? b : a, BUF);
        copied += BUF;
        t = now();
    } while (t - t0 < secs);
    /* keeps the copies observable so the compiler cannot drop them */
    printf("GB/s %.2f check %d\n", (double)copied / (t - t0) / 1e9, a[BUF / 2] + b[BUF / 3]);
    free(a);
    free(b);
    return 0;
}
