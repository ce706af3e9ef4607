/* Host files and -H: every accepted form, merging, every error with FILE:LINE, the limits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "errcheck.h"
#include "hostfile.h"

/* Parse text as the host file "hosts". */
static int parse(const char *text, size_t len, struct hostlist *l, struct errlist *e)
{
    FILE *f = fmemopen((void *)text, len, "r");
    CHECK(f);
    int r = hostfile_parse_stream(f, "hosts", l, e);
    fclose(f);
    return r;
}
#define PARSE(text, l, e) parse((text), strlen(text), (l), (e))

static void check_host(const struct hostlist *l, size_t i, const char *name, unsigned port,
                       unsigned slots, unsigned max)
{
    CHECK(i < l->n);
    if (strcmp(l->hosts[i].name, name) != 0) {
        fprintf(stderr, "host %zu: expected name %s, got %s\n", i, name, l->hosts[i].name);
        exit(1);
    }
    CHECK_EQ(l->hosts[i].port, port);
    CHECK_EQ(l->hosts[i].slots, slots);
    CHECK_EQ(l->hosts[i].max_slots, max);
}

static void test_forms(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    const char *text = "# a cluster\n"
                       "\n"
                       "node01 slots=4\n"
                       "node02\tslots=2   port=7471   # agent on another port\n"
                       "   \t  \n"
                       "node03 port=7000 slots=8 max_slots=16\n"
                       "node04:6\n"
                       "node05:3 port=7472\n"
                       "node06\n"
                       "10.0.0.7 slots=2\n"
                       "[2001:DB8:0:0::1] slots=2\n"
                       "[::1]:5\r\n"
                       "node01 slots=2\n" /* merged with line 3 */
                       "NODE04 slots=1\n" /* names compare without case */
                       "node02 slots=1\n" /* port 7470: not line 4's node02 */
                       "gpu_7.example.org slots=1#no blank before the comment\n"
                       "node08 slots=1048576";
    CHECK_EQ(PARSE(text, &l, &e), 0);
    CHECK_ERRORS(&e);
    CHECK_EQ(l.n, 12);
    check_host(&l, 0, "node01", 7470, 6, 0);
    check_host(&l, 1, "node02", 7471, 2, 0);
    check_host(&l, 2, "node03", 7000, 8, 16);
    check_host(&l, 3, "node04", 7470, 7, 0);
    check_host(&l, 4, "node05", 7472, 3, 0);
    check_host(&l, 5, "node06", 7470, 1, 0);
    check_host(&l, 6, "10.0.0.7", 7470, 2, 0);
    check_host(&l, 7, "2001:db8::1", 7470, 2, 0);
    CHECK(l.hosts[7].ipv6 && !l.hosts[6].ipv6);
    check_host(&l, 8, "::1", 7470, 5, 0);
    check_host(&l, 9, "node02", 7470, 1, 0);
    check_host(&l, 10, "gpu_7.example.org", 7470, 1, 0);
    check_host(&l, 11, "node08", 7470, 1u << 20, 0);
    CHECK_EQ(hostlist_total_slots(&l), 6 + 2 + 8 + 7 + 3 + 1 + 2 + 2 + 5 + 1 + 1 + (1 << 20));
    char buf[64];
    hostlist_format(&l.hosts[8], buf, sizeof buf);
    CHECK(strcmp(buf, "[::1]:7470") == 0);
    hostlist_format(&l.hosts[1], buf, sizeof buf);
    CHECK(strcmp(buf, "node02:7471") == 0);
    hostlist_free(&l);
    errlist_free(&e);
}

static void test_max_slots_merge(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    /* both bounded: bounds add; one unbounded: the merged host is unbounded */
    CHECK_EQ(PARSE("a slots=1 max_slots=2\na slots=2 max_slots=3\n"
                   "b slots=1 max_slots=1\nb slots=1\n",
                   &l, &e),
             0);
    check_host(&l, 0, "a", 7470, 3, 5);
    check_host(&l, 1, "b", 7470, 2, 0);
    hostlist_free(&l);
    errlist_free(&e);
}

