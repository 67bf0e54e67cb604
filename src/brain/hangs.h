/*
 * hangs.h - hangs (docs/jobs.md, "Hangs"): a job the scheduler runs that makes no progress
 * for its hang limit, while an agent of its nodes kept reporting, is hung: a culprit node
 * (ranks behind, a silent agent, idle GPUs while the others spin) is drained, and the job
 * requeued; a requeued job whose new run never steps hung at start; a job no scheduler lists
 * has ended once silent. The periodic job tick is here.
 */
#ifndef HN_BRAIN_HANGS_H
#define HN_BRAIN_HANGS_H

#include "brain/job.h"

/* Seconds without progress after which the job is hung (docs/jobs.md, "Hangs"). */
double hb_hang_limit(const struct hn_brain *b, const struct job *j);
/*
 * A requeue of job j failed for good (the scheduler refused it: `sbatch --no-requeue`,
 * JobRequeue=0; or did not answer, after the executor's retries): its run goes on where it is.
 * A hung job stays hung, its time the hang's until it steps again or ends (no hang at start:
 * it never left its nodes), and someone must cancel or requeue it; one interrupted for its
 * node or a straggler goes on, and its next steps are taken as its next run (resume). A
 * `requeue_failed` warning, once per requeue (hang() may try again), with the scheduler's words.
 * Saved in the ledger, as a restart must not take the job for a new run either.
 */
void hb_jobs_requeue_failed(struct hn_brain *b, double now, const char *id, const char *result);
/* The limit on a restart's wait for its first step (restart_watch): as long as any wait of the
 * job, since a job whose log shows a step an hour has that. */
double hb_restart_limit(const struct hn_brain *b, const struct job *j);
/* Each job on a tick: ended (no poll lists it, or silent and unlisted), hung, hung at
 * start, or a history point. */
void hb_jobs_tick(struct hn_brain *b, double now);

#endif
