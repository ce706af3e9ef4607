/* fanout.h — the agent's one fan-out engine: a question to N parts, their answers gathered.
 *
 * Every control query answered by more than this agent goes through it: tmpictl nodes and
 * jobs --all (the parts are the configured peers, control/cluster.c) and tmpictl ranks and
 * the deadlock watch (the parts are a job's nodes, jobs/ranks_gather.c).  A round asks every
 * part at once; a part answers (its answer is kept), fails (it cannot be reached: "down"), or
 * stays silent until the round's deadline ("timeout").  The deadline is the one setting
 * `[mesh] query_timeout_ms` (config.h), read when the round starts, so a reload applies to
 * the next round.  The engine knows nothing of messages: how a part is asked and what its
 * answer is belong to the caller (fanout_ops), and so does the merge of the answers (done).
 *
 * Loop thread only.  done never runs from inside fanout_start, fanout_answer or fanout_fail:
 * it is delivered from the loop, so a transport callback that answered returns first. */
#ifndef TMPI_AGENT_FANOUT_H
#define TMPI_AGENT_FANOUT_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct fanout;

enum fanout_state {
    FANOUT_WAITING, /* asked, no answer yet (only while the round is out) */
    FANOUT_UP,      /* answered: fanout_answer_of */
    FANOUT_DOWN,    /* could not be asked or went away: fanout_error */
    FANOUT_TIMEOUT, /* no answer by the deadline: fanout_error says so */
};

struct fanout_ops {
    /* Ask every part the question of round (never 0; answers carry it back), as the caller's
     * transport does best (one broadcast, or a connection per part).  A negative errno marks
     * every part not yet answered down; one part is failed with fanout_fail. */
    int (*ask)(void *arg, uint64_t round);
    /* Every part is answered, down or timed out: the caller reads the parts and merges them.
     * The answers are freed after done returns (or taken with fanout_take). */
    void (*done)(void *arg, struct fanout *f);
    /* Frees one answer (as passed to fanout_answer). */
    void (*free_answer)(void *answer);
};

/* 0 or -ENOMEM. */
int fanout_new(struct event_base *base, size_t nparts, const struct fanout_ops *ops, void *arg,
               struct fanout **ret);
/* Nothing more is called; the answers are freed.  NULL is fine. */
void fanout_free(struct fanout *f);

/* Starts a round with deadline timeout_ms: every part is asked.  Returns the round (>= 1), or
 * 0 when a round is out already (the caller joins it: its done comes for both). */
uint64_t fanout_start(struct fanout *f, uint32_t timeout_ms);
/* Is a round out? */
int fanout_busy(const struct fanout *f);

/* Part i's answer to round: kept (the engine frees it with free_answer).  An answer to
 * another round, from a part out of range or from one that answered already is freed and
 * ignored: returns -ESTALE then, else 0. */
int fanout_answer(struct fanout *f, uint64_t round, size_t part, void *answer);
/* Part i cannot answer round (why: its words, copied). */
void fanout_fail(struct fanout *f, uint64_t round, size_t part, const char *why);
/* Would part's answer to round be kept (so that the caller need not copy one that is not)? */
int fanout_wants(const struct fanout *f, uint64_t round, size_t part);

/* For done: the parts' states, answers and errors (the timeout names the setting). */
size_t fanout_nparts(const struct fanout *f);
enum fanout_state fanout_state_of(const struct fanout *f, size_t part);
void *fanout_answer_of(const struct fanout *f, size_t part);
/* The answer becomes the caller's (NULL when there is none). */
void *fanout_take(struct fanout *f, size_t part);
const char *fanout_error(const struct fanout *f, size_t part);
/* How many parts answered. */
size_t fanout_answered(const struct fanout *f);

/* The state's name as tmpictl shows it: "up", "down", "timeout" (waiting: "timeout"). */
const char *fanout_state_name(enum fanout_state st);

#endif