/* Every problem of every line is reported, in file order, as FILE:LINE: what. */
static void test_errors(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    const char *text = "node01 slots=0\n"
                       "node02 slots=x port=99999\n"
                       "  slots=3\n"
                       "node04 slots=2 junk\n"
                       "node05 foo=1\n"
                       ":4\n"
                       "[]\n"
                       "fe80::1 slots=2\n"
                       "1.2.3.999\n"
                       "n!x\n"
                       "node06 slots=2 slots=3\n"
                       "node07 max_slots=1 slots=2\n"
                       "node08 port=0\n"
                       "node09 port=\n"
                       "node10 slots=-1\n"
                       "node11 slots=+2\n"
                       "node12 slots=2000000\n"
                       "node13:0\n"
                       "node14:\n"
                       "[::1]x\n"
                       "[zz::1]:2\n"
                       "-node\n"
                       "node15 =3\n"
                       "node16 port=1 port=2\n"
                       "node17 max_slots=0\n"
                       "node18 slots=99999999999999999999999\n"
                       "good slots=1\n";
    CHECK_EQ(PARSE(text, &l, &e), -EINVAL);
    CHECK_ERRORS(
        &e, "hosts:1: slots=0: not a positive integer", "hosts:2: slots=x: not a positive integer",
        "hosts:2: port=99999: not a port number (1..65535)",
        "hosts:3: empty host name: the line starts with 'slots=3'",
        "hosts:4: unexpected 'junk' (settings are KEY=VALUE)",
        "hosts:5: unknown key 'foo' (expected slots, max_slots or port)",
        "hosts:6: empty host name", "hosts:7: empty host name",
        "hosts:8: 'fe80::1': IPv6 addresses must be written in brackets, e.g. [fe80::1]",
        "hosts:9: '1.2.3.999': not an IPv4 address",
        "hosts:10: 'n!x': bad host name: only letters, digits, '.', '-' and '_' are "
        "allowed",
        "hosts:11: slots given twice", "hosts:12: max_slots=1 is less than slots=2",
        "hosts:13: port=0: not a port number (1..65535)",
        "hosts:14: port=: not a port number (1..65535)",
        "hosts:15: slots=-1: not a positive integer", "hosts:16: slots=+2: not a positive integer",
        "hosts:17: slots=2000000: at most 1048576 slots per host",
        "hosts:18: node13:0: the slots after ':' must be a positive integer",
        "hosts:19: node14:: the slots after ':' must be a positive integer",
        "hosts:20: unexpected 'x' after the IPv6 address",
        "hosts:21: '[zz::1]': not an IPv6 address in brackets",
        "hosts:22: '-node': bad host name: it must start with a letter or a digit",
        "hosts:23: '=3': a setting needs a key before '='", "hosts:24: port given twice",
        "hosts:25: max_slots=0: not a positive integer",
        "hosts:26: slots=99999999999999999999999: at most 1048576 slots per host");
    hostlist_free(&l);
    errlist_free(&e);
}

