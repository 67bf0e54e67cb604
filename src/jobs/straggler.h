/*
 * straggler.h - finds the rank of a synchronous training job that is persistently slower than
 * its peers: which rank, from which step, by how much. It tells a one-off spike (a garbage
 * collection pause, a checkpoint) from a persistent slowdown, and one slow rank from the whole
 * job slowing down.
 *
 * Input. The caller assembles one row per step: seconds[r] for every rank r (NaN, zero or a
 * negative value: the rank did not report this step). What "seconds" is belongs to the caller
 * and only ratios matter, so any unit or a normalised value works. In synchronous data-parallel
 * training every rank waits for the slowest one in the gradient all-reduce, so per-rank *wall*
 * step times are nearly equal and hide the culprit; feed the time a rank spent computing (the
 * step minus the time waiting in collectives) when phase times are reported, or a per-rank
 * mini-batch time as in the Alibaba PAI traces (tests/fixtures/step-times).
 *
 * Algorithm (docs/straggler.md has the long version, the reasons and the measurements):
 *   1. Peer normalisation. Each step has a reference time m_t, found by selection
 *      (O(ranks)): the median of the warm ranks' reports each over its own normal (baseline
 *      b, times 1 + its slowdown inside an episode), times the typical baseline (the median of
 *      all reports until ranks have baselines). Each rank's ratio q = x / m_t. A whole-job
 *      slowdown, a checkpoint stall or a synchronised pause moves m_t with everyone and cancels
 *      out of q.
 *   2. Own baseline. A rank's normal ratio b is the median of its first `warmup` reports,
 *      refined by a running mean over as many again (settling: no evidence counts yet), then
 *      followed by Brown's double exponential smoothing with weight `baseline_alpha` (less,
 *      in proportion, for a rank noisier than `alpha_noise`), which tracks a linear drift
 *      without lag, fed winsorised ratios and frozen while the rank looks suspicious.
 *      Constant heterogeneity (one rank 9% slower than another for the whole job, Alibaba
 *      job 2) is the rank's normal and never flagged. A rank already `from_start_min` or more
 *      slower than the reference when its warm-up ends is reported once as from_start;
 *      smaller offsets are normal heterogeneity.
 *   3. Evidence. The excess d = q / b - 1 is standardised by the rank's noise, taken as the
 *      largest of its own robust estimate, the typical rank's (the median over ranks, so that
 *      no rank is assumed quieter than its peers) and this step's cross-rank spread over 1.5
 *      (steps where everyone scatters count less), times sqrt((1 + rho) / (1 - rho)) for the
 *      typical lag-1 autocorrelation rho of the reports (real step times wander; a CUSUM that
 *      assumed independent reports would add a wander up to a detection). The evidence of one
 *      report is the log-likelihood ratio of that z for a shift of `shift` noise units under
 *      Student-t noise with `tail_dof` degrees of freedom. It is bounded and falls back beyond
 *      its peak, so heavy tails do not add up to an alarm and a spike (a GC pause, its spill
 *      into the next step) adds almost nothing. A second ratio, for a shift of `big_shift`
 *      noise units, is held at its maximum beyond its peak, so a rank that became twice as
 *      slow is still found; one ordinary report cancels a spike's worth of it.
 *   4. Persistence. Two one-sided CUSUMs (Page 1954, "Continuous inspection schemes",
 *      Biometrika 41), one per ratio, sum the evidence; either fires (at `cusum_h`, `big_h`)
 *      once at least `min_steps` reports since its onset are in, the median excess since the
 *      onset is at least `min_slowdown` and the newest report is still at least half that
 *      slow. The onset is where that CUSUM last left zero (Page's estimate of the change
 *      point).
 *   5. Episodes. A persistent detection comes once per episode. Recovery is the same test
 *      turned round (evidence that the reports are back at the baseline rather than still a
 *      quarter as slow, and the median of the last `recover_window` reports below that); it is
 *      reported as kind recovered with the episode's mean slowdown, and the rank re-arms. An
 *      excursion that contained spikes (reports `transient_min` or more slower) and ended
 *      without a persistent detection is reported as kind transient once its CUSUM is back
 *      at zero.
 *   6. The job. The median m_t itself runs through the same baseline, evidence and CUSUM
 *      against its own history: a rise of at least `job_min_slowdown` is kind job_slowdown
 *      (rank HN_STRAG_ALL_RANKS), its end kind recovered with the same rank. Job-level spikes
 *      (checkpoints, evaluation) are the rhythm of training and not reported.
 *
 * Contract. Deterministic (the same rows give the same detections, on any machine), no clock,
 * no I/O, no allocation after hn_strag_new(): the state is sized by the rank count at creation
 * (about 410 bytes a rank, written once there so that no page fault comes later) and stays
 * flat however long the job runs (smoothed estimates and 16-entry rings, no growing arrays).
 * One step costs O(ranks): one selection over the ranks and a constant amount of work per
 * rank, most of it in one loop that runs on vectors of ranks (the quick path; reports that
 * lead to a decision, spikes and episodes take the full path, one rank at a time), about 0.2
 * ms at 16,384 ranks (bench/results/straggler.md). One detector belongs to one job and one
 * thread at a time; it takes no locks.
 */
