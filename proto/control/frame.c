#include "frame.h"
#include "fd_write.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int frame_parse_header(const uint8_t hdr[FRAME_HEADER_SIZE], size_t max, size_t *ret_len)
{
    size_t len = ((size_t)hdr[0] << 24) | ((size_t)hdr[1] << 16) | ((size_t)hdr[2] << 8) | hdr[3];
    if (len == 0) return -EBADMSG;
    if (len > max) return -EMSGSIZE;
    *ret_len = len;
    return 0;
}

/* protobuf-c keeps fields it does not know, to pack them again, but it also keeps a field
 * number 0 (an overlong varint), which no encoder may write: packed again, it makes a frame
 * that does not decode. The coordinator relays members' Output and RankExit by re-encoding
 * them, so such a frame is refused here (found by tests/fuzz/fuzz_frame.c). */
static int unknown_fields_valid(const ProtobufCMessage *m)
{
    for (unsigned i = 0; i < m->n_unknown_fields; i++)
        if (m->unknown_fields[i].tag == 0) return 0;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE) continue;
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)(const void *)(base + f->quantifier_offset) != f->id)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(const void *)(base + f->quantifier_offset);
            ProtobufCMessage *const *v =
                *(ProtobufCMessage *const *const *)(const void *)(base + f->offset);
            for (size_t k = 0; k < n; k++)
                if (!unknown_fields_valid(v[k])) return 0;
        } else {
            const ProtobufCMessage *sub =
                *(const ProtobufCMessage *const *)(const void *)(base + f->offset);
            if (sub && !unknown_fields_valid(sub)) return 0;
        }
    }
    return 1;
}

int frame_message_valid(const ProtobufCMessage *m)
{
    return unknown_fields_valid(m);
}

Tmpi__Envelope *frame_decode(const uint8_t *body, size_t len)
{
    Tmpi__Envelope *env = tmpi__envelope__unpack(NULL, len, body);
    if (!env) return NULL;
    if (env->msg_case == TMPI__ENVELOPE__MSG__NOT_SET || !frame_message_valid(&env->base)) {
        tmpi__envelope__free_unpacked(env, NULL);
        return NULL;
    }
    return env;
}

void frame_free(Tmpi__Envelope *env)
{
    if (env) tmpi__envelope__free_unpacked(env, NULL);
}

int frame_encode(const Tmpi__Envelope *env, size_t max, uint8_t **ret_buf, size_t *ret_len)
{
    size_t len = tmpi__envelope__get_packed_size(env);
    if (len > max || len > UINT32_MAX) return -EMSGSIZE;
    uint8_t *buf = malloc(FRAME_HEADER_SIZE + len);
    if (!buf) return -ENOMEM;
    buf[0] = (uint8_t)(len >> 24);
    buf[1] = (uint8_t)(len >> 16);
    buf[2] = (uint8_t)(len >> 8);
    buf[3] = (uint8_t)len;
    tmpi__envelope__pack(env, buf + FRAME_HEADER_SIZE);
    *ret_buf = buf;
    *ret_len = FRAME_HEADER_SIZE + len;
    return 0;
}

/* 0, or -ECONNRESET when the stream ends before n bytes (a clean end if none were read). */
static int read_all(int fd, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (r == 0) return -ECONNRESET;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int frame_write_fd(int fd, const Tmpi__Envelope *env, size_t max)
{
    uint8_t *buf;
    size_t len;
    int r = frame_encode(env, max, &buf, &len);
    if (r < 0) return r;
    r = fd_write_all(fd, buf, len);
    free(buf);
    return r;
}

int frame_read_fd(int fd, size_t max, Tmpi__Envelope **ret)
{
    uint8_t hdr[FRAME_HEADER_SIZE];
    size_t len;
    int r = read_all(fd, hdr, sizeof hdr);
    if (r < 0) return r;
    r = frame_parse_header(hdr, max, &len);
    if (r < 0) return r;
    uint8_t *body = malloc(len);
    if (!body) return -ENOMEM;
    r = read_all(fd, body, len);
    if (r < 0) {
        free(body);
        return r == -ECONNRESET ? -EBADMSG : r;
    }
    Tmpi__Envelope *env = frame_decode(body, len);
    free(body);
    if (!env) return -EBADMSG;
    *ret = env;
    return 0;
}

const char *frame_msg_name(const Tmpi__Envelope *env)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(
        &tmpi__envelope__descriptor, (unsigned)env->msg_case);
    return f ? f->name : "unknown";
}
