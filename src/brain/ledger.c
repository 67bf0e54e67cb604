/*
 * ledger.c - ledger.h says what this part does and owns.
 */
#include "brain/ledger.h"

#include "brain/job.h"
#include "brain/fleet.h"
#include "brain/jobtab.h"
#include "brain/strag_hold.h"
#include "common/stats.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EWMA_ALPHA 0.1

static const char *const cause_names[HN_LOSS_NCAUSES] = {"failure", "straggler", "hang", "operator",
                                                         "other"};

const char *hn_loss_cause_name(enum hn_loss_cause c)
{
    return (unsigned)c < HN_LOSS_NCAUSES ? cause_names[c] : "unknown";
}

static double nanmedian_small(const double *v, unsigned n)
{
    double s[RECENT];
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!isnan(v[i]))
            s[k++] = v[i];
    }
    return k ? hn_median(s, k) : NAN;
}

double hb_typical_step(const struct job *j)
{
    return nanmedian_small(j->pace.recent, j->pace.nrecent);
}

#define WALL_JUDGE_S  300.0
#define WALL_WINDOW_S 3600.0

int hb_wall_mismatch(const struct job *j)
{
    return j->pace.wall_s >= WALL_JUDGE_S && j->pace.wall_work > WALL_K * j->pace.wall_s &&
           j->pace.wall_adv > 0 && j->pace.wall_bad_s > j->pace.wall_s / 2;
}

double hb_typical_gap(const struct job *j)
{
    double gap = nanmedian_small(j->pace.gaps, j->pace.ngaps), step = hb_typical_step(j);
    gap = isnan(gap) || gap < step ? step : gap;
    if (hb_wall_mismatch(j))
        gap = fmin(gap, WALL_K * j->pace.wall_s / j->pace.wall_adv);
    return gap;
}

/* Reports that came less than this apart are a backlog, not steps as they ran (a log
 * `houston tail` reads from its start, about 1 ms a line; an agent's frames replayed after a
 * controller restart): not judged. Training steps take longer. */
#define WALL_FRAME_MIN_S 0.05

/* An advance of j at now whose steps took `work` s by their reports: the advances of one time
 * (the agent stamps each report as it receives it; a frame from the sim or a test may carry
 * many at one time) are summed, and judged against the wall time since the time before, when
 * houston watched it (`watched`: unbroken, no pause announced) and it is WALL_FRAME_MIN_S or
 * more. */
static void wall_frame(struct job *j, double now, double work, int watched)
{
    if (now > j->pace.frame_at) {
        double wall = j->pace.frame_at - j->pace.frame_from;
        if (j->pace.frame_from > 0 && wall >= WALL_FRAME_MIN_S && isfinite(j->pace.frame_work)) {
            j->pace.wall_work += j->pace.frame_work;
            j->pace.wall_s += wall;
            if (j->pace.frame_work > WALL_K * wall)
                j->pace.wall_bad_s += wall;
            j->pace.wall_adv += j->pace.frame_adv;
            if (j->pace.wall_s > WALL_WINDOW_S) {
                j->pace.wall_work /= 2;
                j->pace.wall_s /= 2;
                j->pace.wall_bad_s /= 2;
                j->pace.wall_adv = (j->pace.wall_adv + 1) / 2;
            }
        }
        j->pace.frame_from = watched ? j->pace.frame_at : 0;
        j->pace.frame_at = now;
        j->pace.frame_work = 0;
        j->pace.frame_adv = 0;
    }
    j->pace.frame_work += work;
    j->pace.frame_adv++;
}

/* ---- accounting ---- */

void hb_lose_n(struct job *j, enum hn_loss_cause cause, double seconds, unsigned ranks)
{
    j->l.lost_s[cause] += seconds;
    j->l.lost_gpu_s[cause] += seconds * ranks;
}

void hb_lose(struct job *j, enum hn_loss_cause cause, double seconds)
{
    hb_lose_n(j, cause, seconds, j->l.ranks);
}

void hb_restart_taken(struct job *j, double now, double seconds)
{
    double typ = hb_typical_step(j);
    double took = now - j->l.restart_from - (isnan(typ) ? seconds : fmin(seconds, typ));
    if (!(j->l.restart_from > 0) || !(took >= 0) || !isfinite(took))
        return;
    if (j->restart.nrestarts == RESTARTS_KEPT)
        memmove(j->restart.restarts, j->restart.restarts + 1,
                (RESTARTS_KEPT - 1) * sizeof(j->restart.restarts[0]));
    else
        j->restart.nrestarts++;
    j->restart.restarts[j->restart.nrestarts - 1] = took;
    double v[RESTARTS_KEPT];
    memcpy(v, j->restart.restarts, j->restart.nrestarts * sizeof(v[0]));
    j->l.restart_s = hn_median(v, j->restart.nrestarts);
}

double hb_job_end(const struct job *j, double now)
{
    if (!j->l.ended)
        return now;
    return j->l.ended_at > 0 ? j->l.ended_at : j->l.last_report;
}

double hb_ettr(const struct job *j, double now)
{
    double wall = hb_job_end(j, now) - j->l.first_seen;
    return wall > 0 ? fmin(1.0, fmax(0.0, j->l.productive_s / wall)) : NAN;
}

double hb_job_mfu(const struct job *j)
{
    return j->rate.mfu;
}