static void test_file_level(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    CHECK_EQ(PARSE("# only comments\n\n   \n", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "hosts: no hosts in the file");
    errlist_free(&e);
    CHECK_EQ(PARSE("", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "hosts: no hosts in the file");
    errlist_free(&e);

    CHECK_EQ(hostfile_parse("/nonexistent/hosts", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "/nonexistent/hosts: No such file or directory");
    errlist_free(&e);

    /* a NUL byte in a line */
    CHECK_EQ(parse("a slots=1\nb\0 slots=1\n", 21, &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "hosts:2: the line contains a NUL byte");
    hostlist_free(&l);
    errlist_free(&e);

    /* through a real file */
    char path[] = "/tmp/tmpi-test-hosts-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("x slots=2\ny bad\n", f);
    fclose(f);
    CHECK_EQ(hostfile_parse(path, &l, &e), -EINVAL);
    char want[128];
    snprintf(want, sizeof want, "%s:2: unexpected 'bad' (settings are KEY=VALUE)", path);
    CHECK_ERRORS(&e, want);
    unlink(path);
    hostlist_free(&l);
    errlist_free(&e);
}

static void test_limits(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;

    /* line length: exactly HOSTFILE_MAX_LINE is fine, one more is not */
    char *text = malloc(3 * HOSTFILE_MAX_LINE);
    CHECK(text);
    char *w = text;
    memset(w, ' ', HOSTFILE_MAX_LINE); /* line 1: 4096 characters */
    memcpy(w, "a slots=1", 9);
    w += HOSTFILE_MAX_LINE;
    *w++ = '\n';
    memset(w, ' ', HOSTFILE_MAX_LINE + 1); /* line 2: 4097 characters */
    memcpy(w, "b slots=1", 9);
    w += HOSTFILE_MAX_LINE + 1;
    strcpy(w, "\nc slots=1\n");
    CHECK_EQ(PARSE(text, &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "hosts:2: line longer than 4096 characters");
    CHECK_EQ(l.n, 2); /* a and c: the parse goes on after a bad line */
    hostlist_free(&l);
    errlist_free(&e);
    free(text);

    /* hosts: 65536 distinct ones fit, the next line is refused (once) */
    size_t cap = (HOSTLIST_MAX_HOSTS + 3) * 24;
    text = malloc(cap);
    CHECK(text);
    size_t off = 0;
    for (unsigned i = 0; i < HOSTLIST_MAX_HOSTS + 2; i++)
        off += (size_t)snprintf(text + off, cap - off, "h%u slots=1\n", i);
    off += (size_t)snprintf(text + off, cap - off, "h0 slots=1\n"); /* merging still works */
    CHECK_EQ(PARSE(text, &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "hosts:65537: more than 65536 hosts");
    CHECK_EQ(l.n, HOSTLIST_MAX_HOSTS);
    hostlist_free(&l);
    errlist_free(&e);
    free(text);

    /* slots per host, after merging */
    CHECK_EQ(PARSE("a slots=1048575\na slots=1\n", &l, &e), 0);
    check_host(&l, 0, "a", 7470, 1u << 20, 0);
    hostlist_free(&l);
    CHECK_EQ(PARSE("a slots=1048576\nb\na slots=1\n", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "hosts:3: a: more than 1048576 slots in total");
    hostlist_free(&l);
    errlist_free(&e);

    /* a file of garbage: the first ERRLIST_MAX messages are kept, the rest counted */
    cap = 300 * 8;
    text = malloc(cap);
    CHECK(text);
    off = 0;
    for (int i = 0; i < 300; i++)
        off += (size_t)snprintf(text + off, cap - off, "a b\n");
    CHECK_EQ(PARSE(text, &l, &e), -EINVAL);
    CHECK_EQ(e.n, ERRLIST_MAX);
    CHECK_EQ(e.more, 200);
    CHECK_EQ(errlist_count(&e), 300);
    CHECK(strcmp(e.msg[99], "hosts:100: unexpected 'b' (settings are KEY=VALUE)") == 0);
    char *out;
    size_t outlen;
    FILE *m = open_memstream(&out, &outlen);
    errlist_print(&e, m);
    fclose(m);
    CHECK(strstr(out, "hosts:1: unexpected 'b'") == out);
    CHECK(strstr(out, "\n... and 200 more errors\n"));
    free(out);
    hostlist_free(&l);
    errlist_free(&e);
    free(text);
}

static void test_host_names(void)
{
    char *n;
    bool v6;
    const char *why;
    char longname[300];
    memset(longname, 'a', sizeof longname);
    CHECK_EQ(hostlist_parse_host(longname, 253, &n, &v6, &why), 0);
    free(n);
    CHECK_EQ(hostlist_parse_host(longname, 254, &n, &v6, &why), -EINVAL);
    CHECK(strcmp(why, "host name longer than 253 characters") == 0);
    CHECK_EQ(hostlist_parse_host("192.168.001.2", 13, &n, &v6, &why), -EINVAL); /* octal-looking */
    CHECK_EQ(hostlist_parse_host("1.2.3", 5, &n, &v6, &why), -EINVAL);
    CHECK_EQ(hostlist_parse_host("1node", 5, &n, &v6, &why), 0);
    CHECK(strcmp(n, "1node") == 0 && !v6);
    free(n);
    CHECK_EQ(hostlist_parse_host("[::ffff:1.2.3.4]", 16, &n, &v6, &why), 0);
    CHECK(strcmp(n, "::ffff:1.2.3.4") == 0 && v6);
    free(n);
    CHECK_EQ(hostlist_parse_host("[::1", 4, &n, &v6, &why), -EINVAL);
}

static void test_option(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    CHECK_EQ(hostlist_parse_option(&l, "a,b,a,c:4,[::1]:2,[::2],10.1.1.1:3", &e), 0);
    CHECK_EQ(l.n, 6);
    check_host(&l, 0, "a", 7470, 2, 0);
    check_host(&l, 1, "b", 7470, 1, 0);
    check_host(&l, 2, "c", 7470, 4, 0);
    check_host(&l, 3, "::1", 7470, 2, 0);
    check_host(&l, 4, "::2", 7470, 1, 0);
    check_host(&l, 5, "10.1.1.1", 7470, 3, 0);
    hostlist_free(&l);

    CHECK_EQ(hostlist_parse_option(&l, "a:0,,b:x,fe80::1,c:2000000,d!,[]", &e), -EINVAL);
    CHECK_ERRORS(&e, "-H: a:0: the slots after ':' must be a positive integer",
                 "-H: '': empty host name",
                 "-H: b:x: the slots after ':' must be a positive integer",
                 "-H: 'fe80::1': IPv6 addresses must be written in brackets, e.g. [fe80::1]",
                 "-H: c:2000000: at most 1048576 slots per host",
                 "-H: 'd!': bad host name: only letters, digits, '.', '-' and '_' are allowed",
                 "-H: '[]': empty host name");
    hostlist_free(&l);
    errlist_free(&e);

    CHECK_EQ(hostlist_parse_option(&l, "a,", &e), -EINVAL);
    CHECK_ERRORS(&e, "-H: '': empty host name");
    hostlist_free(&l);
    errlist_free(&e);
}

int main(void)
{
    test_forms();
    test_max_slots_merge();
    test_errors();
    test_file_level();
    test_limits();
    test_host_names();
    test_option();
    puts("host file: ok");
    return 0;
}
