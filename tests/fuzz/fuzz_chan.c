/* fuzz_chan.c — a job host's channel as the agent reads it: the host runs as the job's user, so
 * every byte is the attacker's.  The first two bytes set the channel's state (member or not,
 * stdin bytes in flight); the rest is a stream cut into frames exactly as the relay does
 * (header, a frame at most the limit, an unfinished last one waits), each decoded and put to
 * the agent's rules (jobhost_check.h), then to the coordinator's checks of a member's output
 * and rank exits (msg_check.h) and the log's escaping of a HostLog's text (text_escape.h). */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz.h"
#include "jobhost_check.h"
#include "msg_check.h"
#include "text_escape.h"

/* Small, so that the limit is crossed by inputs of fuzzing size. */
#define FUZZ_CHAN_MAX_FRAME 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    struct jobhost_chan_state st = {
        .member = data[0] & 1, .uid = data[0] >> 1, .stdin_inflight = (uint64_t)data[1] * 97};
    size_t off = 2;
    while (size - off >= FRAME_HEADER_SIZE) {
        size_t len;
        if (frame_parse_header(data + off, FUZZ_CHAN_MAX_FRAME, &len) < 0) return 0; /* killed */
        if (size - off - FRAME_HEADER_SIZE < len) return 0; /* waits for the rest */
        Tmpi__Envelope *env = frame_decode(data + off + FRAME_HEADER_SIZE, len);
        off += FRAME_HEADER_SIZE + len;
        if (!env) return 0;
        int ok = jobhost_chan_ok(&st, env);
        if (ok) {
            uint64_t before = st.stdin_inflight;
            (void)jobhost_chan_take(&st, env);
            if (st.stdin_inflight > before) abort(); /* an ack never adds to what is owed */
            char err[256];
            if (env->msg_case == TMPI__ENVELOPE__MSG_OUTPUT)
                (void)msg_check_output(env->output, 64, FUZZ_CHAN_MAX_FRAME, err, sizeof err);
            if (env->msg_case == TMPI__ENVELOPE__MSG_RANK_EXIT)
                (void)msg_check_rank_exit(env->rank_exit, 64, err, sizeof err);
            if (env->msg_case == TMPI__ENVELOPE__MSG_HOST_LOG && env->host_log->message) {
                char out[2048];
                const char *m = env->host_log->message;
                size_t n = text_escape(m, strlen(m), out, sizeof out);
                if (n >= sizeof out) abort();
                for (size_t i = 0; i < n; i++)
                    if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
                        abort(); /* no raw control */
            }
        }
        frame_free(env);
        if (!ok) return 0; /* the host is killed: nothing more is read */
    }
    return 0;
}
