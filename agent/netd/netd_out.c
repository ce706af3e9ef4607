/* netd_out.c — the pieces a frame is written in (netd_out.h). */
#include "netd_out.h"

int netd_out_iov(const struct netd_out *o, struct iovec iov[2])
{
    size_t total = NETD_HDR_SIZE + o->len;
    if (o->done >= total) return 0;
    size_t room = (o->flags & NETD_SEND_WHOLE) ? o->len : NETD_WRITE_MAX;
    int cnt = 0;
    size_t pos = 0; /* payload offset of this write */
    if (o->done < NETD_HDR_SIZE) {
        iov[cnt].iov_base = (void *)(o->hdr + o->done);
        iov[cnt++].iov_len = NETD_HDR_SIZE - o->done;
        if (!o->len) return cnt;
    } else {
        pos = o->done - NETD_HDR_SIZE;
    }
    size_t left = o->len - pos;
    iov[cnt].iov_base = (void *)(o->payload + pos);
    iov[cnt++].iov_len = left < room ? left : room;
    return cnt;
}
