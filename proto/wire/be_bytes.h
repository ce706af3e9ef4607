/* be_bytes.h — big-endian integers in byte buffers, as every wire header here lays them out.
 * Through memcpy, so a field at any offset of a received frame is read without an unaligned
 * access. */
#ifndef TMPI_PROTO_WIRE_BE_BYTES_H
#define TMPI_PROTO_WIRE_BE_BYTES_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void be_put32(uint8_t *p, uint32_t v)
{
    v = htobe32(v);
    memcpy(p, &v, 4);
}

static inline void be_put64(uint8_t *p, uint64_t v)
{
    v = htobe64(v);
    memcpy(p, &v, 8);
}

static inline uint32_t be_get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return be32toh(v);
}

static inline uint64_t be_get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return be64toh(v);
}

#endif
