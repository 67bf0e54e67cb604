/*
 * runs.h - a job's runs, and the events that tell the other parts about them: a new run (the
 * first step after an interruption), a resize (ranks grown, or shed by a smaller run), an
 * interruption (houston's drain, a hang, a requeue houston did not cause) and a node taken out
 * of service under jobs. runs.c sequences what each part does: the ledger charges
 * (ledger.c), the straggler episodes end (strag_hold.c), the rows start again (jobtab.c). Also
 * the scheduler's view of jobs: listed running, waiting, or with a time limit.
 */
#ifndef HN_BRAIN_RUNS_H
#define HN_BRAIN_RUNS_H

#include "brain/job.h"

/* Makes room for ranks 0..n-1 (n > l.ranks). The detector starts afresh with the new size
 * (at now). */
void hb_grow_ranks(struct hn_brain *b, double now, struct job *j, unsigned n);
/* The job's ranks as its run claims them: a run whose reports say its world size, smaller
 * than the job's rank count (requeued smaller), sheds the ranks it does not have, which the
 * detector's quorum and the GPU time would otherwise count. Once a run, when its first row is
 * ready. Without a world size the rank numbers seen by then are no measure of the run (an
 * agent's frame may push the first row out before other nodes' reports come): nothing is
 * shed. */
void hb_resize(struct hn_brain *b, double now, struct job *j);
/* The job stops making progress for cause: work since the last checkpoint is lost, and the
 * clock of lost time runs from the last progress until the next run's first step. */
void hb_interrupt_n(struct hn_brain *b, struct job *j, double now, enum hn_loss_cause cause,
                    unsigned ranks);
/* hb_interrupt_n at the ranks of j's run (shed first: its first row may not have come). */
void hb_interrupt(struct hn_brain *b, struct job *j, double now, enum hn_loss_cause cause);
/* The first step of a new run arrived at now and took `seconds`. */
void hb_resume(struct hn_brain *b, struct job *j, double now, double seconds, uint64_t step);
/* Whether taking node n (its index node) out of service interrupts job j: j runs there, by
 * the scheduler's poll or by where its ranks report (hb_jobs_node_removed). The job's node
 * table first: a job none of whose ranks reports from n is not scanned. */
int hb_drain_takes(const struct job *j, const struct node *n, int node);
/* Node n left service for finding f: each job running there is interrupted by f's cause, and
 * requeued unless the scheduler lists it on n (lifecycle.c requeued those); n keeps when and
 * why, for reports of jobs not known to run there (steps.c, ran_on_removed). */
void hb_jobs_node_removed(struct hn_brain *b, double now, struct node *n,
                          const struct hn_finding *f);
/* The scheduler's poll at now lists job as running (hn_brain_node_job), as waiting
 * (hn_brain_job_waiting; queued again without houston is an interruption of cause "other"),
 * or with seconds left to its time limit. */
void hb_jobs_sched_seen(struct hn_brain *b, double now, const char *job);
void hb_jobs_sched_waiting(struct hn_brain *b, double now, const char *job, enum hn_wait why);
void hb_jobs_time_left(struct hn_brain *b, double now, const char *job, double seconds);

#endif
