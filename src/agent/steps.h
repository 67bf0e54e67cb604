/*
 * steps.h - the agent's step-report collector: receives one datagram per training step from
 * the ranks on this node (include/houston/step.h, docs/steps.md) and hands them to the push.
 *
 * init binds a Unix datagram socket at --step-socket (default /run/houston/step.sock, mode
 * 0666 so any user's job can report; the directory is created) and starts a receiver thread.
 * A socket file left by a dead agent is replaced; one that a live agent answers on is not.
 * The thread parses each datagram (common/stepmsg.h), notes its sender's uid (SO_PASSCRED: the
 * kernel's word, not the sender's; a user's subordinate uid per --step-subuid-file, common/
 * subuid.h, counts as the user's: a second thread keeps those ranges, read again within 2 s
 * of a change) and appends it to a bounded queue;
 * collect moves the queue into the cycle's batch, which the push turns into STEP records.
 * Malformed datagrams and reports beyond the queue are counted, never fatal.
 *
 * Metrics (docs/metrics.md): houston_agent_step_reports_total{result="accepted|malformed|
 * dropped"}, houston_agent_step_reports_subuid_total and, per (job, rank) seen in the last 10
 * minutes, houston_step_seconds and houston_step (the last step's time and number).
 */
#ifndef HN_AGENT_STEPS_H
#define HN_AGENT_STEPS_H

#include "agent/collector.h"
#include "common/stepmsg.h"

#define HN_STEPS_CYCLE_MAX 4096 /* reports kept between two collects; more are dropped */

/* One report as the last collect took it. */
struct hn_steps_report {
    struct hn_step_msg msg;
    uint64_t time_ns; /* when the agent received it */
    uint32_t uid;     /* the sender's user id (SO_PASSCRED); HN_FRAME_NO_U32: unknown */
};

/* The reports the last collect took, oldest first; borrowed until the next collect. Collect
 * thread only. */
unsigned hn_steps_cycle(const void *state, const struct hn_steps_report **reports);

extern const struct hn_collector hn_collector_steps;

#endif
