/* listen_socket.c — where the control socket comes from.
 *
 * Under systemd with tmpid.socket, systemd creates the socket before the agent runs, so tools
 * can connect (and wait in the backlog) while the agent starts or restarts, and the agent
 * never needs the right to create files in /run/tmpid.  Started any other way, the agent binds
 * the path itself as it always did. */
#include "listen_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "log.h"

static int another_agent_answers(const struct sockaddr_un *sun)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    int ok = connect(fd, (const struct sockaddr *)sun, sizeof *sun) == 0;
    close(fd);
    return ok;
}

/* The passed descriptor to use, -ENOENT when systemd passed none, or another error (logged).
 * sd_listen_fds(1) unsets LISTEN_FDS/LISTEN_PID so job hosts never see them, and marks the
 * descriptors close-on-exec. */
static int inherited_socket(const char *path)
{
    int n = sd_listen_fds(1);
    if (n < 0) return log_errno(LOG_ERR, n, "socket activation: LISTEN_FDS");
    if (n == 0) return -ENOENT;
    int found = -1;
    for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
        if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0 && found < 0)
            found = fd;
        else
            close(fd); /* not ours to keep: nothing else in the agent takes passed sockets */
    }
    if (found < 0) {
        log_error("socket activation: none of the %d passed descriptor(s) is a listening Unix "
                  "stream socket (tmpid.socket must have ListenStream=%s)",
                  n, path);
        return -EINVAL;
    }
    if (sd_is_socket_unix(found, SOCK_STREAM, 1, path, 0) <= 0)
        log_warning("socket activation: the passed socket is not bound to %s (the configured "
                    "socket); tools must use the unit's ListenStream path",
                    path);
    int fl = fcntl(found, F_GETFL);
    if (fl < 0 || fcntl(found, F_SETFL, fl | O_NONBLOCK) < 0) {
        int r = -errno;
        close(found);
        return log_errno(LOG_ERR, r, "socket activation: O_NONBLOCK");
    }
    return found;
}

int listen_socket_open(const char *path, int *inherited)
{
    *inherited = 0;
    int fd = inherited_socket(path);
    if (fd >= 0) {
        *inherited = 1;
        log_info("listening on %s (socket passed by systemd)", path);
        return fd;
    }
    if (fd != -ENOENT) return fd;

    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sun.sun_path) {
        log_error("socket path too long: %s", path);
        return -ENAMETOOLONG;
    }
    strcpy(sun.sun_path, path);
    if (another_agent_answers(&sun)) {
        log_error("another agent is already listening on %s", path);
        return -EADDRINUSE;
    }
    (void)unlink(path); /* a stale socket of an agent that died */

    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return log_errno(LOG_ERR, -errno, "socket");
    if (bind(fd, (struct sockaddr *)&sun, sizeof sun) < 0) {
        int r = -errno;
        close(fd);
        return log_errno(LOG_ERR, r, "cannot bind %s", path);
    }
    /* Anyone may connect; what each client may do is decided per request (SO_PEERCRED). */
    if (chmod(path, 0666) < 0) log_errno(LOG_WARNING, -errno, "chmod %s", path);
    log_info("listening on %s", path);
    return fd;
}
