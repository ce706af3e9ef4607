/* ctl_conn.c — resolve and connect to an agent's Unix control socket. */
#include "ctl_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
