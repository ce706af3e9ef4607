/* Mesh authentication: agents sharing a key accept each other; a wrong key fails on both
 * sides; tampering, replays and malformed messages are refused; key files are checked. */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "keyfile.h"
#include "mesh_auth.h"

static struct mesh_key key_of(const char *s)
{
    struct mesh_key k;
    mesh_key_derive(&k, (const uint8_t *)s, strlen(s));
    return k;
}

/* Runs a full exchange; returns 0 if both sides accepted, else which side refused. */
static int exchange(const struct mesh_key *kc, const struct mesh_key *ks, int *ret_client_rc,
                    int *ret_server_rc)
{
    struct mesh_hs c = {0}, s = {0};
    uint8_t hello[MESH_HELLO_SIZE], chall[MESH_CHALL_SIZE], proof[MESH_PROOF_SIZE];
    mesh_hello_make(&c, TMPI_CH_P2P, "client-node", hello);
    CHECK(mesh_hello_answer(&s, ks, "server-node", hello, chall) == 0);
    CHECK(strcmp(s.peer_name, "client-node") == 0);
    *ret_client_rc = mesh_chall_answer(&c, kc, chall, proof);
    if (*ret_client_rc < 0) return 1;
    CHECK(strcmp(c.peer_name, "server-node") == 0);
    *ret_server_rc = mesh_proof_check(&s, ks, proof);
    return *ret_server_rc < 0 ? 2 : 0;
}

static void test_handshake(void)
{
    struct mesh_key a = key_of("0123456789abcdef0123456789abcdef"),
                    b = key_of("another key of 32 bytes at least!");
    int crc = 0, src = 0;
    CHECK_EQ(exchange(&a, &a, &crc, &src), 0);
    /* the client refuses a server without the key before proving anything */
    CHECK_EQ(exchange(&a, &b, &crc, &src), 1);
    CHECK_EQ(crc, -EACCES);

    /* a server refuses a proof made with another key */
    struct mesh_hs c = {0}, s = {0};
    uint8_t hello[MESH_HELLO_SIZE], chall[MESH_CHALL_SIZE], proof[MESH_PROOF_SIZE];
    mesh_hello_make(&c, TMPI_CH_COLL, "c", hello);
    CHECK(mesh_hello_answer(&s, &a, "s", hello, chall) == 0);
    struct mesh_hs c2 = c;
    CHECK(mesh_chall_answer(&c2, &a, chall, proof) == 0);
    uint8_t forged[MESH_PROOF_SIZE];
    memcpy(forged, proof, sizeof forged);
    forged[3] ^= 1;
    CHECK_EQ(mesh_proof_check(&s, &a, forged), -EACCES);
    CHECK_EQ(mesh_proof_check(&s, &a, proof), 0);

    /* a proof replayed into another handshake (fresh server nonce) is refused */
    struct mesh_hs s2 = {0};
    uint8_t chall2[MESH_CHALL_SIZE];
    CHECK(mesh_hello_answer(&s2, &a, "s", hello, chall2) == 0);
    CHECK_EQ(mesh_proof_check(&s2, &a, proof), -EACCES);

    /* the channel is bound into the MACs */
    struct mesh_hs s3 = s;
    s3.channel = TMPI_CH_P2P;
    CHECK_EQ(mesh_proof_check(&s3, &a, proof), -EACCES);

    /* malformed hellos and challenges */
    uint8_t bad[MESH_HELLO_SIZE];
    memcpy(bad, hello, sizeof bad);
    bad[0] = 'X';
    CHECK_EQ(mesh_hello_answer(&s, &a, "s", bad, chall), -EPROTO);
    memcpy(bad, hello, sizeof bad);
    bad[15] = 9; /* channel 9 */
    CHECK_EQ(mesh_hello_answer(&s, &a, "s", bad, chall), -EPROTO);
    uint8_t badc[MESH_CHALL_SIZE];
    memcpy(badc, chall, sizeof badc);
    badc[11] = 7; /* version */
    CHECK_EQ(mesh_chall_answer(&c, &a, badc, proof), -EPROTO);
}

