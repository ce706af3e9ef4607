/* mesh_auth.h — mutual challenge-response between two agents that share the cluster key.
 *
 * Nothing of a job crosses a connection before both sides proved they hold the key.  The
 * exchange (fixed sizes, so a peer cannot make us buffer much):
 *
 *   client -> server  HELLO:  magic "TMPIMESH", version, channel, client nonce, client name
 *   server -> client  CHALL:  magic, version, server nonce, MAC_k("S", channel, cn, sn), name
 *   client -> server  PROOF:  MAC_k("C", channel, sn, cn)
 *   server -> client  ACK:    1 byte, 1 = accepted
 *
 * MAC is libsodium's crypto_auth (HMAC-SHA-512-256); k is derived from the key file with
 * crypto_generichash.  Each side checks the other's MAC over both fresh nonces, so a replayed
 * or reflected message fails, and the server answers the client's challenge before it asks
 * anything (the client learns early when it talks to a stranger). */
#ifndef TMPI_AGENT_MESH_AUTH_H
#define TMPI_AGENT_MESH_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h" /* the channel a connection says it is */

#define MESH_MAGIC "TMPIMESH"
#define MESH_VERSION 1u
#define MESH_NONCE_SIZE 32
#define MESH_MAC_SIZE 32
#define MESH_KEY_SIZE 32
#define MESH_NAME_SIZE 64

#define MESH_HELLO_SIZE (8 + 4 + 4 + MESH_NONCE_SIZE + MESH_NAME_SIZE)
#define MESH_CHALL_SIZE (8 + 4 + MESH_NONCE_SIZE + MESH_MAC_SIZE + MESH_NAME_SIZE)
#define MESH_PROOF_SIZE MESH_MAC_SIZE
#define MESH_ACK_SIZE 1

struct mesh_key {
    uint8_t k[MESH_KEY_SIZE];
};

/* One side's view of a handshake in progress. */
struct mesh_hs {
    uint32_t channel;
    uint8_t my_nonce[MESH_NONCE_SIZE];
    uint8_t peer_nonce[MESH_NONCE_SIZE];
    char peer_name[MESH_NAME_SIZE + 1];
};

/* Derives the MAC key from the key file's bytes. */
void mesh_key_derive(struct mesh_key *k, const uint8_t *material, size_t len);

/* Client: fills a HELLO for channel, keeping its nonce in hs. */
void mesh_hello_make(struct mesh_hs *hs, uint32_t channel, const char *my_name,
                     uint8_t out[MESH_HELLO_SIZE]);
/* Server: checks a HELLO (magic, version, channel) and answers with CHALL.  0 or -EPROTO. */
int mesh_hello_answer(struct mesh_hs *hs, const struct mesh_key *k, const char *my_name,
                      const uint8_t in[MESH_HELLO_SIZE], uint8_t out[MESH_CHALL_SIZE]);
/* Client: verifies the server's MAC and makes the PROOF.  0, -EPROTO (malformed) or -EACCES
 * (the server does not hold the key). */
int mesh_chall_answer(struct mesh_hs *hs, const struct mesh_key *k,
                      const uint8_t in[MESH_CHALL_SIZE], uint8_t out[MESH_PROOF_SIZE]);
/* Server: verifies the client's PROOF.  0 or -EACCES. */
int mesh_proof_check(const struct mesh_hs *hs, const struct mesh_key *k,
                     const uint8_t in[MESH_PROOF_SIZE]);

#endif
