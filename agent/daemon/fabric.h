/* fabric.h — what `[mesh] transport = auto` means on this node, decided by the agent.
 *
 * auto: OFI when libfabric offers a provider other than the plain socket ones (tp_ofi.h
 * tp_ofi_fabric_present), else TCP.  Looking loads libfabric and asks every provider it has
 * (verbs, EFA, PSM ... each opening its devices: 0.6-0.75 s on the loaded development VM), so
 * the agent looks once, at start and on every reload, in a thread of its own that runs the look
 * as a child process (the agent is ready meanwhile), and hands the answer to each job host on its
 * command line (jobhost.c,
 * --fabric), instead of every job host of every job across nodes looking again
 * (job_net_tp.c).  An agent without a mesh runs no job across nodes and does not look. */
#ifndef TMPI_AGENT_FABRIC_H
#define TMPI_AGENT_FABRIC_H

struct agent;

/* Loop thread: starts looking for a fabric provider when transport is "auto" (an earlier look
 * is waited for first); any other transport clears the answer (nobody looked). */
void agent_fabric_probe(struct agent *a, const char *transport);

/* `tmpid --probe-fabric`: prints the fabric provider found and returns 0, or returns 1 when
 * there is none.  The agent's look runs it as a child (fabric.c says why). */
int agent_fabric_probe_main(void);

/* Loop thread: waits for a look in progress (before the agent ends). */
void agent_fabric_wait(struct agent *a);

#endif
