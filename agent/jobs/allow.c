/* allow.c — the submission check of allow.h. */
#include "allow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

/* Bound on the groups of one user we look at (getgrouplist). */
#define ALLOW_MAX_GROUPS 1024

static int in_list(char **list, const char *name)
{
    for (char **p = list; p && *p; p++)
        if (strcmp(*p, name) == 0) return 1;
    return 0;
}

/* Is one of the user's groups named in the list? */
static int group_allowed(char **list, const char *user, gid_t gid)
{
    gid_t groups[ALLOW_MAX_GROUPS];
    int n = ALLOW_MAX_GROUPS;
    if (!user || getgrouplist(user, gid, groups, &n) < 0) {
        /* unknown user, or more groups than we look at: the primary group still counts */
        groups[0] = gid;
        n = n > 0 && user ? (n < ALLOW_MAX_GROUPS ? n : ALLOW_MAX_GROUPS) : 1;
    }
    for (char **p = list; p && *p; p++) {
        struct group gr, *grp = NULL;
        char buf[8192];
        if (getgrnam_r(*p, &gr, buf, sizeof buf, &grp) != 0 || !grp) continue;
        for (int i = 0; i < n; i++)
            if (groups[i] == grp->gr_gid) return 1;
    }
    return 0;
}

/* Does dir hold an entry "DIGITS.user"?  A job id never has a dot, so the first dot splits
 * the name whatever characters the user name has.  0 / 1, or -1 with the reason in why. */
static int dir_allows(const char *dir, const char *user, char *why, size_t whylen)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        /* before the first prolog ran, or after a reboot emptied /run: nobody is in it */
        if (errno == ENOENT) return 0;
        snprintf(why, whylen, "allow_users_dir %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || (st.st_uid != 0 && st.st_uid != getuid()) ||
        (st.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(why, whylen,
                 "allow_users_dir %s must belong to root (or the agent's user) and be writable "
                 "by nobody else; it lets nobody in",
                 dir);
        close(fd);
        return -1;
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        snprintf(why, whylen, "allow_users_dir %s: %s", dir, strerror(errno));
        return -1;
    }
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        const char *p = e->d_name;
        while (*p >= '0' && *p <= '9')
            p++;
        found = p != e->d_name && *p == '.' && strcmp(p + 1, user) == 0;
    }
    closedir(d);
    return found;
}

int allow_submit(const struct agent_config *cfg, uid_t uid, gid_t gid, char *err, size_t errlen)
{
    if (!cfg->allow_users && !cfg->allow_groups && !cfg->allow_users_dir) return 1;
    if (uid == 0 || uid == getuid()) return 1;
    struct passwd pw, *pwp = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &pwp) != 0) pwp = NULL;
    const char *name = pwp ? pwp->pw_name : NULL;
    if (name && in_list(cfg->allow_users, name)) return 1;
    if (group_allowed(cfg->allow_groups, name, pwp ? pwp->pw_gid : gid)) return 1;
    char dirwhy[192] = "";
    if (cfg->allow_users_dir && name &&
        dir_allows(cfg->allow_users_dir, name, dirwhy, sizeof dirwhy) == 1)
        return 1;
    char who[96];
    if (name)
        snprintf(who, sizeof who, "%s (uid %u)", name, (unsigned)uid);
    else
        snprintf(who, sizeof who, "uid %u", (unsigned)uid);
    if (*dirwhy)
        snprintf(err, errlen, "user %s may not submit jobs to the agent on %s: %s", who, cfg->name,
                 dirwhy);
    else if (cfg->allow_users_dir)
        snprintf(err, errlen,
                 "user %s may not submit jobs to the agent on %s: no allocation of theirs holds "
                 "this node (allow_users_dir %s; also allow_users / allow_groups in its "
                 "tmpid.conf)",
                 who, cfg->name, cfg->allow_users_dir);
    else
        snprintf(err, errlen,
                 "user %s may not submit jobs to the agent on %s (allow_users / allow_groups in "
                 "its tmpid.conf)",
                 who, cfg->name);
    return 0;
}
