/* ctl_esc.h — strings from the agent (users' program names, node names, errors) as tmpictl's
 * tables show them: control characters escaped (text_escape.h).  --json does not use this. */
#ifndef TMPI_CTL_ESC_H
#define TMPI_CTL_ESC_H

/* s escaped (NULL or "": dflt, as is).  The result lives until CTL_ESC_SLOTS more calls: enough
 * for the fields of one printed line. */
#define CTL_ESC_SLOTS 12
const char *ctl_esc(const char *s, const char *dflt);

#endif
