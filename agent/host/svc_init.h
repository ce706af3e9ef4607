/* svc_init.h — the agent fills the service table (svc.h) before the first job. */
#ifndef TMPI_AGENT_SVC_INIT_H
#define TMPI_AGENT_SVC_INIT_H

struct agent;
void svc_init(struct agent *a);

#endif
