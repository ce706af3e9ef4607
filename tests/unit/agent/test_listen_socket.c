/* listen_socket.c: where the control socket comes from.  Bound here: a listening,
 * non-blocking, close-on-exec socket anyone may connect to; a path too long for sun_path,
 * and a path another agent answers on, refused; a stale socket file replaced.  Passed by
 * systemd (LISTEN_PID/LISTEN_FDS, fd 3): that one is used, marked inherited, made
 * non-blocking and the variables are unset; a passed descriptor that is no listening Unix
 * stream socket is refused and closed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../check.h"
#include "listen_socket.h"
#include "log.h"

static char dir[] = "/tmp/test_listen.XXXXXX";

static int can_connect(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
    int ok = connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0;
    close(fd);
    return ok;
}

/* A listening socket at path, moved to fd 3 (SD_LISTEN_FDS_START) as systemd passes it. */
static void pass_fd3(int fd)
{
    if (fd != 3) {
        CHECK_EQ(dup2(fd, 3), 3);
        close(fd);
    }
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    CHECK_EQ(setenv("LISTEN_PID", pid, 1), 0);
    CHECK_EQ(setenv("LISTEN_FDS", "1", 1), 0);
}

static int unix_listener(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
    CHECK_EQ(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
    CHECK_EQ(listen(fd, 8), 0);
    return fd;
}

int main(void)
{
    log_set_level(LOG_CRIT);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    CHECK(mkdtemp(dir));
    char path[64], other[64];
    snprintf(path, sizeof path, "%s/ctl.sock", dir);
    snprintf(other, sizeof other, "%s/other.sock", dir);
    int inherited = -1;

    /* too long for a Unix socket address */
    char longp[200];
    memset(longp, 'x', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = 0;
    CHECK_EQ(listen_socket_open(longp, &inherited), -ENAMETOOLONG);
    CHECK_EQ(inherited, 0);

    /* bound here */
    int fd = listen_socket_open(path, &inherited);
    CHECK(fd >= 0, "listen_socket_open: %s", strerror(-fd));
    CHECK_EQ(inherited, 0);
    CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
    CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    struct stat st;
    CHECK_EQ(stat(path, &st), 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK_EQ(st.st_mode & 0777, 0666);
    CHECK_EQ(listen(fd, 16), 0); /* as control_listen's evconnlistener does */
    CHECK(can_connect(path));

    /* another agent answers there: refused, its socket left alone */
    CHECK_EQ(listen_socket_open(path, &inherited), -EADDRINUSE);
    CHECK(can_connect(path));

    /* the agent died without removing its socket: the stale file is replaced */
    close(fd);
    CHECK(!can_connect(path));
    CHECK_EQ(stat(path, &st), 0);
    fd = listen_socket_open(path, &inherited);
    CHECK(fd >= 0, "over a stale socket: %s", strerror(-fd));
    CHECK_EQ(listen(fd, 16), 0);
    CHECK(can_connect(path));
    close(fd);
    unlink(path);

    /* socket activation: the passed listener is used, even bound elsewhere (a warning) */
    pass_fd3(unix_listener(other));
    fd = listen_socket_open(path, &inherited);
    CHECK_EQ(fd, 3);
    CHECK_EQ(inherited, 1);
    CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
    CHECK(!getenv("LISTEN_FDS") && !getenv("LISTEN_PID"), "the variables are unset");
    CHECK(access(path, F_OK) < 0, "nothing bound at the configured path");
    CHECK(can_connect(other));
    close(fd);
    unlink(other);

    /* a passed descriptor that is no listening socket: refused and closed */
    int p[2];
    CHECK_EQ(pipe(p), 0);
    close(p[1]);
    pass_fd3(p[0]);
    CHECK_EQ(listen_socket_open(path, &inherited), -EINVAL);
    CHECK(fcntl(3, F_GETFD) < 0 && errno == EBADF, "the passed descriptor is closed");
    CHECK(access(path, F_OK) < 0);

    /* variables for another process: ignored, the path is bound here */
    CHECK_EQ(setenv("LISTEN_PID", "1", 1), 0);
    CHECK_EQ(setenv("LISTEN_FDS", "1", 1), 0);
    fd = listen_socket_open(path, &inherited);
    CHECK(fd >= 0);
    CHECK_EQ(inherited, 0);
    close(fd);
    unlink(path);
    rmdir(dir);
    return 0;
}
