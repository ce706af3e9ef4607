/* fuzz_netd_hdr.c — the data-plane header decoder: strict decoding never reads past the 64
 * bytes, and what decodes re-encodes to bytes that decode to the same header. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "netd_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < NETD_HDR_SIZE) return 0;
    size_t max_payload = size > NETD_HDR_SIZE ? data[NETD_HDR_SIZE] * 4096u : 1u << 20;
    struct netd_hdr h;
    if (netd_hdr_decode(data, max_payload, &h) < 0) return 0;
    uint8_t once[NETD_HDR_SIZE], twice[NETD_HDR_SIZE];
    netd_hdr_encode(&h, once);
    struct netd_hdr h2;
    if (netd_hdr_decode(once, max_payload, &h2) < 0) abort();
    netd_hdr_encode(&h2, twice);
    if (memcmp(once, twice, NETD_HDR_SIZE) != 0) abort();
    return 0;
}
