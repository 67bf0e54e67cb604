/*
 * rows.h - a job's step reports assembled into rows, one per step, handed to its straggler
 * detector (jobs/straggler.h) in step order, and the detector's verdicts to strag_found.c.
 * Compute time (step minus collective wait) is used when ranks report it: in synchronous
 * training the slowest rank sets everyone's wall time.
 */
#ifndef HN_BRAIN_ROWS_H
#define HN_BRAIN_ROWS_H

#include "brain/job.h"

/* Files rank's compute time secs for step; rows leave in step order once complete or pushed
 * out by later steps, and go to the detector (docs/jobs.md, "Stragglers and the policy"). */
void hb_row_put(struct hn_brain *b, double now, struct job *j, unsigned rank, uint64_t step,
                double secs);

#endif
