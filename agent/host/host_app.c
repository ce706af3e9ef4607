/* host_app.c — the job host's part of one program of a job (host_app.h). */
#include "host_app.h"

#include <stdlib.h>

struct host_app *host_app_new(void)
{
    struct host_app *h = calloc(1, sizeof *h);
    if (h) h->image.tmpl_fd = -1; /* no template yet (image_share.h) */
    return h;
}

void host_app_free(struct host_app *h)
{
    if (!h) return;
    if (h->image_open) image_program_close(&h->image);
    if (h->args_ready) rank_argv_src_free(&h->args);
    free(h);
}
