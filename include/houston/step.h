/*
 * houston/step.h - report training steps to the node's houston agent.
 *
 * A training process calls hn_step_report() once per step (per rank). The report is one Unix
 * datagram to the agent's step socket; sending never blocks (MSG_DONTWAIT) and never fails the
 * caller: when no agent listens, the socket is full or anything else goes wrong, the report is
 * dropped and counted (hn_step_dropped()). Cost: one snprintf and one sendto, a few
 * microseconds, against steps that take hundreds of milliseconds. The library depends on libc
 * only, never prints, never aborts and leaves the caller's errno as it found it.
 *
 * Identity comes from the launcher's environment by default (hn_step_open):
 *   job         SLURM_JOB_ID, else HOUSTON_JOB_ID, else ""         (the controller's job key)
 *   rank        RANK, else SLURM_PROCID, else -1
 *   local rank  LOCAL_RANK, else SLURM_LOCALID, else -1            (-> the GPU on the node)
 *   world size  WORLD_SIZE, else SLURM_NTASKS, else -1
 *   socket      HOUSTON_STEP_SOCKET, else HN_STEP_SOCKET_DEFAULT
 * An empty variable counts as unset; a rank, local rank or world size that is not a plain
 * decimal number (digits only, at most HN_STEP_COUNT_MAX) is skipped as if unset. A job id is
 * sanitised, not rejected: every byte that is not printable ASCII (0x21..0x7e), and every '=',
 * becomes '_', and an id longer than HN_STEP_JOB_MAX bytes is cut there. Without a job id every
 * report is dropped (the agent cannot attribute it): outside Slurm, set HOUSTON_JOB_ID.
 *
 * The datagram (docs/steps.md gives the full contract; the Python module python/houston_step.py
 * writes the same bytes) is one line of ASCII text without a trailing newline, at most
 * HN_STEP_DGRAM_MAX bytes, keys always in this order:
 *
 *   hs1 job=JOB [rank=R] [lrank=L] [world=W] step=S dur=SECONDS [tokens=N] [fwd=S] [bwd=S]
 *       [opt=S] [comm=S] [ckpt=STEP] [tflops=X] [fpt=F] [gpu=G]
 *
 * and a pause notice (hn_step_pause), sent when the job stops stepping on purpose, has pause=
 * in place of dur= and nothing after it but gpu=:
 *
 *   hs1 job=JOB [rank=R] [lrank=L] [world=W] step=S pause=checkpoint|eval|other [gpu=G]
 *
 * Keys are lower-case, values have no spaces; unknown keys are ignored by the agent (room to
 * grow), a missing optional key means "not reported" (rank, lrank and world are left out when
 * unknown). Integers are plain decimal; reals are printf's "%.9g" in the C locale (always a
 * '.', exponent form such as 1e-05 for small values) whatever the program's locale is.
 *
 * Threads: one client may be shared by any number of threads calling hn_step_report() and
 * hn_step_format() at once (each datagram is sent whole by one sendto; the drop counter is
 * atomic). The setters and hn_step_close() must not run concurrently with anything else on
 * the same client: configure it, then share it.
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
/* The largest rank, local rank, world size and GPU index: the agent refuses a report with a
 * larger one, so the library never sends one. */
#define HN_STEP_COUNT_MAX 100000000

/* One step of one rank. Fields set to a negative value (or NaN for doubles) are not sent. */
struct hn_step {
    uint64_t step;    /* the step (iteration) number this report closes */
    double seconds;   /* wall time of the whole step (required: NaN, inf or < 0 drops it) */
    int64_t tokens;   /* tokens this rank processed in the step (-1: unknown) */
    double forward_s; /* optional phase times */
    double backward_s;
    double optimizer_s;
    double comm_s;          /* time spent waiting in collectives */
    int64_t checkpoint;     /* the step of the last completed checkpoint (-1: unknown) */
    double tflops;          /* achieved model TFLOP/s per GPU, as a framework reports it */
    double flops_per_token; /* model FLOPs per token (6N + 12LHQT; docs/mfu.md), for MFU
                               when tflops is not known */
};

