/* allow.c: who may submit.  No list: everyone; root and the agent's own user always; a user
 * named in allow_users; a user in a group of allow_groups (the primary group counts also for
 * a uid the user database does not know); everyone else refused with a message naming the
 * user, the agent and the settings.  Uses the accounts every Debian system has: root (0),
 * nobody (65534) and its group nogroup (65534); uid 54321 must be unknown. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "allow.h"
#include "config.h"

#define UNKNOWN_UID 54321u
#define NOBODY 65534u

static char **list(const char *a, const char *b)
{
    char **v = calloc(3, sizeof *v);
    CHECK(v);
    v[0] = a ? strdup(a) : NULL;
    v[1] = b ? strdup(b) : NULL;
    return v;
}

static void expect_refused(const struct agent_config *cfg, uid_t uid, gid_t gid, const char *who)
{
    char err[256] = "";
    CHECK_EQ(allow_submit(cfg, uid, gid, err, sizeof err), 0);
    CHECK(strstr(err, who), "the refusal names %s, got \"%s\"", who, err);
    CHECK(strstr(err, "on allow-test"), "the refusal names the agent, got \"%s\"", err);
    CHECK(strstr(err, "allow_users / allow_groups"), "the refusal names the settings: \"%s\"", err);
}

int main(void)
{
    struct passwd *pw = getpwuid(NOBODY);
    CHECK(pw && strcmp(pw->pw_name, "nobody") == 0, "a user nobody with uid %u", NOBODY);
    CHECK(getpwuid(UNKNOWN_UID) == NULL, "uid %u unknown to the user database", UNKNOWN_UID);

    struct agent_config cfg;
    CHECK_EQ(config_defaults(&cfg), 0);
    free(cfg.name);
    cfg.name = strdup("allow-test");
    char err[256];

    /* no list: anyone */
    CHECK_EQ(allow_submit(&cfg, UNKNOWN_UID, UNKNOWN_UID, err, sizeof err), 1);
    CHECK_EQ(allow_submit(&cfg, NOBODY, NOBODY, err, sizeof err), 1);

    /* allow_users only */
    cfg.allow_users = list("daemon", "nobody");
    CHECK_EQ(allow_submit(&cfg, NOBODY, NOBODY, err, sizeof err), 1);
    CHECK_EQ(allow_submit(&cfg, 0, 0, err, sizeof err), 1);               /* root */
    CHECK_EQ(allow_submit(&cfg, getuid(), getgid(), err, sizeof err), 1); /* the agent's user */
    expect_refused(&cfg, UNKNOWN_UID, UNKNOWN_UID, "user uid 54321 may not submit");
    config_free_list(cfg.allow_users);
    cfg.allow_users = list("daemon", NULL);
    if (getuid() != NOBODY) expect_refused(&cfg, NOBODY, NOBODY, "user nobody (uid 65534)");

    /* allow_groups: nobody's primary group nogroup; for an unknown uid the gid it connected
     * with (SO_PEERCRED) still counts */
    config_free_list(cfg.allow_users);
    cfg.allow_users = NULL;
    cfg.allow_groups = list("no-such-group-here", "nogroup");
    CHECK_EQ(allow_submit(&cfg, NOBODY, 0, err, sizeof err), 1); /* the database's primary group */
    CHECK_EQ(allow_submit(&cfg, UNKNOWN_UID, NOBODY, err, sizeof err), 1);
    expect_refused(&cfg, UNKNOWN_UID, UNKNOWN_UID, "uid 54321");
    /* a group list that names no existing group refuses everyone but the admins */
    config_free_list(cfg.allow_groups);
    cfg.allow_groups = list("no-such-group-here", NULL);
    expect_refused(&cfg, UNKNOWN_UID, NOBODY, "uid 54321");
    CHECK_EQ(allow_submit(&cfg, 0, 0, err, sizeof err), 1);

    /* both lists: either admits */
    cfg.allow_users = list("nobody", NULL);
    CHECK_EQ(allow_submit(&cfg, NOBODY, NOBODY, err, sizeof err), 1);
    expect_refused(&cfg, UNKNOWN_UID, NOBODY, "uid 54321");

    config_free(&cfg);
    return 0;
}
