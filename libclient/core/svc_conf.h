/* svc_conf.h — the agent's tmpid.conf settings by section and key (svc.h config_item).
 *
 * The settings reach libtmpi as keys and values, never as fields of the service table: a new
 * setting is a row of the agent's config_items.c, not a new member (and ABI) of svc.h. */
#ifndef TMPI_CLIENT_SVC_CONF_H
#define TMPI_CLIENT_SVC_CONF_H

#include <stddef.h>

struct tmpi_svc;

/* [section] key of the agent's tmpid.conf as text into buf (len bytes, NUL-ended): 1 when it
 * is set, 0 when it is unset ("" in buf) or the agent has no such key or tells no settings
 * (svc NULL, or no config_item).  Any thread; never blocks. */
int tm_svc_conf(const struct tmpi_svc *svc, const char *section, const char *key, char *buf,
                size_t len);

#endif