void hb_add_point(struct hn_jobs *js, struct job *j, double now)
{
    if (now < j->hist.next_point)
        return;
    if (j->hist.nseries == SERIES_MAX) { /* keep every other point: memory stays flat */
        for (size_t i = 0; i < SERIES_MAX / 2; i++)
            j->hist.series[i] = j->hist.series[2 * i + 1];
        j->hist.nseries = SERIES_MAX / 2;
        j->hist.series_dt *= 2;
        j->hist.points_rewrite = 1;
    }
    /* A job waiting for its next run, or hung, does no model FLOPs: no MFU for that time (the
     * view keeps the last run's figure). */
    double mfu = j->l.pending || j->l.hung || j->sched.waiting ? NAN : hb_job_mfu(j);
    j->hist.series[j->hist.nseries++] =
        (struct hn_job_point){now, mfu, hb_ettr(j, now), hb_typical_step(j)};
    j->hist.next_point = now + j->hist.series_dt;
    hb_job_changed(js, j);
}

static void ewma(double *acc, double x)
{
    if (isnan(x))
        return;
    *acc = isnan(*acc) ? x : *acc + EWMA_ALPHA * (x - *acc);
}

double hb_rank_seconds(const struct hn_step_in *s)
{
    if (!isnan(s->comm_s))
        return s->comm_s < s->seconds ? s->seconds - s->comm_s : NAN;
    return s->seconds;
}

void hb_progress(struct job *j, double now, const struct hn_step_in *s, int unbroken)
{
    /* The first report of a run is progress even at step 0 (a loop that counts from 0): front
     * and l.step start at 0, and a job whose only report is step 0 would never be checked for
     * hangs. */
    if (s->step <= j->watch.front && j->watch.advanced)
        return;
    if (j->watch.last_progress > 0 && j->watch.watched) {
        /* A wait the job came back from (a checkpoint save, an evaluation) is its own to
         * have: the hang limit allows for it next time. Not one houston did not watch: the
         * first step of a run (its time is the client's), after a restore, a job listed
         * again after it ended, a wait its agents went silent in or their frames broke. Nor
         * one in an announced pause (a pause notice): it will announce the next one too, and
         * the limit between its pauses stays its steps' own. */
        double gap = now - j->watch.last_progress;
        int learn = unbroken && !j->watch.pause;
        /* Less the steps in between but the last, by its time: a wait over many steps whose
         * reports were lost (a full queue) or left out (a log interval) is their work. (Watched
         * means advanced: the step is past front here.) */
        double pause = fmax(0, gap - (double)(s->step - j->watch.front - 1) * s->seconds);
        if (learn && pause > j->l.pause_s)
            j->l.pause_s = pause;
        /* The rhythm of its reports: what the steps since the last one took (a report per
         * log interval of many steps), or the wait itself when houston watched it. */
        double rhythm = (double)(s->step - j->watch.front) * s->seconds;
        wall_frame(j, now, rhythm, learn);
        if (learn && gap > rhythm)
            rhythm = gap;
        if (isfinite(rhythm)) {
            j->pace.run_gaps = 1;
            j->pace.gaps[j->pace.gaps_at] = rhythm;
            j->pace.gaps_at = (j->pace.gaps_at + 1) % RECENT;
            if (j->pace.ngaps < RECENT)
                j->pace.ngaps++;
        }
    } else {
        j->pace.frame_from = 0; /* not watched: the next frame is not judged */
        j->pace.frame_at = now;
        j->pace.frame_work = 0;
        j->pace.frame_adv = 0;
    }
    if (s->step > j->l.step || !j->watch.advanced) {
        double add = s->seconds;
        if (j->watch.last_progress > 0) {
            uint64_t steps = s->step > j->l.step ? s->step - j->l.step : 1;
            add = fmin((double)steps * s->seconds, now - j->watch.last_progress);
            if (add < 0)
                add = 0;
        }
        /* A straggler's share of each step is GPU time lost to it; the step still counts as
         * productive (Meta's ETTR), the slowdown shows in MFU instead. */
        if (j->strag.rank >= 0 && !hb_strag_held(j)) {
            double share = add * j->strag.slow / (1 + j->strag.slow);
            hb_lose(j, HN_LOSS_STRAGGLER, share);
            j->l.strag_ckpt_s += share;
        }
        j->l.productive_s += add;
        j->l.since_ckpt_s += add;
        j->l.step = s->step;
    }
    j->watch.front = s->step;
    j->watch.advanced = 1;
    j->watch.last_progress = fmax(j->watch.last_progress, now); /* agents' clocks differ a little */
    j->l.hung = 0;
    j->watch.watched = 1;
    /* Back from the pause it declared; two advances end it too (a notice whose step was off:
     * a sample count, say). */
    if (j->watch.pause && (j->watch.front > j->watch.pause_step || ++j->watch.pause_adv >= 2))
        j->watch.pause = 0;
    j->pace.recent[j->pace.recent_at] = s->seconds;
    j->pace.recent_at = (j->pace.recent_at + 1) % RECENT;
    if (j->pace.nrecent < RECENT)
        j->pace.nrecent++;
}

void hb_rates(const struct hn_brain *b, struct job *j, int node, const struct hn_step_in *s)
{
    if (!(s->seconds > 0))
        return;
    double tps = s->tokens / s->seconds; /* NaN when tokens are not reported */
    ewma(&j->rate.tokens_per_s_rank, tps);
    double tf = !isnan(s->tflops) ? s->tflops : tps * s->flops_per_token / 1e12;
    ewma(&j->rate.tflops, tf);
    /* Each report against the peak of the GPU it ran on: a job across two SKUs is measured
     * against each one's. */
    double peak = b->nodes[node].peak;
    if (peak > 0)
        ewma(&j->rate.mfu, tf * 1e12 / peak);
}

void hb_end_wait(struct job *j, double at)
{
    j->l.ended_at = fmax(at, j->l.interrupted_at);
    hb_lose_n(j, j->l.pending_cause, j->l.ended_at - j->l.interrupted_at, j->l.charged_ranks);
    j->l.interrupted_at = j->l.ended_at;
}
