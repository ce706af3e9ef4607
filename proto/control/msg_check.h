/* msg_check.h — structural checks of the control messages that describe a job: a submission
 * from a launcher, an assignment from a coordinator, output relayed by a member.
 *
 * Pure functions over decoded messages (no agent state), so that the agent's handlers and the
 * fuzzers (tests/fuzz/) run exactly the same checks. Each returns 0, or -EINVAL with one line
 * in err saying what is wrong. Limits that depend on the agent's configuration (ranks per
 * node, program size) stay with the agent; these are the bounds every message must respect. */
#ifndef TMPI_PROTO_MSG_CHECK_H
#define TMPI_PROTO_MSG_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"

/* Nodes per job and ranks per job (the launcher's placement keeps to the same bounds). */
#define MSG_MAX_NODES 65536u
#define MSG_MAX_RANKS (1u << 22)
/* Spawn slots of a job across nodes, all nodes together (agent/jobs/job.h
 * JOB_SPAWN_MAX_UNIVERSE bounds a one-node universe alike). */
#define MSG_MAX_SPAWN_SLOTS 4096u
/* A program name or working directory longer than PATH_MAX is no path the ranks could use. */
#define MSG_MAX_PATH 4096u
/* Arguments and forwarded environment of one job, each in total: the agent keeps one copy
 * per job (never per rank), but a submission still may not make it hold more than this. */
#define MSG_MAX_ARGS_BYTES (4u << 20)
#define MSG_MAX_ENV_BYTES (4u << 20)
#define MSG_MAX_ARGS 65536u
#define MSG_MAX_ENV 16384u
/* Programs of one MPMD job (SubmitJob.apps): each is at least one rank and one program cache
 * entry, so this bounds neither ranks nor memory beyond what nprocs and the frame size do; it
 * bounds the work of checking and placing a submission. */
#define MSG_MAX_APPS 4096u
/* SHA-256 of the program. */
#define MSG_PROGRAM_HASH_SIZE 32u
/* Standard input for rank 0 (StdinData): at most MSG_STDIN_WINDOW bytes sent and not yet
 * acknowledged (StdinAck), in chunks of at most MSG_STDIN_CHUNK.  This bounds what the agent
 * and the job host hold of it; a sender past the window breaks the protocol. */
#define MSG_STDIN_WINDOW (256u << 10)
#define MSG_STDIN_CHUNK (64u << 10)
/* The output streams a rank has: 1 stdout, 2 stderr. */
/* Names (NameRequest, docs/PROTOCOL.md "Names"): a service name and a port name at most this
 * long (libtmpi's MPI_MAX_INFO_VAL and MPI_MAX_PORT_NAME - 1), the operations 1..3. */
#define MSG_NAME_SERVICE_MAX 1024u
#define MSG_NAME_PORT_MAX 255u
#define MSG_NAME_PUBLISH 1u
#define MSG_NAME_UNPUBLISH 2u
#define MSG_NAME_LOOKUP 3u
/* A port of MPI_Open_port registered with the agent (service = the port's name), so that a
 * connect from another job finds it and its owner: open and close on this agent's table, find
 * on every agent's (the owner check: docs/PROTOCOL.md "Connects between jobs"). */
#define MSG_NAME_PORT_OPEN 4u
#define MSG_NAME_PORT_CLOSE 5u
#define MSG_NAME_PORT_FIND 6u
/* Three context ids for a communicator between jobs (service "ctx"): the agent's counter, the
 * first in the NameReply's port as a decimal number (PROTOCOL.md "Between jobs"). */
#define MSG_NAME_XCTX 7u
/* Where one node of a job runs (agent -> agent only, the relay's question: job_id, node, uid;
 * service unused): answered 0 by the agent that runs it for that uid (PROTOCOL.md "Between
 * jobs"). */
#define MSG_NAME_JOB_FIND 8u
/* An XFrame's bounds: libtmpi's header, its payload (larger messages go as several). */
#define MSG_XFRAME_HDR_MAX 64u
#define MSG_XFRAME_PAYLOAD_MAX (1u << 20)
/* A name request's structure: op known, service non-empty, both within their bounds.
 * 0 or -EINVAL with the reason in err. */
int msg_check_name_request(const Tmpi__NameRequest *rq, char *err, size_t errlen);
#define MSG_STREAM_STDOUT 1u
#define MSG_STREAM_STDERR 2u
/* The signals a launcher may forward (Linux numbers, as on the wire). */
#define MSG_SIGNAL_USR1 10
#define MSG_SIGNAL_USR2 12

/* What a job's program, arguments and environment may be (shared by SubmitJob and JobAssign). */
struct msg_job_text {
    ProtobufCBinaryData program_hash;
    uint64_t program_size;
    const char *program_name;
    size_t n_args;
    char **args;
    const char *cwd;
    size_t n_env;
    Tmpi__EnvVar **env;
};

int msg_check_job_text(const struct msg_job_text *t, char *err, size_t errlen);

/* The programs of a job of nprocs ranks: with no apps, the single program the top-level
 * fields t describe; with apps, t names no program (empty hash, size, name and args), every
 * app is a complete program text (its cwd may be empty: the job's t->cwd) of at least one
 * rank, and the apps' ranks add up to nprocs. */
int msg_check_apps(const struct msg_job_text *t, size_t n_apps, Tmpi__JobApp *const *apps,
                   uint32_t nprocs, char *err, size_t errlen);

/* Every rank 0..nprocs-1 on exactly one node, every node with a host, a port and at least
 * one rank. */
int msg_check_placement(size_t n_nodes, Tmpi__NodePlacement *const *nodes, uint32_t nprocs,
                        char *err, size_t errlen);

/* A launcher's submission: one node (no placement) or several. */
int msg_check_submit(const Tmpi__SubmitJob *s, char *err, size_t errlen);

/* A coordinator's assignment of one node's part of a job. */
int msg_check_assign(const Tmpi__JobAssign *ja, char *err, size_t errlen);

/* Output of one rank of a job of nranks ranks, at most max_data bytes. */
int msg_check_output(const Tmpi__Output *o, uint32_t nranks, size_t max_data, char *err,
                     size_t errlen);

/* The end of one rank of a job of nranks ranks. */
int msg_check_rank_exit(const Tmpi__RankExit *e, uint32_t nranks, char *err, size_t errlen);

/* A forwarded signal: SIGUSR1 or SIGUSR2 only (tmpi-launch forwards these two). */
int msg_check_signal(const Tmpi__SignalJob *s, char *err, size_t errlen);

#endif
