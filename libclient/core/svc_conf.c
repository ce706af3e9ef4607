/* svc_conf.c — a tmpid.conf setting by its key (svc_conf.h). */
#include "svc_conf.h"

#include <string.h>

#include "svc.h"

int tm_svc_conf(const struct tmpi_svc *svc, const char *section, const char *key, char *buf,
                size_t len)
{
    if (len) buf[0] = '\0';
    if (!svc || !svc->config_item || !len) return 0;
    const char *sec, *k;
    /* a few dozen items, read when a communicator first goes across nodes: a walk suffices */
    for (int i = 0; svc->config_item(i, &sec, &k, buf, len) >= 0; i++)
        if (strcmp(sec, section) == 0 && strcmp(k, key) == 0) return buf[0] != '\0';
    if (len) buf[0] = '\0';
    return 0;
}
