#include "mesh_auth.h"

#include <errno.h>
#include <sodium.h>
#include <string.h>

void mesh_key_derive(struct mesh_key *k, const uint8_t *material, size_t len)
{
    static const uint8_t context[] = "tmpi mesh key v1";
    crypto_generichash(k->k, sizeof k->k, material, len, context, sizeof context - 1);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_name(uint8_t *p, const char *name)
{
    memset(p, 0, MESH_NAME_SIZE);
    size_t n = strlen(name);
    memcpy(p, name, n < MESH_NAME_SIZE ? n : MESH_NAME_SIZE);
}

static void get_name(char out[MESH_NAME_SIZE + 1], const uint8_t *p)
{
    memcpy(out, p, MESH_NAME_SIZE);
    out[MESH_NAME_SIZE] = '\0';
    /* a name is shown in logs: keep it printable */
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e) *c = '?';
}

/* The bytes a MAC covers: role letter, channel, first nonce, second nonce. */
#define MAC_MSG_SIZE (1 + 4 + 2 * MESH_NONCE_SIZE)

static void mac_msg(uint8_t msg[MAC_MSG_SIZE], char role, uint32_t channel,
                    const uint8_t a[MESH_NONCE_SIZE], const uint8_t b[MESH_NONCE_SIZE])
{
    msg[0] = (uint8_t)role;
    put_u32(msg + 1, channel);
    memcpy(msg + 5, a, MESH_NONCE_SIZE);
    memcpy(msg + 5 + MESH_NONCE_SIZE, b, MESH_NONCE_SIZE);
}

static void mac(uint8_t out[MESH_MAC_SIZE], const struct mesh_key *k, char role, uint32_t channel,
                const uint8_t a[MESH_NONCE_SIZE], const uint8_t b[MESH_NONCE_SIZE])
{
    uint8_t msg[MAC_MSG_SIZE];
    mac_msg(msg, role, channel, a, b);
    crypto_auth(out, msg, sizeof msg, k->k);
}

static int mac_ok(const uint8_t m[MESH_MAC_SIZE], const struct mesh_key *k, char role,
                  uint32_t channel, const uint8_t a[MESH_NONCE_SIZE],
                  const uint8_t b[MESH_NONCE_SIZE])
{
    uint8_t msg[MAC_MSG_SIZE];
    mac_msg(msg, role, channel, a, b);
    return crypto_auth_verify(m, msg, sizeof msg, k->k) == 0;
}

void mesh_hello_make(struct mesh_hs *hs, uint32_t channel, const char *my_name,
                     uint8_t out[MESH_HELLO_SIZE])
{
    hs->channel = channel;
    randombytes_buf(hs->my_nonce, MESH_NONCE_SIZE);
    memcpy(out, MESH_MAGIC, 8);
    put_u32(out + 8, MESH_VERSION);
    put_u32(out + 12, channel);
    memcpy(out + 16, hs->my_nonce, MESH_NONCE_SIZE);
    put_name(out + 16 + MESH_NONCE_SIZE, my_name);
}

int mesh_hello_answer(struct mesh_hs *hs, const struct mesh_key *k, const char *my_name,
                      const uint8_t in[MESH_HELLO_SIZE], uint8_t out[MESH_CHALL_SIZE])
{
    if (memcmp(in, MESH_MAGIC, 8) != 0 || get_u32(in + 8) != MESH_VERSION) return -EPROTO;
    uint32_t ch = get_u32(in + 12);
    if (ch != TMPI_CH_P2P && ch != TMPI_CH_COLL && ch != TMPI_CH_CTL) return -EPROTO;
    hs->channel = ch;
    memcpy(hs->peer_nonce, in + 16, MESH_NONCE_SIZE);
    get_name(hs->peer_name, in + 16 + MESH_NONCE_SIZE);
    randombytes_buf(hs->my_nonce, MESH_NONCE_SIZE);
    memcpy(out, MESH_MAGIC, 8);
    put_u32(out + 8, MESH_VERSION);
    memcpy(out + 12, hs->my_nonce, MESH_NONCE_SIZE);
    mac(out + 12 + MESH_NONCE_SIZE, k, 'S', ch, hs->peer_nonce, hs->my_nonce);
    put_name(out + 12 + MESH_NONCE_SIZE + MESH_MAC_SIZE, my_name);
    return 0;
}

int mesh_chall_answer(struct mesh_hs *hs, const struct mesh_key *k,
                      const uint8_t in[MESH_CHALL_SIZE], uint8_t out[MESH_PROOF_SIZE])
{
    if (memcmp(in, MESH_MAGIC, 8) != 0 || get_u32(in + 8) != MESH_VERSION) return -EPROTO;
    memcpy(hs->peer_nonce, in + 12, MESH_NONCE_SIZE);
    if (!mac_ok(in + 12 + MESH_NONCE_SIZE, k, 'S', hs->channel, hs->my_nonce, hs->peer_nonce))
        return -EACCES;
    get_name(hs->peer_name, in + 12 + MESH_NONCE_SIZE + MESH_MAC_SIZE);
    mac(out, k, 'C', hs->channel, hs->peer_nonce, hs->my_nonce);
    return 0;
}

int mesh_proof_check(const struct mesh_hs *hs, const struct mesh_key *k,
                     const uint8_t in[MESH_PROOF_SIZE])
{
    return mac_ok(in, k, 'C', hs->channel, hs->my_nonce, hs->peer_nonce) ? 0 : -EACCES;
}
