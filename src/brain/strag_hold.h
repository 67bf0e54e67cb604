/*
 * strag_hold.h - how a straggler episode ends (docs/jobs.md, "Recovery"): a told rank that
 * keeps up again has its recovery held for straggler-hold, so that a rank that keeps falling
 * back is one episode, and told when the hold is over (a drain the guard held for it is called
 * off then); the job's straggler state is reset when its detector starts again. Also the job's
 * plan text (hb_set_plan), which every straggler part writes.
 */
#ifndef HN_BRAIN_STRAG_HOLD_H
#define HN_BRAIN_STRAG_HOLD_H

#include "brain/job.h"

/* Whether j's straggler is one whose recovery is held (hb_quiet_start): keeping up, it is not
 * charged nor shown, and a drain planned for it waits. */
int hb_strag_held(const struct job *j);
/* Sets j's plan, for people: cut at its size if need be (the decision comes first). */
void hb_set_plan(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * The job's straggler detector starts again (a new run, or a run whose rank count changed:
 * its ranks are not the ones the detector knew). What it found goes with it: the job's
 * straggler, its plan, and which ranks a finding named. A rank still slow is found anew, as
 * slow from the start. Kept, a straggler the new detector never flagged would have been
 * charged and its drain planned for ever, also after it recovered, which the new detector
 * cannot see. A drain the guard holds for an operator for the straggler stays held (it may
 * still be slow). The recoveries held for straggler-hold are told (hb_holds_end): those ranks
 * kept up until now, and a drain held for them is called off.
 */
void hb_detector_reset(struct hn_brain *b, double now, struct job *j);
/* The held recovery of rank, if any, ends: it is slow again (a relapse, counted). Returns
 * whether there was one. */
int hb_quiet_end(struct job *j, unsigned rank);
/* A told rank recovered for good: the job's straggler's plan and held drain go
 * (strag_recovered), and the recovery is told with evidence ev, and how often the rank fell
 * back while it was held (straggler-hold). held_at: when the guard held its node's drain for
 * it while it was the job's straggler, for one that no longer is (quiet). */
void hb_recovery_told(struct hn_brain *b, double now, struct job *j, unsigned rank, const char *ev,
                      double held_at);
/*
 * A told rank the detector saw recover (d): its recovery is held for straggler-hold
 * (hb_quiet_tell tells it then), so that a rank that keeps falling back (a GPU throttling on and
 * off) is one episode and not three findings every few minutes. Meanwhile the job's straggler
 * is not charged and not shown, and a drain planned for it waits. Without a hold, or with
 * QUIET_MAX held already, it is told now.
 */
void hb_quiet_start(struct hn_brain *b, double now, struct job *j,
                    const struct hn_strag_detection *d);
/* The recoveries held for straggler-hold and not broken by a relapse are told, after each
 * row; all of them (`all`) when the run ends (hb_holds_end). */
void hb_quiet_tell(struct hn_brain *b, double now, struct job *j, int all);
/* The run ends (hb_interrupt_n) while recoveries are held: those ranks kept up until its end, and
 * are told so now, calling off a drain the guard held for them as a recovery then would have
 * (held_drain_off). Dropped untold, such a drain stayed held for an operator to approve. */
void hb_holds_end(struct hn_brain *b, double now, struct job *j);

#endif
