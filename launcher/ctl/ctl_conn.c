/* ctl_conn.c — resolve and connect to an agent's Unix control socket. */
#include "ctl_conn.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tmpi_config.h"

const char *ctl_socket_path(const char *option)
{
    if (option) return option;
    const char *env = getenv("TMPI_AGENT");
    if (env && *env) return env;
    return TMPI_SYSTEM_SOCKET;
}

int ctl_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof sa.sun_path) return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, len + 1);

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    /* connect() on a Unix socket does not return EINTR in practice, but retrying is harmless
     * and keeps a stray signal from turning into "no agent". */
    int r;
    do
        r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static const char *user_name(uid_t uid, char *buf, size_t size)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
        snprintf(buf, size, "%s", res->pw_name);
    else
        snprintf(buf, size, "uid %u", (unsigned)uid);
    return buf;
}

const char *ctl_connect_explain(const char *path, int err, char *buf, size_t size)
{
    struct stat st;
    if (err == -ECONNREFUSED) {
        snprintf(buf, size, "no agent at %s: %s (the socket is left from an agent that stopped)",
                 path, strerror(-err));
    } else if (err == -EACCES || err == -EPERM) {
        /* An agent may well be there: say whose socket it is and why we may not use it. */
        char owner[64], me[64];
        if (stat(path, &st) < 0)
            snprintf(buf, size,
                     "cannot reach the agent's socket %s: a directory on its path is closed to "
                     "you (%s)",
                     path, strerror(errno));
        else
            snprintf(buf, size,
                     "the agent's socket %s belongs to %s (mode %04o) and you (%s) may not "
                     "connect to it: %s. Ask its administrator for access (for example a group "
                     "with write permission on the socket), or name an agent of your own with "
                     "--agent",
                     path, user_name(st.st_uid, owner, sizeof owner),
                     (unsigned)(st.st_mode & 07777), user_name(geteuid(), me, sizeof me),
                     strerror(-err));
    } else {
        snprintf(buf, size, "no agent at %s: %s", path, strerror(-err));
    }
    return buf;
}