#ifndef HN_STRAGGLER_H
#define HN_STRAGGLER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define HN_STRAG_ALL_RANKS UINT_MAX   /* rank of a job-level detection */
#define HN_STRAG_MAX_RANKS (1u << 22) /* hn_strag_new refuses more */
#define HN_STRAG_RING      16         /* per-rank history kept, in reports */

enum hn_strag_kind {
    HN_STRAG_PERSISTENT,   /* rank r slowed down at onset_step and stays slow */
    HN_STRAG_TRANSIENT,    /* rank r was slow from onset_step to end_step, then returned */
    HN_STRAG_JOB_SLOWDOWN, /* every rank slowed down together (rank = HN_STRAG_ALL_RANKS) */
    HN_STRAG_RECOVERED,    /* a persistent or job_slowdown episode ended at end_step */
    HN_STRAG_FROM_START,   /* rank r was already slow when its baseline was learned */
};

/* Thresholds. "Noise units" are the rank's robust relative standard deviation (step 3 above).
 * hn_strag_config_default() gives the values in brackets, chosen with bench/straggler: at most
 * one false alarm per million rank-steps on its generated jobs with margin to spare. */
struct hn_strag_config {
    unsigned warmup;         /* reports that learn a rank's baseline [16], 3..16; as many
                              * again settle it before evidence counts */
    double quorum;           /* fraction of ranks that must report for a step to count [0.5] */
    double baseline_alpha;   /* EWMA weight of one report in baseline and noise [1/64] */
    double alpha_noise;      /* a rank noisier than this uses baseline_alpha * alpha_noise /
                              * its noise instead [0.02]; 1: off */
    double noise_floor;      /* smallest relative noise assumed [0.005] */
    double shift;            /* the slowdown the evidence is tuned to, noise units [2] */
    double tail_dof;         /* degrees of freedom of the t noise model [4] */
    double cusum_h;          /* CUSUM decision threshold, in log-likelihood [12.5] */
    unsigned min_steps;      /* reports since onset before a persistent detection [3] */
    double min_slowdown;     /* smallest slowdown reported as persistent [0.025] */
    double transient_min;    /* smallest one-report slowdown that counts as a spike [0.5] */
    unsigned recover_window; /* reports whose median decides recovery [8], 3..16 */
    double from_start_min;   /* slowdown vs peers at the end of warm-up reported [0.2] */
    double job_min_slowdown; /* smallest whole-job slowdown reported [0.1] */
    double big_shift;        /* the large shift a second CUSUM is tuned to, noise units [4];
                              * 0: none. Above shift */
    double big_h;            /* its decision threshold, in log-likelihood [19] */
};

struct hn_strag_detection {
    enum hn_strag_kind kind;
    unsigned rank;        /* 0-based; HN_STRAG_ALL_RANKS for the whole job */
    uint64_t onset_step;  /* first slow step (estimated) */
    uint64_t detect_step; /* the step whose row produced this detection */
    uint64_t end_step;    /* transient, recovered: last slow step; otherwise 0 */
    double slowdown;      /* excess over the rank's own normal: 0.30 = 30% slower. The median
                           * since onset for persistent and job_slowdown, the mean over the
                           * episode for recovered, the peak for transient, vs the peers for
                           * from_start */
    double vs_peers;      /* median excess over the step's reference (job: over its normal) */
    double peak;          /* largest one-step excess in the episode */
    double noise;         /* the rank's relative noise (standard deviation) at detection */
    double score;         /* the CUSUM (log-likelihood ratio) that fired the persistent or
                           * job_slowdown detection of this episode; 0 for the other kinds */
};

