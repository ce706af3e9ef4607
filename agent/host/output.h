/* output.h — a rank's stdout/stderr, cut into lines and sent to the job's launcher.
 *
 * Each stream buffers the tail of an unfinished line; whole lines leave at once as one Output
 * frame.  Lines of one rank keep their order; lines of different ranks never mix mid-line. */
#ifndef TMPI_AGENT_OUTPUT_H
#define TMPI_AGENT_OUTPUT_H

#include <stddef.h>

struct rank;

struct output_stream {
    char *buf;
    size_t len, cap;
};

/* Rank thread only: append data to stream 1 (stdout) or 2 (stderr).  May block while the
 * launcher is slow to read (bounded buffering).  0 or a negative errno; ends the rank if its
 * job is being torn down. */
int output_write(struct rank *r, int stream, const void *data, size_t len);

/* Sends what is left of both streams, ending an unfinished last line with a newline, and
 * frees them. */
void output_flush(struct rank *r);

#endif
