/* agent_run.h — entry from main(): runs the agent until it is told to stop. */
#ifndef TMPI_AGENT_RUN_H
#define TMPI_AGENT_RUN_H

#include "tmpi_config.h"

#define TMPI_VERSION_STRING TMPI_VERSION

struct agent;
/* Sets up everything, signals readiness (sd_notify, and ready_fd when >= 0), runs the loop.
 * 0 after a clean shutdown, else a negative errno (already logged). */
int agent_run(struct agent *a, int ready_fd);

#endif
