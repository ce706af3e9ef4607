/* fuzz_mesh_auth.c — the mesh handshake's message checks, on both sides, with attacker bytes
 * in every message: a stranger's HELLO, CHALL and PROOF must never pass the key checks. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mesh_auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mesh_key k;
    static const uint8_t material[32] = "fuzzing key material, 32 bytes!";
    mesh_key_derive(&k, material, sizeof material);

    /* Server side: the peer's HELLO, then its PROOF. */
    uint8_t hello[MESH_HELLO_SIZE] = {0}, chall[MESH_CHALL_SIZE], proof[MESH_PROOF_SIZE] = {0};
    memcpy(hello, data, size < sizeof hello ? size : sizeof hello);
    struct mesh_hs srv;
    memset(&srv, 0, sizeof srv);
    if (mesh_hello_answer(&srv, &k, "server", hello, chall) == 0) {
        if (srv.peer_name[MESH_NAME_SIZE] != '\0') abort();
        size_t off = sizeof hello;
        if (size > off)
            memcpy(proof, data + off, size - off < sizeof proof ? size - off : sizeof proof);
        /* A proof from bytes that never saw the server's fresh nonce cannot be right. */
        if (mesh_proof_check(&srv, &k, proof) == 0) abort();
    }

    /* Client side: the peer's CHALL to a HELLO we made. */
    struct mesh_hs cli;
    uint8_t my_hello[MESH_HELLO_SIZE], in[MESH_CHALL_SIZE] = {0}, out[MESH_PROOF_SIZE];
    mesh_hello_make(&cli, TMPI_CH_CTL, "client", my_hello);
    memcpy(in, data, size < sizeof in ? size : sizeof in);
    if (mesh_chall_answer(&cli, &k, in, out) == 0) abort(); /* the MAC covers a fresh nonce */
    return 0;
}
