/*
 * houston/step.h - report training steps to the node's houston agent.
 *
 * A training process calls hn_step_report() once per step (per rank). The report is one Unix
 * datagram to the agent's step socket; sending never blocks (MSG_DONTWAIT) and never fails the
 * caller: when no agent listens, the socket is full or anything else goes wrong, the report is
 * dropped and counted (hn_step_dropped()). Cost: one snprintf and one sendto, a few
 * microseconds, against steps that take hundreds of milliseconds.
 *
 * Identity comes from the launcher's environment by default (hn_step_open):
 *   job         SLURM_JOB_ID, else HOUSTON_JOB_ID, else ""         (the controller's job key)
 *   rank        RANK, else SLURM_PROCID, else -1
 *   local rank  LOCAL_RANK, else SLURM_LOCALID, else -1            (-> the GPU on the node)
 *   world size  WORLD_SIZE, else SLURM_NTASKS, else -1
 *   socket      HOUSTON_STEP_SOCKET, else HN_STEP_SOCKET_DEFAULT
 *
 * The datagram (docs/steps.md gives the full contract; the Python module python/houston_step.py
 * writes the same bytes) is one line of ASCII text, at most HN_STEP_DGRAM_MAX bytes:
 *
 *   hs1 job=JOB rank=R lrank=L world=W step=S dur=SECONDS [tokens=N] [fwd=S] [bwd=S] [opt=S]
 *       [comm=S] [ckpt=STEP] [tflops=X] [gpu=G]
 *
 * Keys are lower-case, values have no spaces; unknown keys are ignored by the agent (room to
 * grow), a missing optional key means "not reported". Durations are seconds as decimal numbers.
 */
#ifndef HOUSTON_STEP_H
#define HOUSTON_STEP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HN_STEP_SOCKET_DEFAULT "/run/houston/step.sock"
#define HN_STEP_DGRAM_MAX      512
#define HN_STEP_JOB_MAX        63

/* One step of one rank. Fields set to a negative value (or NaN for doubles) are not sent. */
struct hn_step {
    uint64_t step;    /* the step (iteration) number this report closes */
    double seconds;   /* wall time of the whole step */
    int64_t tokens;   /* tokens this rank processed in the step (-1: unknown) */
    double forward_s; /* optional phase times */
    double backward_s;
    double optimizer_s;
    double comm_s;      /* time spent waiting in collectives */
    int64_t checkpoint; /* the step of the last completed checkpoint (-1: unknown) */
    double tflops;      /* achieved model TFLOP/s per GPU, as a framework reports it */
};

struct hn_step_client;

/* Opens a client with identity from the environment (see above). Never returns NULL: a client
 * whose socket cannot be created drops every report. */
struct hn_step_client *hn_step_open(void);
/* Overrides what hn_step_open() found; NULL / negative keeps the current value. */
void hn_step_set_identity(struct hn_step_client *c, const char *job, int rank, int local_rank,
                          int world);
void hn_step_set_socket(struct hn_step_client *c, const char *path);
/* Initialises s with every optional field unset. */
void hn_step_init(struct hn_step *s);
/* Sends one report. Returns 0 when the datagram was handed to the kernel, -1 when it was
 * dropped (counted); never blocks, never aborts, safe to ignore. */
int hn_step_report(struct hn_step_client *c, const struct hn_step *s);
/* Reports dropped so far (no agent, socket full, report too long). */
uint64_t hn_step_dropped(const struct hn_step_client *c);
void hn_step_close(struct hn_step_client *c);

/* Formats the datagram for s into buf (size >= HN_STEP_DGRAM_MAX); returns its length or -1.
 * Exposed for tools (houston tail) and tests. */
int hn_step_format(const struct hn_step_client *c, const struct hn_step *s, char *buf,
                   unsigned size);

#ifdef __cplusplus
}
#endif

#endif
