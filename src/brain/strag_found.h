/*
 * strag_found.h - the straggler detector's verdicts (jobs/straggler.h) as findings
 * (docs/jobs.md, "Slower than what"): a rank persistently slower than its peers is a straggler
 * (its node suspect; one per job, the costliest, which the policy plans for); slower than its
 * own normal only, a drift (information); slower because it shares its GPU with ranks that
 * look normal, time slicing (information). After each row the job's straggler is followed:
 * its figure against the peers now, and another rank taking its place when it recovers.
 */
#ifndef HN_BRAIN_STRAG_FOUND_H
#define HN_BRAIN_STRAG_FOUND_H

#include "brain/job.h"

/* One verdict of j's detector: persistent or from the start (straggler_found), a recovery
 * (held: hb_quiet_start), a transient or a whole-job slowdown (information). */
void hb_detection(struct hn_brain *b, double now, struct job *j,
                  const struct hn_strag_detection *d);
/* The drifting ranks again, after each row: the detector reports an episode once, so a drift
 * that goes on growing until the rank is slower than its peers after all (a GPU that ran
 * faster than the others and keeps slowing down) becomes a straggler here. A rank whose
 * episode ended is no longer followed. */
void hb_drift_watch(struct hn_brain *b, double now, struct job *j, uint64_t step);
/*
 * The job's straggler after each row. One slow from the start is in no episode (its baseline
 * is its slow speed), so the detector says nothing when it catches up with its peers: its
 * learned baseline over the step's reference, back under STRAGGLER_MIN_VS_PEERS, says so, and
 * it recovers as an episode's straggler does (its planned drain cancelled, its share no
 * longer charged). Once the job's straggler recovered, or while its recovery is held
 * (hb_quiet_start), the slowest other rank still in an episode (the detector reported it once,
 * and straggler_found kept the costlier) becomes the job's straggler, planned for anew.
 */
void hb_strag_watch(struct hn_brain *b, double now, struct job *j, uint64_t step);
/*
 * The job's straggler against its peers now, after each row: the detector reports an episode
 * once, with its slowdown then, but a GPU that throttles more and more, or a rank that gets
 * better without recovering, moves on. Its share of each step (progress), the comparison with
 * another straggler and the policy at the checkpoint all go by the figure now: the median of
 * its recent reports over the step's reference inside an episode, its learned baseline over
 * the typical rank's for one slow from the start (as hb_strag_watch). When the decision changes
 * with it (REPLAN_FACTOR), the plan is made again.
 */
void hb_strag_follow(struct hn_brain *b, double now, struct job *j, uint64_t step);

#endif
