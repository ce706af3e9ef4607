/* fuzz_frame.c — the control-plane frame: header, decode, the job-message checks the agent
 * runs on what decodes, and re-encoding of what decoded. */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz.h"
#include "msg_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < FRAME_HEADER_SIZE) return 0;
    size_t len;
    if (frame_parse_header(data, FRAME_DEFAULT_MAX, &len) < 0) return 0;
    size_t body = size - FRAME_HEADER_SIZE;
    if (len > body) len = body;
    Tmpi__Envelope *env = frame_decode(data + FRAME_HEADER_SIZE, len);
    if (!env) return 0;
    char err[256];
    (void)frame_msg_name(env);
    switch (env->msg_case) {
    case TMPI__ENVELOPE__MSG_SUBMIT:
        msg_check_submit(env->submit, err, sizeof err);
        break;
    case TMPI__ENVELOPE__MSG_JOB_ASSIGN:
        msg_check_assign(env->job_assign, err, sizeof err);
        break;
    case TMPI__ENVELOPE__MSG_OUTPUT:
        msg_check_output(env->output, 1024, FRAME_DEFAULT_MAX, err, sizeof err);
        break;
    case TMPI__ENVELOPE__MSG_RANK_EXIT:
        msg_check_rank_exit(env->rank_exit, 1024, err, sizeof err);
        break;
    case TMPI__ENVELOPE__MSG_SIGNAL_JOB:
        msg_check_signal(env->signal_job, err, sizeof err);
        break;
    default:
        break;
    }
    uint8_t *out;
    size_t out_len;
    if (frame_encode(env, FRAME_DEFAULT_MAX, &out, &out_len) == 0) {
        /* What decoded re-encodes to a frame that decodes again. */
        size_t l2;
        if (frame_parse_header(out, FRAME_DEFAULT_MAX, &l2) < 0 ||
            l2 + FRAME_HEADER_SIZE != out_len)
            abort();
        Tmpi__Envelope *again = frame_decode(out + FRAME_HEADER_SIZE, l2);
        if (!again || again->msg_case != env->msg_case) abort();
        frame_free(again);
        free(out);
    }
    frame_free(env);
    return 0;
}
