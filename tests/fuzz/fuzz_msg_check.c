/* fuzz_msg_check.c — the job-message validators on their own messages: the first input byte
 * picks SubmitJob, JobAssign or Output, the rest is that message's protobuf body. Reaches the
 * placement and size checks faster than a whole frame would. */
#include "control.pb-c.h"
#include "fuzz.h"
#include "msg_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    char err[256];
    switch (data[0] % 3) {
    case 0: {
        Tmpi__SubmitJob *s = tmpi__submit_job__unpack(NULL, size - 1, data + 1);
        if (s) {
            msg_check_submit(s, err, sizeof err);
            tmpi__submit_job__free_unpacked(s, NULL);
        }
        break;
    }
    case 1: {
        Tmpi__JobAssign *ja = tmpi__job_assign__unpack(NULL, size - 1, data + 1);
        if (ja) {
            msg_check_assign(ja, err, sizeof err);
            tmpi__job_assign__free_unpacked(ja, NULL);
        }
        break;
    }
    default: {
        Tmpi__Output *o = tmpi__output__unpack(NULL, size - 1, data + 1);
        if (o) {
            msg_check_output(o, 64, 1u << 20, err, sizeof err);
            tmpi__output__free_unpacked(o, NULL);
        }
        break;
    }
    }
    return 0;
}