static const char *write_key(const char *bytes, size_t n, mode_t mode)
{
    static char path[64];
    strcpy(path, "/tmp/tmpi-test-key-XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, bytes, n) == (ssize_t)n);
    CHECK(fchmod(fd, mode) == 0);
    close(fd);
    return path;
}

static void test_keyfile(void)
{
    struct mesh_key k;
    char err[256];
    const char *p = write_key("0123456789abcdef0123456789abcdef", 32, 0600);
    CHECK_EQ(keyfile_load(p, &k, err, sizeof err), 0);
    struct mesh_key direct = key_of("0123456789abcdef0123456789abcdef");
    CHECK(memcmp(k.k, direct.k, sizeof k.k) == 0);
    unlink(p);
    p = write_key("short", 5, 0600);
    CHECK_EQ(keyfile_load(p, &k, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "at least 32") != NULL);
    unlink(p);
    p = write_key("0123456789abcdef0123456789abcdef", 32, 0644);
    CHECK_EQ(keyfile_load(p, &k, err, sizeof err), -EPERM);
    CHECK(strstr(err, "other users") != NULL);
    unlink(p);
    CHECK_EQ(keyfile_load("/nonexistent/key", &k, err, sizeof err), -ENOENT);
    CHECK_EQ(keyfile_load("/tmp", &k, err, sizeof err) < 0, 1);
}

/* key_read(text): keyfile_read_fd over a pipe holding text; *ret_left: the bytes still in the
 * pipe afterwards (the reader must stop at the newline). */
static int key_read(const char *text, struct mesh_key *k, char *err, size_t errlen,
                    size_t *ret_left)
{
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(write(p[1], text, strlen(text)) == (ssize_t)strlen(text));
    close(p[1]);
    int r = keyfile_read_fd(p[0], k, err, errlen);
    char rest[256];
    ssize_t n = read(p[0], rest, sizeof rest);
    *ret_left = n > 0 ? (size_t)n : 0;
    close(p[0]);
    return r;
}

static void test_key_fd(void)
{
    struct mesh_key k;
    char err[256];
    size_t left;
    /* 32 bytes "0123456789abcdef0123456789abcdef" as hex, then more that is not ours */
    const char *hex = "30313233343536373839616263646566"
                      "30313233343536373839414243444546";
    char text[200];
    snprintf(text, sizeof text, "%s\nrest", hex);
    CHECK_EQ(key_read(text, &k, err, sizeof err, &left), 0);
    CHECK_EQ(left, 4);
    struct mesh_key direct = key_of("0123456789abcdef0123456789ABCDEF");
    CHECK(memcmp(k.k, direct.k, sizeof k.k) == 0);
    /* too short, odd, not hex, no newline, nothing at all */
    CHECK_EQ(key_read("3031\n", &k, err, sizeof err, &left), -EINVAL);
    CHECK(strstr(err, "at least 64") != NULL);
    snprintf(text, sizeof text, "%s3\n", hex);
    CHECK_EQ(key_read(text, &k, err, sizeof err, &left), -EINVAL);
    snprintf(text, sizeof text, "%.62szz\n", hex);
    CHECK_EQ(key_read(text, &k, err, sizeof err, &left), -EINVAL);
    CHECK(strstr(err, "not hexadecimal") != NULL);
    CHECK_EQ(key_read(hex, &k, err, sizeof err, &left), -EIO);
    CHECK(strstr(err, "ended before") != NULL);
    CHECK_EQ(key_read("", &k, err, sizeof err, &left), -EIO);
    /* longer than KEYFILE_MAX bytes */
    static char big[2 * KEYFILE_MAX + 8];
    memset(big, 'a', 2 * KEYFILE_MAX + 2);
    big[2 * KEYFILE_MAX + 2] = '\n';
    int p[2];
    CHECK(pipe(p) == 0);
    /* the pipe holds 64 KiB: the whole line fits */
    CHECK(write(p[1], big, 2 * KEYFILE_MAX + 3) == 2 * KEYFILE_MAX + 3);
    close(p[1]);
    CHECK_EQ(keyfile_read_fd(p[0], &k, err, sizeof err), -EFBIG);
    close(p[0]);
    CHECK_EQ(keyfile_read_fd(-1, &k, err, sizeof err), -EBADF);
}

int main(void)
{
    CHECK(sodium_init() >= 0);
    test_handshake();
    test_keyfile();
    test_key_fd();
    puts("mesh auth: ok");
    return 0;
}
