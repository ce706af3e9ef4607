/* config_items.h — the agent's tmpid.conf settings one by one as text, for the tools interface
 * of the jobs (svc.h config_item; libclient/tools_if/ shows them as MPI_T control variables). */
#ifndef TMPI_AGENT_CONFIG_ITEMS_H
#define TMPI_AGENT_CONFIG_ITEMS_H

#include <stddef.h>

#include "config.h"

/* Setting i of c (0-based, in tmpid.conf(5)'s order by section): its section and key
 * (static strings) and its value as text into buf[len] ("" when not set; lists joined with
 * ", "; truncated to fit).  Returns the length of the full text, or -1 when i is past the last.
 * The cluster key's file is left out: its path helps nobody's job. */
int config_item_text(const struct agent_config *c, int i, const char **section, const char **key,
                     char *buf, size_t len);

#endif