/* Why a rank stops stepping for a while (hn_step_pause). */
enum hn_step_pause {
    HN_STEP_PAUSE_CHECKPOINT = 1, /* saving a checkpoint */
    HN_STEP_PAUSE_EVAL = 2,       /* an evaluation (validation) run */
    HN_STEP_PAUSE_OTHER = 3,      /* anything else that stops the steps on purpose */
};

struct hn_step_client;

/* Opens a client with identity from the environment (see above). Never returns NULL: a client
 * whose socket cannot be created retries at the next report, and one that could not even be
 * allocated is a shared stand-in that drops every report. */
struct hn_step_client *hn_step_open(void);
/* Overrides what hn_step_open() found; NULL / negative (or above HN_STEP_COUNT_MAX) keeps the
 * current value. The job is sanitised as described above. */
void hn_step_set_identity(struct hn_step_client *c, const char *job, int rank, int local_rank,
                          int world);
/* Sends to path from now on (NULL keeps the current one). A path that does not fit a Unix
 * socket address (107 bytes) makes every report a drop (ENAMETOOLONG). */
void hn_step_set_socket(struct hn_step_client *c, const char *path);
/* The node-local GPU index (as nvidia-smi numbers them) sent as gpu=; negative (or above
 * HN_STEP_COUNT_MAX): not sent (the
 * default: the library does not guess it from CUDA_VISIBLE_DEVICES, whose numbering depends on
 * the launcher and on CUDA_DEVICE_ORDER). */
void hn_step_set_gpu(struct hn_step_client *c, int gpu);
/* The identity reports carry now; *job is borrowed from c. Any out-pointer may be NULL. */
void hn_step_identity_get(const struct hn_step_client *c, const char **job, int *rank,
                          int *local_rank, int *world);
/* Initialises s with every optional field unset (step 0, seconds NaN). */
void hn_step_init(struct hn_step *s);
/* Sends one report. Returns 0 when the datagram was handed to the kernel, -1 when it was
 * dropped (counted); never blocks, never aborts, safe to ignore. Dropped: no socket file
 * (ENOENT), nobody bound to it (ECONNREFUSED), the agent's queue full (EAGAIN), no job id or
 * an invalid step (EINVAL), and any other sendto error. */
int hn_step_report(struct hn_step_client *c, const struct hn_step *s);
/* Tells the agent that the job stops stepping on purpose after step `step` (the last step
 * completed, after its report): call it when a checkpoint save or an evaluation starts; the
 * next report ends the pause. The controller then waits at least its hang-pause-max (45 min by
 * default) before it calls the job hung, however short its steps (docs/jobs.md, "Hangs"): a
 * slow save is not a hang, a save that never ends still is. One rank's notice covers the job.
 * Returns and drops as hn_step_report() (EINVAL: no job id or an unknown kind). */
int hn_step_pause(struct hn_step_client *c, uint64_t step, enum hn_step_pause kind);
/* Reports dropped so far (no agent, socket full, report invalid or too long). */
uint64_t hn_step_dropped(const struct hn_step_client *c);
/* The errno of the most recent drop, 0 if none yet (for a one-line diagnosis by the caller). */
int hn_step_last_errno(const struct hn_step_client *c);
void hn_step_close(struct hn_step_client *c);

/* Formats the datagram for s into buf (NUL-terminated, no newline); returns its length, or -1
 * when s has no valid duration, the client has no job id, or the text does not fit size bytes
 * (HN_STEP_DGRAM_MAX always suffices). Exposed for tools (houston tail --print) and tests. */
int hn_step_format(const struct hn_step_client *c, const struct hn_step *s, char *buf,
                   unsigned size);

/* The pause notice's datagram, as hn_step_format(); -1 for no job id or an unknown kind. */
int hn_step_format_pause(const struct hn_step_client *c, uint64_t step, enum hn_step_pause kind,
                         char *buf, unsigned size);

#ifdef __cplusplus
}
#endif

#endif
