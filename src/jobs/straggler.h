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
 * Algorithm (docs/straggler.md has the long version and the reasons):
 *   1. Peer normalisation. Each step, the median over the reporting ranks m_t is found by
 *      selection (O(ranks)); each rank's ratio q = x / m_t. A whole-job slowdown, a checkpoint
 *      stall or a synchronised pause moves m_t with everyone and cancels out of q.
 *   2. Own baseline. A rank's normal ratio b is learned from its first `warmup` reports (their
 *      median, robust to spikes) and then follows slow drifts by an EWMA of winsorised ratios,
 *      frozen while the rank looks suspicious. Constant heterogeneity (one rank 9% slower than
 *      another for the whole job, Alibaba job 2) is the rank's normal and is never flagged. A
 *      rank already more than `from_start_min` slower than the peer median when its warm-up ends
 *      is reported once as kind from_start instead; smaller offsets are normal heterogeneity.
 *   3. Evidence. The excess d = q / b - 1 is standardised by the larger of the rank's own noise
 *      (EWMA of absolute deviations, robust scale) and this step's spread across ranks (1.4826 x
 *      the cross-rank MAD of d, which discounts steps where everyone scatters, as in a
 *      checkpoint), then passed through a running median of 3, so that one spike, however
 *      large, contributes nothing, and clipped at `clip` noise units.
 *   4. Persistence. A one-sided CUSUM (Page 1954, "Continuous inspection schemes", Biometrika
 *      41) with reference `cusum_k` accumulates the filtered evidence; it fires at `cusum_h`
 *      once at least `min_steps` reports since its onset are in and the median excess since the
 *      onset is at least `min_slowdown`. The onset is where the CUSUM last left zero (Page's
 *      estimate), corrected for the one step the median filter lags.
 *   5. Episodes. A persistent detection comes once per episode; the rank then waits for the
 *      median excess of its last `recover_window` reports to fall below half the detected
 *      slowdown, reports kind recovered, and re-arms. A run of steps at least `transient_min`
 *      slower that returns before the CUSUM fires is reported as kind transient when it ends.
 *   6. The job. The median m_t itself runs through the same baseline, filter and CUSUM against
 *      its own history: a rise of at least `job_min_slowdown` is kind job_slowdown (rank =
 *      HN_STRAG_ALL_RANKS), its end kind recovered with the same rank.
 *
 * Contract. Deterministic (the same rows give the same detections), no clock, no I/O, no
 * allocation after hn_strag_new(): the state is sized by the rank count at creation and stays
 * flat however long the job runs (EWMAs and 16-entry rings, no growing arrays). One step costs
 * O(ranks): two selections over the ranks and a constant amount of work per rank. One detector
 * belongs to one job and one thread at a time; it takes no locks.
 */
#ifndef HN_STRAGGLER_H
#define HN_STRAGGLER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define HN_STRAG_ALL_RANKS UINT_MAX      /* rank of a job-level detection */
#define HN_STRAG_MAX_RANKS (1u << 22)    /* hn_strag_new refuses more */
#define HN_STRAG_RING      16            /* per-rank history kept, in reports */
#define HN_STRAG_MAX_QUEUE ((size_t)4096) /* detections queued between polls, at most */

enum hn_strag_kind {
    HN_STRAG_PERSISTENT,   /* rank r slowed down at onset_step and stays slow */
    HN_STRAG_TRANSIENT,    /* rank r was slow from onset_step to end_step, then returned */
    HN_STRAG_JOB_SLOWDOWN, /* every rank slowed down together (rank = HN_STRAG_ALL_RANKS) */
    HN_STRAG_RECOVERED,    /* a persistent or job_slowdown episode ended at end_step */
    HN_STRAG_FROM_START,   /* rank r was already slow when its baseline was learned */
};

/* Thresholds. "Noise units" are the rank's robust relative standard deviation (step 3 above).
 * hn_strag_config_default() gives the values in brackets, tuned by bench/straggler. */
struct hn_strag_config {
    unsigned warmup;         /* reports per rank that learn its baseline [16], 3..16 */
    double quorum;           /* fraction of ranks that must report for a step to count [0.5] */
    double baseline_alpha;   /* EWMA weight of one report in baseline and noise [1/64] */
    double noise_floor;      /* smallest relative noise assumed [0.005] */
    double clip;             /* evidence per step is capped here, noise units [5] */
    double cusum_k;          /* CUSUM reference, noise units [1] */
    double cusum_h;          /* CUSUM decision threshold, noise units [8] */
    unsigned min_steps;      /* reports since onset before a persistent detection [3] */
    double min_slowdown;     /* smallest slowdown reported as persistent [0.02] */
    double transient_min;    /* smallest slowdown of a step that counts as a spike [0.5] */
    unsigned recover_window; /* reports whose median decides recovery [8], 3..16 */
    double from_start_min;   /* slowdown vs peers at the end of warm-up reported [0.2] */
    double job_min_slowdown; /* smallest whole-job slowdown reported [0.1] */
};

struct hn_strag_detection {
    enum hn_strag_kind kind;
    unsigned rank;        /* 0-based; HN_STRAG_ALL_RANKS for the whole job */
    uint64_t onset_step;  /* first slow step (estimated) */
    uint64_t detect_step; /* the step whose row produced this detection */
    uint64_t end_step;    /* transient, recovered: last slow step; otherwise 0 */
    double slowdown;      /* median excess over the rank's own normal: 0.30 = 30% slower */
    double vs_peers;      /* median excess over the peer median (job: over the job's normal) */
    double peak;          /* largest one-step excess in the episode */
    double noise;         /* the rank's relative noise (standard deviation) at detection */
    double score;         /* CUSUM statistic at detection, noise units */
};

/* What the detector knows about one rank (or, for HN_STRAG_ALL_RANKS, the job median). */
struct hn_strag_rank_info {
    int warm;        /* baseline learned */
    int slow;        /* inside a persistent (job: job_slowdown) episode */
    double baseline; /* normal ratio to the peer median (job: normal median step time) */
    double noise;    /* relative standard deviation */
    double cusum;    /* current CUSUM statistic, noise units */
    uint64_t reports;
};

struct hn_strag_stats {
    uint64_t steps;   /* steps that counted */
    uint64_t skipped; /* steps without a quorum of reporting ranks */
    uint64_t dropped; /* detections lost because the queue was full */
    uint64_t rejected; /* calls with a step number not above the previous one */
    unsigned slow_ranks; /* ranks inside a persistent episode now */
};

struct hn_strag;

void hn_strag_config_default(struct hn_strag_config *cfg);

/* Checks cfg; returns 0, or -EINVAL with the first problem in err. */
int hn_strag_config_check(const struct hn_strag_config *cfg, char *err, size_t errsize);

/* A detector for a job of `ranks` ranks (1..HN_STRAG_MAX_RANKS) with thresholds cfg (copied;
 * NULL: the defaults). Returns NULL when cfg fails hn_strag_config_check or ranks is out of
 * range. All memory is allocated here; the caller frees it with hn_strag_free(). */
struct hn_strag *hn_strag_new(const struct hn_strag_config *cfg, unsigned ranks);
void hn_strag_free(struct hn_strag *s);

unsigned hn_strag_ranks(const struct hn_strag *s);

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