/* What the detector knows about one rank (or, for HN_STRAG_ALL_RANKS, the job median). */
struct hn_strag_rank_info {
    int warm;        /* baseline learned */
    int slow;        /* inside a persistent (job: job_slowdown) episode */
    double baseline; /* normal ratio to the step's reference m_t (job: its normal m_t) */
    double noise;    /* relative standard deviation */
    double cusum;    /* current CUSUM statistic (in an episode: the evidence of recovery) */
    uint64_t reports;
    /* Inside a persistent episode (rank only; else 0): its onset, its slowdown now (the
     * median excess of its last, up to 16, reports over its baseline, at least 0), and the
     * same against the step's reference (as a detection's vs_peers). */
    uint64_t onset_step;
    double slowdown_now, vs_peers_now;
};

struct hn_strag_stats {
    uint64_t steps;      /* steps that counted */
    uint64_t skipped;    /* steps without a quorum of reporting ranks */
    uint64_t dropped;    /* detections lost: the queue (ranks + 2) was full, not polled for steps */
    uint64_t rejected;   /* calls with a step number not above the previous one */
    unsigned slow_ranks; /* ranks inside a persistent episode now */
};

struct hn_strag;

void hn_strag_config_default(struct hn_strag_config *cfg);

/* Checks cfg; returns 0, or -EINVAL with the first problem in err. */
int hn_strag_config_check(const struct hn_strag_config *cfg, char *err, size_t errsize);

/* The thresholds an operator sets by name: `houston straggler --NAME VALUE` and the
 * controller's `straggler-NAME = VALUE`. warmup (warmup), threshold (cusum_h), big-threshold
 * (big_h), min-slowdown, transient-min, from-start-min, job-min-slowdown, quorum,
 * baseline-alpha and alpha-noise. hn_strag_config_set parses value and sets it: 0, -ENOENT
 * for a name not in the list, -EINVAL for a value out of its range (hn_strag_config_check's),
 * with the reason in err; a refused value changes nothing. hn_strag_setting_name gives the
 * i-th name, NULL past the last. */
int hn_strag_config_set(struct hn_strag_config *cfg, const char *name, const char *value, char *err,
                        size_t errsize);
const char *hn_strag_setting_name(size_t i);
/* The same thresholds as a settings table (common/settings.h) over struct hn_strag_config:
 * the controller nests it under straggler-, `houston straggler` makes its flags from it. */
struct hn_settings;
extern const struct hn_settings hn_strag_settings;

/* A detector for a job of `ranks` ranks (1..HN_STRAG_MAX_RANKS) with thresholds cfg (copied;
 * NULL: the defaults). Returns NULL when cfg fails hn_strag_config_check or ranks is out of
 * range. All memory is allocated here; the caller frees it with hn_strag_free(). */
struct hn_strag *hn_strag_new(const struct hn_strag_config *cfg, unsigned ranks);
void hn_strag_free(struct hn_strag *s);

unsigned hn_strag_ranks(const struct hn_strag *s);
/* The reports a step needs to count (ceil(quorum x ranks), at least 1): a step with fewer is
 * skipped. */
unsigned hn_strag_quorum(const struct hn_strag *s);

/*
 * Feeds one complete step: seconds[r] for r in 0..ranks-1 (NaN or <= 0: no report). Step
 * numbers must increase (gaps are fine); a step number not above the previous one is refused
 * with -EINVAL and counted. A step where fewer than quorum x ranks report changes nothing.
 * Returns the number of detections queued by this step (read them with hn_strag_poll), >= 0.
 */
int hn_strag_step(struct hn_strag *s, uint64_t step, const double *seconds);

/* Takes the oldest queued detection into *out: 1, or 0 when none is queued. */
int hn_strag_poll(struct hn_strag *s, struct hn_strag_detection *out);

/* Fills *out for rank (or HN_STRAG_ALL_RANKS); -EINVAL for a rank out of range. */
int hn_strag_rank_get(const struct hn_strag *s, unsigned rank, struct hn_strag_rank_info *out);

void hn_strag_stats_get(const struct hn_strag *s, struct hn_strag_stats *out);

/* "persistent", "transient", "job_slowdown", "recovered", "from_start"; "unknown" otherwise. */
const char *hn_strag_kind_name(enum hn_strag_kind k);

#endif
