/* host_xjob.c — frames between this job and another job of its user (host_xjob.h). */
#include "host_xjob.h"

#include <errno.h>
#include <pthread.h>
#include <event2/bufferevent.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "frame.h"
#include "job.h"
#include "msg_check.h"

/* The host's channel (the bufferevent is thread-safe: jobhost_main.c open_channel). */
static _Atomic(struct bufferevent *) xchan;

void host_xjob_channel(struct bufferevent *chan)
{
    atomic_store(&xchan, chan);
}

int host_xjob_send(uint64_t to_job, uint32_t to_node, const void *hdr, size_t hlen,
                   const void *payload, size_t len)
{
    if (hlen > MSG_XFRAME_HDR_MAX || len > MSG_XFRAME_PAYLOAD_MAX) return -EMSGSIZE;
    struct bufferevent *chan = atomic_load(&xchan);
    if (!chan) return -EPIPE;
    Tmpi__XFrame f = TMPI__XFRAME__INIT;
    f.to_job = to_job;
    f.to_node = to_node;
    f.hdr.data = (uint8_t *)hdr;
    f.hdr.len = hlen;
    f.payload.data = (uint8_t *)payload;
    f.payload.len = len;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_XFRAME;
    env.xframe = &f;
    uint8_t *buf;
    size_t n;
    int rc = frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &n);
    if (rc < 0) return rc;
    /* one write per frame: frames of concurrent senders never interleave */
    rc = bufferevent_write(chan, buf, n) < 0 ? -EPIPE : 0;
    free(buf);
    return rc;
}

/* client_mu held across the upcall: the job thread destroys libtmpi's state under it (and
 * unloads libtmpi after; job_thread.c), so a frame that comes as the job ends never reaches
 * freed state or unmapped code. */
static void up(struct job *j, uint64_t from, const void *hdr, size_t hlen, const void *p,
               size_t len, const char *reason)
{
    if (!j) return;
    pthread_mutex_lock(&j->client_mu);
    if (j->client_created && j->client_ops.xjob_frame)
        j->client_ops.xjob_frame(j->client_state, from, hdr, hlen, p, len, reason);
    pthread_mutex_unlock(&j->client_mu);
}

void host_xjob_frame(struct job *j, const Tmpi__XFrame *f)
{
    up(j, f->from_job, f->hdr.data, f->hdr.len, f->payload.data, f->payload.len, NULL);
}

void host_xjob_gone(struct job *j, const Tmpi__XGone *g)
{
    up(j, g->job, NULL, 0, NULL, 0, g->reason ? g->reason : "the job is gone");
}
