/*
 * stepmsg.h - the agent's reader of step-report datagrams (include/houston/step.h,
 * docs/steps.md).
 *
 * A datagram is one line of ASCII: "hs1" and then space-separated key=value pairs. The reader
 * is strict about what it uses and lenient about what it does not: the version word, job,
 * step and either dur (a step report) or pause (a pause notice) are required, never both;
 * rank, lrank, world, gpu, tokens, fwd, bwd, opt, comm, ckpt, tflops and fpt are optional
 * (a notice takes only rank, lrank, world and gpu of them);
 * unknown keys are skipped (newer clients, older agents); a key given twice, a value that does
 * not parse, a NUL or control byte, or more than HN_STEP_DGRAM_MAX bytes makes the whole
 * datagram invalid. One trailing newline is allowed. A pause word is 1 to 16 of [a-z0-9_-]:
 * "checkpoint" and "eval" are known, any other word reads as HN_PAUSE_OTHER (a newer client's
 * reason).
 */
#ifndef HN_STEPMSG_H
#define HN_STEPMSG_H

#include "common/jobid.h"

#include <stddef.h>
#include <stdint.h>

/* Why a job stops stepping (a pause notice); the values of enum hn_step_pause. */
enum hn_pause_kind {
    HN_PAUSE_NONE = 0, /* a step report, not a notice */
    HN_PAUSE_CHECKPOINT = 1,
    HN_PAUSE_EVAL = 2,
    HN_PAUSE_OTHER = 3,
};

/* "checkpoint", "eval", "other"; NULL for HN_PAUSE_NONE and values out of range. */
const char *hn_pause_name(int kind);

/* One step of one rank, or a pause notice (pause != HN_PAUSE_NONE: seconds is NaN), as the
 * agent read it. Unknown integers are -1, unknown reals NaN. */
struct hn_step_msg {
    char job[HN_JOB_ID_SIZE];
    int64_t rank, local_rank, world, gpu;
    uint64_t step;
    double seconds;
    double tokens;
    double forward_s, backward_s, optimizer_s, comm_s;
    int64_t checkpoint; /* step of the last completed checkpoint */
    double tflops;
    double flops_per_token; /* model FLOPs per token (6N + attention), for MFU */
    int pause;              /* enum hn_pause_kind */
};

/* Parses data[0..len). Returns 0, or -EBADMSG with a one-line reason in err. */
int hn_stepmsg_parse(const char *data, size_t len, struct hn_step_msg *out, char *err,
                     size_t errsize);

/* Every optional field unknown. */
void hn_stepmsg_clear(struct hn_step_msg *m);

#endif
