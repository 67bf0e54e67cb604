/*
 * ledger.h - a job's books (docs/jobs.md, "The ledger (ETTR)"), after Meta's ETTR ("Revisiting
 * Reliability in Large-Scale ML Research Clusters", Kokolis et al. 2024: productive time over
 * wall time, where recomputation since the last checkpoint and restart overhead are not
 * productive):
 *   - a report that advances the job's highest step adds that step's time to productive time
 *     and to the work since the last checkpoint (capped by the wall time since the previous
 *     advance, so sparse reports are not over-counted);
 *   - an interruption (runs.c) moves the work since the last checkpoint from productive to
 *     lost, and the time from the last progress until the next run's first step is lost too,
 *     all charged to the interruption's cause;
 *   - while a straggler holds the job back, the share of each step it costs (slowdown / (1 +
 *     slowdown)) is GPU time lost to "straggler" (the step still counts as productive: the
 *     slowdown lowers MFU, not ETTR).
 * GPU-hours are those times multiplied by the job's ranks (one GPU per rank). Also here: the
 * job's typical step and the wait between its advances, the check of reported step times
 * against the wall clock, its MFU and rates, and its history points.
 */
#ifndef HN_BRAIN_LEDGER_H
#define HN_BRAIN_LEDGER_H

#include "brain/job.h"

/* The reported step times are judged against the wall clock once WALL_JUDGE_S (300 s) of it
 * was watched, over the last WALL_WINDOW_S (an hour) or so; they are not wall time when the
 * steps they cover took more than WALL_K times the wall time they came in (steps run one after
 * the other: a client that reports milliseconds as seconds, say). */
#define WALL_K 2.0

/* The median of j's recent step times; NaN before its first. */
double hb_typical_step(const struct job *j);
/* Whether j's reported step times are not seconds of wall time (above): in sum, and in most
 * of the wall time judged. A backlog (a log `houston tail` reads from its start, an agent's
 * frames replayed after a controller restart) comes back to back, each report with its own
 * time: steps that ran before, judged against next to no wall time, whose sum alone would
 * call the live reports after it a mismatch. */
int hb_wall_mismatch(const struct job *j);
/* The typical wait between two advances of the step: a step, or more where reports are sparse
 * (`houston tail` reads a line per log interval of many steps). Reported step times that are
 * not wall time (hb_wall_mismatch) count for no more than WALL_K times the wall time an advance
 * took on average: a client that reports milliseconds would put the hang limit 1,000 times
 * too far. */
double hb_typical_gap(const struct job *j);
/* Charges seconds of the job's wall time to cause (a negative amount gives time back), and
 * the GPU time of its ranks now. */
void hb_lose_n(struct job *j, enum hn_loss_cause cause, double seconds, unsigned ranks);
/* hb_lose_n at j's ranks now. */
void hb_lose(struct job *j, enum hn_loss_cause cause, double seconds);
/*
 * The first step of the run j waited for arrived at now and took `seconds`: what the restart
 * took is from its start (l.restart_from: the requeue, houston's or the scheduler's as houston
 * learnt of it) until that step began, and the first step's time beyond the job's typical
 * step (start-up counted in it: compilation, warm-up). Time in the scheduler's queue counts:
 * the ledger charges the whole wait to the interruption's cause, and the straggler policy
 * weighs the same time (l.restart_s, the median of the last RESTARTS_KEPT).
 */
void hb_restart_taken(struct job *j, double now, double seconds);
/* Where its wall time ends: now while it has not ended; else its last report, or, for a job
 * that ended while waiting for its next run, the end of that wait. */
double hb_job_end(const struct job *j, double now);
/* Productive over wall time (0..1) at now; NaN before any wall time. */
double hb_ettr(const struct job *j, double now);
/* The EWMA of its reports' MFU; NaN unknown. */
double hb_job_mfu(const struct job *j);
/* A history point of j at now, a point every series_dt at most (thinned by half when full). */
void hb_add_point(struct hn_jobs *js, struct job *j, double now);
/* The rank's compute time when it reported the time spent waiting in collectives; NaN (not
 * known) when that wait is the whole step or more: its timers disagree, and its step time
 * would make it the slowest rank of the job. */
double hb_rank_seconds(const struct hn_step_in *s);
/* `unbroken`: the reporting node's frames came without a break since the last progress. */
void hb_progress(struct job *j, double now, const struct hn_step_in *s, int unbroken);
/* A report's tokens per second, TFLOP/s and MFU (against its node's GPU) into j's EWMAs. */
void hb_rates(const struct hn_brain *b, struct job *j, int node, const struct hn_step_in *s);
/* A job that ends while it waits for its next run: its wait, lost to its cause, ran to `at`
 * (not before its interruption), where its wall time ends too. */
void hb_end_wait(struct job *j, double at);

#endif
