/* host_app.h — the job host's part of one program of a job (struct job_app, jobs/job.h): the
 * argument source its ranks copy their argv from (rank_argv.h) and the image their copies
 * are loaded from (loader.h).  The agent's side of a program knows only its name, arguments,
 * directory and ranks; what the job host makes of it lives here, behind job_app.host.
 *
 * Made by the job host for each program before the job thread starts (job_thread.c) and for
 * each spawned one (job_spawn.c); set up by the job thread (or the spawn) before the ranks
 * start, read by the rank threads after. */
#ifndef TMPI_AGENT_HOST_APP_H
#define TMPI_AGENT_HOST_APP_H

#include "loader.h"
#include "rank_argv.h"

struct host_app {
    struct rank_argv_src args; /* valid once args_ready */
    int args_ready;
    struct image_program image; /* open while image_open */
    int image_open;
};

/* A program's part with nothing set up yet; NULL when out of memory. */
struct host_app *host_app_new(void);

/* Closes the image (if still open), frees the argument source (if made) and h (NULL: none). */
void host_app_free(struct host_app *h);

#endif
