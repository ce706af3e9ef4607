/* fuzz_proto.c — protobuf-c's decoding of each of our messages on its own, not only inside an
 * Envelope: the first byte picks one of every message type reachable from Envelope (found by
 * walking the descriptors, so a new message is fuzzed without a list to update), the rest is
 * its body.  What decodes and passes the frame's own check (frame_message_valid: what the
 * agent refuses is refused here too) must encode, decode again and encode to the same bytes. */
#include <protobuf-c/protobuf-c.h>
#include <stdlib.h>
#include <string.h>

#include "control.pb-c.h"
#include "frame.h"
#include "fuzz.h"

#define MAX_TYPES 256

static size_t collect(const ProtobufCMessageDescriptor **types, size_t n,
                      const ProtobufCMessageDescriptor *d)
{
    for (size_t i = 0; i < n; i++)
        if (types[i] == d) return n;
    if (n == MAX_TYPES) abort(); /* raise MAX_TYPES */
    types[n++] = d;
    for (unsigned f = 0; f < d->n_fields; f++)
        if (d->fields[f].type == PROTOBUF_C_TYPE_MESSAGE)
            n = collect(types, n, d->fields[f].descriptor);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const ProtobufCMessageDescriptor *types[MAX_TYPES];
    static size_t ntypes;
    if (!ntypes) ntypes = collect(types, 0, &tmpi__envelope__descriptor);
    if (size < 1) return 0;
    const ProtobufCMessageDescriptor *d = types[data[0] % ntypes];
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, size - 1, data + 1);
    if (!m) return 0;
    if (!frame_message_valid(m)) { /* refused as frame_decode refuses it */
        protobuf_c_message_free_unpacked(m, NULL);
        return 0;
    }
    if (!protobuf_c_message_check(m)) abort(); /* decoded, so every required part is there */
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *a = malloc(len ? len : 1);
    if (!a || protobuf_c_message_pack(m, a) != len) abort();
    ProtobufCMessage *again = protobuf_c_message_unpack(d, NULL, len, a);
    if (!again) abort();
    size_t len2 = protobuf_c_message_get_packed_size(again);
    uint8_t *b = malloc(len2 ? len2 : 1);
    if (!b || protobuf_c_message_pack(again, b) != len2 || len2 != len || memcmp(a, b, len) != 0)
        abort();
    free(a);
    free(b);
    protobuf_c_message_free_unpacked(again, NULL);
    protobuf_c_message_free_unpacked(m, NULL);
    return 0;
}
