/*
 * jobs.c - the brain's view of training jobs: step reports in, and out of them the job ledger
 * (productive and lost time by cause, ETTR, MFU), stragglers and hangs (docs/jobs.md).
 *
 * Accounting (Meta's ETTR, "Revisiting Reliability in Large-Scale ML Research Clusters",
 * Kokolis et al. 2024: productive time over wall time, where recomputation since the last
 * checkpoint and restart overhead are not productive):
 *   - a report that advances the job's highest step adds that step's time to productive time
 *     and to the work since the last checkpoint (capped by the wall time since the previous
 *     advance, so sparse reports are not over-counted);
 *   - an interruption (houston drains a node of the job, a hang, or a restart houston did not
 *     cause, seen as a rank's step going backwards) moves the work since the last checkpoint
 *     from productive to lost, and the time from the last progress until the first step of
 *     the next run is lost too, all charged to the interruption's cause;
 *   - while a persistent straggler holds the job back, the share of each step it costs
 *     (slowdown / (1 + slowdown)) is GPU time lost to "straggler" (the step still counts as
 *     productive: the slowdown lowers MFU, not ETTR).
 * GPU-hours are those times multiplied by the job's ranks (one GPU per rank).
 *
 * Stragglers: the ranks' step times are assembled into one row per step (a few steps may be
 * in flight at once, since agents send every cycle) and handed to the straggler detector
 * (jobs/straggler.h) in step order. Compute time (step minus collective wait) is used when
 * ranks report it, because in synchronous training the slowest rank sets everyone's wall time.
 */
#include "brain/brain_int.h"

#include "common/stats.h"
#include "common/stepmsg.h"
#include "common/util.h"
#include "jobs/straggler.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANKS_MAX    (1u << 20) /* ranks of one job, whatever the scheduler says */
#define ROWS         8          /* steps being assembled at once */
#define STRIDE_MAX   1024       /* most steps between two that a job's detector sees (row_put) */
#define STRIDE_CALM  512        /* complete rows in a row after which the stride is halved */
#define RECENT       32         /* job-level step times kept for the typical step time */
#define SERIES_MAX   512        /* points of a job's history; thinned by half when full */
#define SERIES_DT    60.0       /* seconds between two points at first */
#define EWMA_ALPHA   0.1
#define CAP_WARN_S   60.0 /* a node's step_rank_cap findings: at most one a minute */
#define OWNERS_CAP   8192 /* job owners from a scheduler poll (hash slots, power of two) */
#define OWNERS_MAX   6144 /* owners kept from one poll (3/4 of OWNERS_CAP); others unknown */
#define OWNER_WARN_S 60.0 /* a node's step_owner findings: at most one a minute */
/* Measured restarts a job keeps (restart_taken): the policy weighs their median, so that one
 * restart that waited long in the queue does not decide alone. */
#define RESTARTS_KEPT 5
/* The longest step time taken: a day. More is a client's mistake (1e308 made lost GPU time
 * overflow to infinity), refused like any value the brain cannot use. */
#define STEP_SECONDS_MAX 86400.0

/* The phases of a step a report may time (fwd=, bwd=, opt=; comm= is the wait, not work). */
enum { PHASE_FORWARD, PHASE_BACKWARD, PHASE_OPTIMIZER, PHASES };
static const char *const phase_names[PHASES] = {"forward", "backward", "optimizer"};
/* The phase a straggler loses the most time in is named when it takes this much longer than
 * the peers' (slow_phase). */
#define PHASE_SLOW_MIN 0.02
/* Each rank's last this many phase times are kept, and their median compared (rank_phase):
 * one step's spike (a garbage-collection pause in the forward pass) does not name the phase. */
#define PHASE_KEEP 3

struct rank_st {
    int node; /* -1: not reported yet */
    int gpu;
    unsigned run; /* the job's run this rank last reported in */
    uint64_t last_step;
    double last_secs;                /* its last compute time */
    int64_t uid;                     /* who sent its last report; -1: unknown */
    float phase[PHASES][PHASE_KEEP]; /* its last forward, backward, optimizer times (a ring at
                                        phase_at); NaN: not reported */
    uint8_t phase_at;
    uint8_t strag_told; /* a straggler finding named it in this run, and no recovery since */
    uint16_t relapses;  /* slow again within straggler-hold of a recovery, since it was told */
    /* The decision a straggler_policy finding told for it as the job's straggler since it was
     * told (drain_planned + 1), 0: none. A plan made again with the same decision is told
     * anyway for a rank none was told for (straggler_plan): one standing in drains another
     * node than the one the plan told. */
    uint8_t plan_told;
    /* When the guard held the drain of its node for it as the job's straggler (checkpoint), 0:
     * not. Kept by the rank, not the job: another rank may take the job's straggler over (one
     * bigger, one standing in, a relapse taking it back) before this one recovers, and its
     * recovery still calls that drain off (held_drain_off). */
    double held_at;
};

struct row {
    uint64_t step;
    unsigned have; /* ranks filled in */
    double *secs;  /* [ranks], NaN: not reported */
};

/* Drifting ranks a job follows, to call one a straggler once it is slower than its peers after
 * all (drift_watch); a ninth is not followed. */
#define DRIFT_MAX 8

/* Ranks a job holds the recovery of (straggler-hold: quiet_start); a ninth is told at once. */
#define QUIET_MAX 8

/* A told straggler the detector saw recover, whose recovery is told once it has kept up for
 * straggler-hold (quiet_tell): what the detector said then, and when the guard held the drain
 * of its node for it as the job's straggler (rank_st's held_at; 0: not): another rank may be the
 * job's straggler by the time it is told. */
struct quiet {
    unsigned rank;
    double at;
    uint64_t onset_step, detect_step;
    double slowdown;
    double held_at;
};

struct job {
    struct hn_job_ledger l;
    unsigned run; /* +1 per restart */
    struct rank_st *ranks;
    unsigned ranks_alloc; /* ranks and each row's secs are allocated this many (a shed job keeps
                             its largest size: it may grow back) */
    struct row rows[ROWS];
    uint64_t next_row; /* lowest step (from row_base) not yet handed to the detector */
    /* The detector sees the steps that are multiples of stride (1, 2, 4, ...; row_put). late
     * counts reports that came after their row had left, since step late_from. */
    uint32_t stride;
    unsigned late;
    uint64_t late_from;
    int rows_started;    /* row_base is set: the run's first step that reached row_put */
    uint64_t row_base;   /* next_row and late_from count steps from it */
    unsigned calm;       /* rows complete in a row at this stride, with room to spare */
    uint64_t top_at;     /* the newest step filed in a row, in strides from row_base */
    uint64_t late_total; /* all reports that came too late, for people */
    uint64_t untimed;    /* reports with no compute time (comm >= dur), for people */
    struct hn_strag *strag;
    double recent[RECENT];
    unsigned nrecent, recent_at;
    double gaps[RECENT]; /* waits between advances of the step (reports may be sparse) */
    unsigned ngaps, gaps_at;
    int run_gaps; /* this run has a wait of gaps[]: its own rhythm is known (hang_limit) */
    /* The reported step times against the wall clock (wall_frame), this run: the advances
     * that came at frame_at (the time their agent received them) with their reported seconds,
     * frame_from the frame before when houston watched the wait since (0: not); and the sums
     * over the frames judged so far (halved past WALL_WINDOW_S), wall_bad_s the wall time of
     * those whose own steps took more than WALL_K times it. wall_told: said so. */
    double frame_at, frame_from, frame_work, wall_work, wall_s, wall_bad_s;
    unsigned frame_adv, wall_adv;
    int wall_told;
    int advanced; /* this run's first report advanced it (progress; step 0 too) */
    /* Its highest step since this controller knew it (restored: from 0), which a hang waits
     * on; a run Slurm restarted from a checkpoint while the controller was away advances it
     * below the ledger's step. */
    uint64_t front;
    double last_progress; /* when the highest step last advanced */
    /* Interrupted, waiting for the next run's first step: l.pending, since l.interrupted_at
     * (its last progress), charged to l.pending_cause. */
    /* What the interruption charged as lost work (the time since the last checkpoint); the
     * next run's first step says where it really started again, against l.step, where the
     * last one stopped (resume). NaN: nothing to correct. */
    double charged_s;
    double charged_strag_s;           /* of it, the straggler's share (not the cause's) */
    enum hn_loss_cause charged_cause; /* the cause charged_s went to */
    double pending_at;                /* its last report before it was interrupted */
    /* Its restarts as measured (restart_taken): the last RESTARTS_KEPT, oldest first, whose
     * median is l.restart_s (measured from l.restart_from). */
    double restarts[RESTARTS_KEPT];
    unsigned nrestarts;
    /* others_cost's last sum, for node others_node (-1: none) at others_at. */
    double others_s, others_at;
    unsigned others_n, others_blind;
    int others_node;
    double run_from;   /* when this run's first report came (resume); 0: the first run */
    double sched_seen; /* time of the last scheduler poll that listed it, -1: never */
    int sched_waiting; /* that poll listed it waiting (pending, suspended...), not running */
    double run_listed; /* the first poll since it last waited or ended that listed it
                        * running; -1: none */
    double ran_again;  /* the first poll that listed it running after one listed it waiting;
                        * -1: none */
    double time_left;  /* seconds to its time limit as of time_left_at; -1: no limit known */
    double time_left_at;
    int unseen_told;  /* a hang_unseen finding was issued, and no frame of its nodes since */
    double unseen_at; /* when */
    int watched;      /* houston watched it since its last progress: a pause to learn from */
    /* A pause a rank declared (a checkpoint save; enum hn_pause_kind, 0: none) after step
     * pause_step, at pause_at; progress past that step, or a second advance since, ends it
     * (pause_adv counts them). */
    int pause;
    uint64_t pause_step;
    double pause_at;
    unsigned pause_adv;
    double tflops, tokens_per_s_rank; /* EWMA per rank, NaN unknown */
    double mfu;                       /* EWMA of each report's MFU on its node's GPU, NaN unknown */
    int strag_rank;                   /* -1: none */
    unsigned strag_shared;            /* the ranks it shares its GPU with (straggler_shared_gpu),
                                       * 0: none */
    int strag_act;                    /* houston may drain its node (straggler_found) */
    int strag_from_start;             /* it was slow from the start (no episode: strag_watch) */
    int strag_next;                   /* its straggler recovered: look for another (strag_watch) */
    uint32_t drift[DRIFT_MAX];        /* ranks in an episode that were no straggler (drift) */
    unsigned ndrift;
    struct quiet quiet[QUIET_MAX]; /* recoveries held (quiet_start) */
    unsigned nquiet;
    int64_t owner;     /* its uid since a poll first listed it; -1: unknown */
    double strag_slow; /* the straggler against its peers now: 0.3 = 30% slower (strag_follow) */
    double plan_slow;  /* strag_slow when the plan was made */
    int plan_avail;    /* its node was in service and not held then (strag_follow) */
    uint64_t strag_onset;
    int strag_phase;           /* the phase the straggler is slowest in (enum), -1: unknown */
    double strag_phase_excess; /* by how much against the peers' median: 0.4 = 40% longer */
    int drain_planned;
    char plan[HN_DETAIL_MAX]; /* as its straggler_policy finding's detail */
    struct hn_job_point series[SERIES_MAX];
    size_t nseries;
    size_t saved_points; /* series[0..saved_points) are in the store */
    int points_rewrite;  /* the series was thinned: the store's are replaced at the next save */
    double series_dt, next_point;
    /* The nodes its ranks last reported from and those that sent a report for it in this
     * run: a table sized by the job's nodes, not the fleet's (job_node). */
    struct job_node *jn;
    uint32_t jn_cap, jn_used; /* jn_cap: a power of 2, or 0 */
    unsigned nodes;           /* nodes with ranks > 0 */
    unsigned run_claim;       /* the most ranks this run's accepted reports claimed (resize) */
    unsigned run_world;       /* the largest world size they reported; 0: none */
    unsigned run_world_lo;    /* the smallest */
    int mixed_worlds;         /* some run's ranks reported different worlds: never shed */
    unsigned sized_run;       /* the run whose rank count was last set by resize() */
    unsigned shed_from;       /* ranks before resize() shed this run's; 0: none shed */
    double restored_at;       /* the restored ledger's last report; 0: not restored */
    /* The rank cap (hn_brain_step): the nodes that sent a report for the job in this run,
     * accepted or refused (jn), and the cap last computed with the scheduler poll and count it
     * was based on. */
    unsigned nreporters; /* nodes that sent a report in this run */
    unsigned cap, cap_sched, cap_nreporters;
    uint64_t cap_gen;
    int cap_warned; /* a step_rank_cap finding was issued */
    int dirty;
};

/* Whether j's straggler is one whose recovery is held (quiet_start): keeping up, it is not
 * charged nor shown, and a drain planned for it waits. */
static int strag_held(const struct job *j)
{
    for (unsigned k = 0; k < j->nquiet && j->strag_rank >= 0; k++) {
        if (j->quiet[k].rank == (unsigned)j->strag_rank)
            return 1;
    }
    return 0;
}

_Static_assert(OWNERS_MAX < OWNERS_CAP, "a free slot ends every probe (owner_slot)");

/* A job's owner as the scheduler's latest poll listed it (hn_brain_job_owner). */
struct owner {
    char id[HN_JOB_ID_SIZE]; /* "": a free slot */
    uint32_t uid;
};

struct hn_jobs {
    struct job **v;       /* [cap], in the order they came */
    size_t n, cap;        /* cap: jobs kept (jobs_max); ended ones are forgotten first */
    int *index;           /* [nindex], open addressing by id: a slot of v, -1 empty */
    size_t nindex;        /* a power of two, at least 2 cap: probes stay short */
    struct owner *owners; /* [OWNERS_CAP], open addressing, cleared by each poll */
    size_t nowners;
    double sched_poll;  /* time of the latest scheduler poll */
    int sched_lists;    /* a scheduler lists its jobs (any poll so far) */
    uint64_t sched_gen; /* +1 per scheduler input: cached rank caps are stale */
    double now;         /* latest time the brain was told */
};

static const char *const cause_names[HN_LOSS_NCAUSES] = {"failure", "straggler", "hang", "operator",
                                                         "other"};

const char *hn_loss_cause_name(enum hn_loss_cause c)
{
    return (unsigned)c < HN_LOSS_NCAUSES ? cause_names[c] : "unknown";
}

struct hn_jobs *hb_jobs_new(size_t cap)
{
    struct hn_jobs *j = xcalloc(1, sizeof(*j));
    j->cap = cap ? cap : HN_JOBS_MAX_DEFAULT;
    if (j->cap > (size_t)INT_MAX / 4)
        j->cap = (size_t)INT_MAX / 4; /* indices are ints */
    j->v = xcalloc(j->cap, sizeof(struct job *));
    for (j->nindex = 16; j->nindex < 2 * j->cap; j->nindex *= 2)
        ;
    j->index = xcalloc(j->nindex, sizeof(int));
    memset(j->index, 0xff, j->nindex * sizeof(int)); /* -1: empty */
    j->owners = xcalloc(OWNERS_CAP, sizeof(struct owner));
    return j;
}

static void job_free(struct job *j)
{
    for (size_t r = 0; r < ROWS; r++)
        free(j->rows[r].secs);
    free(j->ranks);
    free(j->jn);
    hn_strag_free(j->strag);
    free(j);
}

void hb_jobs_free(struct hn_jobs *js)
{
    if (!js)
        return;
    for (size_t i = 0; i < js->n; i++)
        job_free(js->v[i]);
    free(js->v);
    free(js->index);
    free(js->owners);
    free(js);
}

/* Every step report looks its job up: a hash, not a scan of thousands of jobs. */
static int find_job(const struct hn_jobs *js, const char *id)
{
    size_t mask = js->nindex - 1;
    for (size_t h = hn_str_hash(id) & mask; js->index[h] >= 0; h = (h + 1) & mask) {
        if (strcmp(js->v[js->index[h]]->l.id, id) == 0)
            return js->index[h];
    }
    return -1;
}

static void index_put(struct hn_jobs *js, size_t k)
{
    size_t mask = js->nindex - 1, h = hn_str_hash(js->v[k]->l.id) & mask;
    while (js->index[h] >= 0)
        h = (h + 1) & mask;
    js->index[h] = (int)k;
}

/* Forgets slot k of v (its job already freed): the slots after it move down, in the index
 * too, and k's entry is taken out of its probe chain by moving later entries of the chain
 * back (linear probing's deletion), so no hash is computed but those of that chain. */
static void index_remove(struct hn_jobs *js, size_t k, const char *id)
{
    size_t mask = js->nindex - 1, h = hn_str_hash(id) & mask;
    while (js->index[h] != (int)k)
        h = (h + 1) & mask;
    size_t hole = h;
    for (size_t j = (h + 1) & mask; js->index[j] >= 0; j = (j + 1) & mask) {
        size_t home = hn_str_hash(js->v[js->index[j]]->l.id) & mask;
        /* The entry at j moves back into the hole unless its home lies cyclically in
         * (hole, j]: then it is found from there without passing the hole. */
        int stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
        if (!stays) {
            js->index[hole] = js->index[j];
            hole = j;
        }
    }
    js->index[hole] = -1;
    memmove(js->v + k, js->v + k + 1, (js->n - k - 1) * sizeof(struct job *));
    js->n--;
    for (size_t i = 0; i < js->nindex; i++) {
        if (js->index[i] > (int)k)
            js->index[i]--;
    }
}

/* ---- owners: who may report a job's steps ---- */

/* The slot of job id in the owner table: where it is, or the free slot where it would go. */
static struct owner *owner_slot(const struct hn_jobs *js, const char *id)
{
    for (size_t i = hn_str_hash(id) & (OWNERS_CAP - 1);; i = (i + 1) & (OWNERS_CAP - 1)) {
        struct owner *o = &js->owners[i];
        if (!o->id[0] || strcmp(o->id, id) == 0)
            return o; /* the table is never full (OWNERS_MAX), so a free slot ends the probe */
    }
}

int hn_brain_job_owner(struct hn_brain *b, const char *job, int64_t uid)
{
    struct hn_jobs *js = b->jobs;
    if (!job || !job[0]) {
        memset(js->owners, 0, OWNERS_CAP * sizeof(struct owner));
        js->nowners = 0;
        return 0;
    }
    if (strlen(job) >= HN_JOB_ID_SIZE || uid < 0 || uid > UINT32_MAX)
        return -EINVAL;
    struct owner *o = owner_slot(js, job);
    if (!o->id[0]) {
        if (js->nowners == OWNERS_MAX)
            return -ENOSPC;
        hn_strlcpy(o->id, job, sizeof(o->id));
        js->nowners++;
    }
    o->uid = (uint32_t)uid;
    return 0;
}

/* The uid that owns job id per the latest poll, or -1: not listed, or no scheduler. */
static int64_t owner_of(const struct hn_jobs *js, const char *id)
{
    const struct owner *o = owner_slot(js, id);
    return o->id[0] ? (int64_t)o->uid : -1;
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

static double typical_step(const struct job *j)
{
    return nanmedian_small(j->recent, j->nrecent);
}

/* The reported step times are judged against the wall clock once WALL_JUDGE_S of it was
 * watched, over the last WALL_WINDOW_S or so; they are not wall time when the steps they
 * cover took more than WALL_K times the wall time they came in (steps run one after the other:
 * a client that reports milliseconds as seconds, say). */
#define WALL_JUDGE_S  300.0
#define WALL_WINDOW_S 3600.0
#define WALL_K        2.0

/* Whether j's reported step times are not seconds of wall time (above): in sum, and in most
 * of the wall time judged. A backlog (a log `houston tail` reads from its start, an agent's
 * frames replayed after a controller restart) comes back to back, each report with its own
 * time: steps that ran before, judged against next to no wall time, whose sum alone would
 * call the live reports after it a mismatch. */
static int wall_mismatch(const struct job *j)
{
    return j->wall_s >= WALL_JUDGE_S && j->wall_work > WALL_K * j->wall_s && j->wall_adv > 0 &&
           j->wall_bad_s > j->wall_s / 2;
}

/* The typical wait between two advances of the step: a step, or more where reports are sparse
 * (`houston tail` reads a line per log interval of many steps). Reported step times that are
 * not wall time (wall_mismatch) count for no more than WALL_K times the wall time an advance
 * took on average: a client that reports milliseconds would put the hang limit 1,000 times
 * too far. */
static double typical_gap(const struct job *j)
{
    double gap = nanmedian_small(j->gaps, j->ngaps), step = typical_step(j);
    gap = isnan(gap) || gap < step ? step : gap;
    if (wall_mismatch(j))
        gap = fmin(gap, WALL_K * j->wall_s / j->wall_adv);
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
    if (now > j->frame_at) {
        double wall = j->frame_at - j->frame_from;
        if (j->frame_from > 0 && wall >= WALL_FRAME_MIN_S && isfinite(j->frame_work)) {
            j->wall_work += j->frame_work;
            j->wall_s += wall;
            if (j->frame_work > WALL_K * wall)
                j->wall_bad_s += wall;
            j->wall_adv += j->frame_adv;
            if (j->wall_s > WALL_WINDOW_S) {
                j->wall_work /= 2;
                j->wall_s /= 2;
                j->wall_bad_s /= 2;
                j->wall_adv = (j->wall_adv + 1) / 2;
            }
        }
        j->frame_from = watched ? j->frame_at : 0;
        j->frame_at = now;
        j->frame_work = 0;
        j->frame_adv = 0;
    }
    j->frame_work += work;
    j->frame_adv++;
}

/* Whether job a goes before job v when the table is full: an ended job first, then one the
 * scheduler never listed (a made-up id from the step socket, which anyone on a node can write
 * to, or a job outside the scheduler), then the one that reported least recently. So a flood
 * of made-up ids evicts its own jobs, not running ones the scheduler lists. */
static int evict_before(const struct job *a, const struct job *v)
{
    if (a->l.ended != v->l.ended)
        return a->l.ended;
    int a_listed = a->sched_seen >= 0, v_listed = v->sched_seen >= 0;
    if (a_listed != v_listed)
        return !a_listed;
    return a->l.last_report < v->l.last_report;
}

/* A job as it is before its first report. */
static struct job *job_alloc(const char *id, double now)
{
    struct job *j = xcalloc(1, sizeof(*j));
    hn_strlcpy(j->l.id, id, sizeof(j->l.id));
    j->l.checkpoint = -1;
    j->l.first_seen = now;
    j->tflops = j->tokens_per_s_rank = j->mfu = NAN;
    j->strag_rank = -1;
    j->others_node = -1;
    j->sched_seen = -1;
    j->run_listed = -1;
    j->ran_again = -1;
    j->time_left = -1;
    j->owner = -1;
    j->series_dt = SERIES_DT;
    j->stride = 1;
    j->charged_s = NAN;
    return j;
}

/* A new job; when the table is full the first job by evict_before goes, with whatever of its
 * ledger is not saved yet. The store holds the ledger as of the last hn_control_flush (after
 * every frame and tick), but an eviction during ingest happens inside hn_brain_step, before
 * that frame's flush, so what the frame changed in the evicted job's ledger is lost (usually
 * nothing: ended jobs go first). The controller reloads the saved ledger and history of a
 * job it no longer has when the job reports again (hn_brain_restore_job); what else the
 * brain knew of it (its ranks' nodes, the detector, the hang watch) starts afresh. */
static struct job *new_job(struct hn_jobs *js, const char *id, double now)
{
    if (js->n == js->cap) {
        size_t victim = 0;
        for (size_t i = 1; i < js->n; i++) {
            if (evict_before(js->v[i], js->v[victim]))
                victim = i;
        }
        char gone[sizeof(js->v[victim]->l.id)];
        hn_strlcpy(gone, js->v[victim]->l.id, sizeof(gone));
        job_free(js->v[victim]);
        js->v[victim] = NULL;
        index_remove(js, victim, gone);
    }
    struct job *j = job_alloc(id, now);
    js->v[js->n++] = j;
    index_put(js, js->n - 1);
    return j;
}

/* Sets j's plan, for people: cut at its size if need be (the decision comes first). */
static void set_plan(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_plan(struct job *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->plan, sizeof(j->plan), fmt, ap);
    va_end(ap);
}

static void holds_end(struct hn_brain *b, double now, struct job *j);

/*
 * The job's straggler detector starts again (a new run, or a run whose rank count changed:
 * its ranks are not the ones the detector knew). What it found goes with it: the job's
 * straggler, its plan, and which ranks a finding named. A rank still slow is found anew, as
 * slow from the start. Kept, a straggler the new detector never flagged would have been
 * charged and its drain planned for ever, also after it recovered, which the new detector
 * cannot see. A drain the guard holds for an operator for the straggler stays held (it may
 * still be slow). The recoveries held for straggler-hold are told (holds_end): those ranks
 * kept up until now, and a drain held for them is called off.
 */
static void detector_reset(struct hn_brain *b, double now, struct job *j)
{
    holds_end(b, now, j);
    hn_strag_free(j->strag);
    j->strag = NULL;
    if (j->strag_rank >= 0)
        set_plan(j,
                 "none for now: the job has %u ranks and its straggler detector starts again; "
                 "rank %d is found anew if it is still slow",
                 j->l.ranks, j->strag_rank);
    j->strag_rank = -1;
    j->drain_planned = 0;
    j->strag_next = 0;
    j->ndrift = 0;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        j->ranks[r].strag_told = 0;
        j->ranks[r].relapses = 0;
        j->ranks[r].held_at = 0;
        j->ranks[r].plan_told = 0;
    }
}

/* Makes room for ranks 0..n-1 (n > l.ranks). The detector starts afresh with the new size
 * (at now). */
static void grow_ranks(struct hn_brain *b, double now, struct job *j, unsigned n)
{
    j->ranks = xrealloc(j->ranks, (size_t)n * sizeof(*j->ranks));
    j->ranks_alloc = n;
    for (unsigned r = j->l.ranks; r < n; r++) {
        j->ranks[r] = (struct rank_st){.node = -1, .gpu = -1, .last_secs = NAN, .uid = -1};
        for (int k = 0; k < PHASES; k++) {
            for (int m = 0; m < PHASE_KEEP; m++)
                j->ranks[r].phase[k][m] = NAN;
        }
    }
    for (size_t k = 0; k < ROWS; k++) {
        j->rows[k].secs = xrealloc(j->rows[k].secs, (size_t)n * sizeof(double));
        for (unsigned r = j->l.ranks; r < n; r++)
            j->rows[k].secs[r] = NAN;
    }
    j->l.ranks = n;
    if (n > j->l.ranks_high)
        j->l.ranks_high = n;
    detector_reset(b, now, j);
}

static void clear_rows(struct job *j)
{
    for (size_t k = 0; k < ROWS; k++) {
        j->rows[k].have = 0;
        j->rows[k].step = 0;
        for (unsigned r = 0; r < j->l.ranks; r++)
            j->rows[k].secs[r] = NAN;
    }
    j->next_row = 0;
    j->stride = 1;
    j->late = 0;
    j->late_from = 0;
    j->rows_started = 0;
    j->calm = 0;
    j->top_at = 0;
}

/* One of the nodes of a job (struct job's jn): an open-addressing table by brain node index,
 * at most half full, so memory follows the nodes the job runs on (a job on node 99,999 of a
 * 100,000-node fleet costs a few entries, not 100,000). */
struct job_node {
    int32_t node;      /* brain node index; -1: a free slot */
    uint32_t ranks;    /* the job's ranks that last reported from it */
    uint32_t reported; /* it sent a report for the job in this run, accepted or refused */
};

/* Knuth's multiplicative hash, its top bits (cap a power of two, at least 2): the low bits of
 * the product depend only on the node index's low bits, so that indexes spaced by a power of
 * two would share home slots. */
static uint32_t jn_hash(int node, uint32_t cap)
{
    return ((uint32_t)node * 2654435761u) >> (32 - __builtin_ctz(cap));
}

static struct job_node *jn_slot(struct job_node *t, uint32_t cap, int node)
{
    uint32_t i = jn_hash(node, cap);
    while (t[i].node >= 0 && t[i].node != node)
        i = (i + 1) & (cap - 1);
    return &t[i];
}

/* Rebuilds j's table at least cap entries, keeping the entries that still count for
 * something (a rank there, or a report in this run), at most half full. */
static void jn_rebuild(struct job *j, uint32_t cap)
{
    uint32_t keep = 0;
    for (uint32_t i = 0; i < j->jn_cap; i++)
        keep += j->jn[i].node >= 0 && (j->jn[i].ranks || j->jn[i].reported);
    while (cap < 2 * (keep + 1))
        cap *= 2;
    struct job_node *t = xmalloc((size_t)cap * sizeof(*t));
    for (uint32_t i = 0; i < cap; i++)
        t[i] = (struct job_node){-1, 0, 0};
    uint32_t used = 0;
    for (uint32_t i = 0; i < j->jn_cap; i++) {
        if (j->jn[i].node >= 0 && (j->jn[i].ranks || j->jn[i].reported)) {
            *jn_slot(t, cap, j->jn[i].node) = j->jn[i];
            used++;
        }
    }
    free(j->jn);
    j->jn = t;
    j->jn_cap = cap;
    j->jn_used = used;
}

/* j's entry for node; NULL when it has none. */
static struct job_node *jn_find(const struct job *j, int node)
{
    if (!j->jn_cap)
        return NULL;
    struct job_node *e = jn_slot(j->jn, j->jn_cap, node);
    return e->node == node ? e : NULL;
}

/* j's entry for node, a new one when it has none. */
static struct job_node *jn_add(struct job *j, int node)
{
    struct job_node *e = jn_find(j, node);
    if (e)
        return e;
    if (2 * (j->jn_used + 1) > j->jn_cap)
        jn_rebuild(j, j->jn_cap ? 2 * j->jn_cap : 8);
    e = jn_slot(j->jn, j->jn_cap, node);
    *e = (struct job_node){node, 0, 0};
    j->jn_used++;
    return e;
}

static unsigned ranks_on(const struct job *j, int node)
{
    const struct job_node *e = jn_find(j, node);
    return e ? e->ranks : 0;
}

/* Rank r now reports from node (the job's node count follows, without a scan of its ranks);
 * -1: from none. */
static void set_rank_node(struct job *j, struct rank_st *r, int node)
{
    if (r->node == node)
        return;
    if (r->node >= 0) {
        struct job_node *e = jn_find(j, r->node);
        if (e && e->ranks > 0 && --e->ranks == 0)
            j->nodes--;
    }
    if (node >= 0 && jn_add(j, node)->ranks++ == 0)
        j->nodes++;
    r->node = node;
}

/* Node (a brain node index) sent a report for j, accepted or not. */
static void add_reporter(struct job *j, int node)
{
    struct job_node *e = jn_add(j, node);
    if (!e->reported) {
        e->reported = 1;
        j->nreporters++;
    }
}

/* A new run: only its own reporting nodes count for its rank cap (rank_cap), and the table
 * drops the nodes nothing points at any more, so neither grows over requeues. */
static void new_run_nodes(struct job *j, int node)
{
    for (uint32_t i = 0; i < j->jn_cap; i++)
        j->jn[i].reported = 0;
    j->nreporters = 0;
    jn_rebuild(j, 8);
    add_reporter(j, node);
}

/* The current run's own ranks: those its reports' world claims when they agree on it, before
 * resize() sheds the others (at the first row, which a smaller run fills only when pushed
 * out). Without a world size, or with ranks that disagree on it (a heterogeneous job's
 * components), the job's. */
static unsigned run_ranks(const struct job *j)
{
    return j->run_world && !j->mixed_worlds && j->run_claim < j->l.ranks ? j->run_claim
                                                                         : j->l.ranks;
}

/* The job's ranks as its run claims them: a run whose reports say its world size, smaller
 * than the job's rank count (requeued smaller), sheds the ranks it does not have, which the
 * detector's quorum and the GPU time would otherwise count. Once a run, when its first row is
 * ready. Without a world size the rank numbers seen by then are no measure of the run (an
 * agent's frame may push the first row out before other nodes' reports come): nothing is
 * shed. */
static void resize(struct hn_brain *b, double now, struct job *j)
{
    if (j->sized_run == j->run + 1u)
        return;
    j->sized_run = j->run + 1u;
    unsigned n = run_ranks(j);
    if (n >= j->l.ranks)
        return;
    for (unsigned r = n; r < j->l.ranks; r++)
        set_rank_node(j, &j->ranks[r], -1);
    j->shed_from = j->l.ranks;
    j->l.ranks = n;
    detector_reset(b, now, j);
}

static unsigned ranks_per_node(const struct hn_brain *b)
{
    return b->cfg.ranks_per_node_max ? b->cfg.ranks_per_node_max : 1;
}

/* The most ranks j may have: ranks_per_node_max for each node of the larger of the nodes the
 * scheduler lists it on and the nodes that have sent reports for it, at most RANKS_MAX. The
 * scan of the nodes' job lists is cached until the scheduler's next input or a new reporting
 * node; a cached cap can only be too large (hn_brain_node_idle empties a node's list between
 * polls), never too small. */
static unsigned rank_cap(const struct hn_brain *b, struct job *j)
{
    if (j->cap_nreporters == j->nreporters && j->cap_gen == b->jobs->sched_gen)
        return j->cap;
    unsigned sched = 0;
    for (size_t i = 0; i < b->nnodes; i++)
        sched += (unsigned)hb_node_runs(&b->nodes[i], j->l.id);
    /* A job the last poll listed before its first report came is listed (evict_before). */
    if (sched > 0 && j->sched_seen < b->jobs->sched_poll)
        j->sched_seen = b->jobs->sched_poll;
    uint64_t cap = (uint64_t)ranks_per_node(b) * (sched > j->nreporters ? sched : j->nreporters);
    j->cap = cap < RANKS_MAX ? (unsigned)cap : RANKS_MAX;
    j->cap_sched = sched;
    j->cap_nreporters = j->nreporters;
    j->cap_gen = b->jobs->sched_gen;
    return j->cap;
}

/* The brain was told of now. js->now is the latest such time: a report received late (an
 * agent's backlog keeps its frames' times, up to an hour back) does not take the views' clock
 * (wall time, the wait shown lost so far) back. */
static void told(struct hn_jobs *js, double now)
{
    if (now > js->now)
        js->now = now;
}

/* ---- accounting ---- */

/* Charges seconds of the job's wall time to cause (a negative amount gives time back), and
 * the GPU time of its ranks now. */
static void lose_n(struct job *j, enum hn_loss_cause cause, double seconds, unsigned ranks)
{
    j->l.lost_s[cause] += seconds;
    j->l.lost_gpu_s[cause] += seconds * ranks;
}

static void lose(struct job *j, enum hn_loss_cause cause, double seconds)
{
    lose_n(j, cause, seconds, j->l.ranks);
}

/* The job stops making progress for cause: work since the last checkpoint is lost, and the
 * clock of lost time runs from the last progress until the next run's first step. */
static void interrupt_n(struct hn_brain *b, struct job *j, double now, enum hn_loss_cause cause,
                        unsigned ranks)
{
    if (j->l.pending || j->l.ended)
        return;
    holds_end(b, now, j);
    j->l.charged_ranks = ranks;
    /* The straggler's share of that time was charged to it as the steps came: the rest goes to
     * the cause, so that no second is lost twice. */
    j->charged_strag_s = fmin(j->l.strag_ckpt_s, j->l.since_ckpt_s);
    lose_n(j, cause, j->l.since_ckpt_s - j->charged_strag_s, ranks);
    j->l.productive_s -= j->l.since_ckpt_s;
    j->charged_s = j->l.since_ckpt_s;
    j->charged_cause = cause;
    j->l.since_ckpt_s = j->l.strag_ckpt_s = 0;
    j->l.interruptions++;
    j->l.pending = 1;
    j->pending_at = j->l.last_report;
    j->l.requeued_at = now;
    j->l.restart_from = now;
    j->l.pending_cause = cause;
    j->l.interrupted_at = j->last_progress > 0 ? j->last_progress : j->l.first_seen;
    j->pause = 0;
    j->drain_planned = 0;
    j->strag_rank = -1;
    for (unsigned r = 0; r < j->l.ranks; r++)
        j->ranks[r].held_at = 0;
    j->plan[0] = '\0'; /* a plan for the run that is over (checkpoint() says what it did after) */
    j->l.requeue_failed = 0;
    j->dirty = 1;
}

static void interrupt(struct hn_brain *b, struct job *j, double now, enum hn_loss_cause cause)
{
    if (!j->l.pending && !j->l.ended)
        resize(b, now, j); /* its first row may not have come: the ranks its world has not are
                              shed */
    interrupt_n(b, j, now, cause, j->l.ranks);
}

/*
 * The first step of the run j waited for arrived at now and took `seconds`: what the restart
 * took is from its start (l.restart_from: the requeue, houston's or the scheduler's as houston
 * learnt of it) until that step began, and the first step's time beyond the job's typical
 * step (start-up counted in it: compilation, warm-up). Time in the scheduler's queue counts:
 * the ledger charges the whole wait to the interruption's cause, and the straggler policy
 * weighs the same time (l.restart_s, the median of the last RESTARTS_KEPT).
 */
static void restart_taken(struct job *j, double now, double seconds)
{
    double typ = typical_step(j);
    double took = now - j->l.restart_from - (isnan(typ) ? seconds : fmin(seconds, typ));
    if (!(j->l.restart_from > 0) || !(took >= 0) || !isfinite(took))
        return;
    if (j->nrestarts == RESTARTS_KEPT)
        memmove(j->restarts, j->restarts + 1, (RESTARTS_KEPT - 1) * sizeof(j->restarts[0]));
    else
        j->nrestarts++;
    j->restarts[j->nrestarts - 1] = took;
    double v[RESTARTS_KEPT];
    memcpy(v, j->restarts, j->nrestarts * sizeof(v[0]));
    j->l.restart_s = hn_median(v, j->nrestarts);
}

/* The first step of a new run arrived at now and took `seconds`. */
static void resume(struct hn_brain *b, struct job *j, double now, double seconds, uint64_t step)
{
    double typ = typical_step(j);
    if (isnan(typ))
        typ = seconds;
    double gap = now - seconds - j->l.interrupted_at;
    if (gap > 0) {
        /* A new run that starts past the step after the last one houston saw: the steps
         * between were done in the gap (their reports lost with the node, or left out of a
         * log's interval) and kept by the checkpoint it restarts from. */
        double unseen = 0;
        if (step > j->l.step + 1 && !isnan(typ))
            unseen = fmin(gap, (double)(step - 1 - j->l.step) * typ);
        lose_n(j, j->l.pending_cause, gap - unseen, j->l.charged_ranks);
        j->l.productive_s += unseen;
    }
    /* The work lost is what the new run does again: the steps after the one before its first,
     * up to where the last run stopped, at the job's typical step time. The interruption
     * charged the time since the last checkpoint the job reported, which is the same when it
     * restarts from that checkpoint, all of its work when it reported none (a job read by
     * `houston tail`, say), or too little when it restarts from an older one. Without a
     * typical step (a ledger restored, and interrupted before it reported again), the new
     * run's first step stands in for it. */
    if (!isnan(j->charged_s) && !isnan(typ)) {
        uint64_t stopped = j->l.step; /* where the last run stopped: no progress since */
        uint64_t redo = stopped >= step ? stopped - step + 1 : 0;
        double lost = (double)redo * typ;
        /* At most all the productive time there was: the rest of a longer redo was never
         * counted as productive here (a job that restarted from a checkpoint houston did not
         * see, or a ledger restored from before it). */
        lost = fmin(lost, j->l.productive_s + j->charged_s);
        double more = lost - j->charged_s;
        /* Less lost than charged (it restarted from a later checkpoint than it reported, or
         * reported none): the steps it kept are productive again, and the cause gives back
         * their time less the straggler's share, which stays the straggler's as for any kept
         * step; so the cause never goes below 0. */
        if (more < 0 && j->charged_s > 0)
            lose_n(j, j->charged_cause, more * (1 - j->charged_strag_s / j->charged_s),
                   j->l.charged_ranks);
        else
            lose_n(j, j->charged_cause, more, j->l.charged_ranks);
        j->l.productive_s -= more;
    }
    j->charged_s = NAN;
    j->run_from = now;
    j->l.pending = 0;
    j->l.hung = 0;
    j->l.restart_hangs = 0;
    j->l.requeue_failed = 0;
    j->dirty = 1;
    j->run++;
    j->run_claim = j->run_world = j->run_world_lo = j->shed_from = 0;
    /* Its rates are the new run's (on other GPUs, say). */
    j->tflops = j->tokens_per_s_rank = j->mfu = NAN;
    j->l.step = step > 0 ? step - 1 : 0; /* so that this step counts as progress */
    j->front = j->l.step;
    /* Not before the interrupted run's last progress: a first step whose time reaches back
     * further (clocks of other nodes, start-up counted in the step) would count time that was
     * that run's, productive or lost already, twice. Nor after now (an interruption restored
     * from a later clock): its hangs would go unseen until then. */
    j->last_progress = fmax(now - seconds, fmin(j->l.interrupted_at, now));
    j->watched = 0;
    j->advanced = 0; /* this step counts as progress, also at step 0 */
    j->run_gaps = 0; /* its first steps are a start's (compilation, warm-up): hang_limit */
    /* Its reports are judged against the wall clock anew (a fixed client, say). */
    j->frame_at = j->frame_from = j->frame_work = j->wall_work = j->wall_s = j->wall_bad_s = 0;
    j->frame_adv = j->wall_adv = 0;
    j->wall_told = 0;
    clear_rows(j);
    detector_reset(b, now, j); /* the new run's detector finds its own */
}

/* Where its wall time ends: now while it has not ended; else its last report, or, for a job
 * that ended while waiting for its next run, the end of that wait. */
static double job_end(const struct job *j, double now)
{
    if (!j->l.ended)
        return now;
    return j->l.ended_at > 0 ? j->l.ended_at : j->l.last_report;
}

static double ettr(const struct job *j, double now)
{
    double wall = job_end(j, now) - j->l.first_seen;
    return wall > 0 ? fmin(1.0, fmax(0.0, j->l.productive_s / wall)) : NAN;
}

static double job_mfu(const struct job *j)
{
    return j->mfu;
}

static void add_point(struct job *j, double now)
{
    if (now < j->next_point)
        return;
    if (j->nseries == SERIES_MAX) { /* keep every other point: memory stays flat */
        for (size_t i = 0; i < SERIES_MAX / 2; i++)
            j->series[i] = j->series[2 * i + 1];
        j->nseries = SERIES_MAX / 2;
        j->series_dt *= 2;
        j->points_rewrite = 1;
    }
    /* A job waiting for its next run, or hung, does no model FLOPs: no MFU for that time (the
     * view keeps the last run's figure). */
    double mfu = j->l.pending || j->l.hung || j->sched_waiting ? NAN : job_mfu(j);
    j->series[j->nseries++] = (struct hn_job_point){now, mfu, ettr(j, now), typical_step(j)};
    j->next_point = now + j->series_dt;
    j->dirty = 1;
}

static void ewma(double *acc, double x)
{
    if (isnan(x))
        return;
    *acc = isnan(*acc) ? x : *acc + EWMA_ALPHA * (x - *acc);
}

/* ---- stragglers ---- */

/* Names job in the outputs queued since the queue held `from` of them (a finding and what it
 * caused: a transition, a drain; a requeue already names its own job). */
static void tag_job(struct hn_brain *b, size_t from, const char *job)
{
    for (size_t k = from; k < b->qlen; k++) {
        struct hn_out *o = &b->outq[b->qhead + k];
        if (!o->job[0])
            hn_strlcpy(o->job, job, sizeof(o->job));
    }
}

/* Whether the outputs since `from` requeue job. */
static int requeued(const struct hn_brain *b, size_t from, const char *job)
{
    for (size_t k = from; k < b->qlen; k++) {
        const struct hn_out *o = &b->outq[b->qhead + k];
        if (o->kind == HN_OUT_ACTION && o->action.kind == HN_ACT_REQUEUE &&
            strcmp(o->action.job, job) == 0)
            return 1;
    }
    return 0;
}

static struct node *rank_node(struct hn_brain *b, const struct job *j, unsigned rank)
{
    return rank < j->l.ranks && j->ranks[rank].node >= 0 ? &b->nodes[j->ranks[rank].node] : NULL;
}

/* Whether houston may act on what j's reports say: with a scheduler that lists jobs, only for
 * a job it lists, whose reports come from its owner or root (docs/steps.md, "Who may
 * report"). Any user of a node can make up a job the scheduler does not know, and its slow
 * rank would otherwise drain that node under other users' jobs. */
static int acts_on(const struct hn_brain *b, const struct job *j)
{
    return !b->jobs->sched_lists || j->sched_seen >= 0;
}

/* A rank is a straggler when it is slower than its peers by this much: the detector's
 * smallest slowdown (min_slowdown), now measured against the peers (the step's reference). */
#define STRAGGLER_MIN_VS_PEERS 0.025

/* Whether rank's episode is a drift drift_watch follows: it becomes a straggler at
 * DRIFT_PROMOTE_VS_PEERS only, also when strag_watch looks for one to take up. */
static int drifting(const struct job *j, unsigned rank)
{
    for (unsigned k = 0; k < j->ndrift; k++) {
        if (j->drift[k] == rank)
            return 1;
    }
    return 0;
}

/* A persistent slowdown of a rank that leaves it about as fast as its peers: slower than its
 * own normal, yet no straggler. A rank that ran faster than the others and is back among them
 * looks like this; on a GPU shared by time slices the ranks trade places by a few percent
 * (bench/results/gpu-h200.md). Information only: nothing to replace, nothing lost. */
static void drift_found(struct hn_brain *b, double now, struct job *j,
                        const struct hn_strag_detection *d)
{
    struct node *n = rank_node(b, j, d->rank);
    struct hn_finding f;
    char ev[320];
    snprintf(ev, sizeof(ev),
             "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f vs_peers=%.3f", j->l.id,
             d->rank, (unsigned long long)d->onset_step, (unsigned long long)d->detect_step,
             d->slowdown, d->vs_peers);
    hb_finding_set(&f, "straggler_drift", HN_SEV_INFO, n ? j->ranks[d->rank].gpu : -1, ev,
                   "job %s rank %u is %.1f%% slower than its own normal since step %llu, but "
                   "%.1f%% against its peers: not a straggler",
                   j->l.id, d->rank, d->slowdown * 100, (unsigned long long)d->onset_step,
                   d->vs_peers * 100);
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
    tag_job(b, from, j->l.id);
    if (!drifting(j, d->rank) && j->ndrift < DRIFT_MAX)
        j->drift[j->ndrift++] = d->rank;
}

/* Ranks of j in its current run that report from the same node and GPU as rank and look
 * normal: warm, reporting, in no episode, no evidence of a slowdown gathering, and not slower
 * than the peers from the start (a baseline within STRAGGLER_MIN_VS_PEERS of the typical
 * rank's, 1). The GPU runs them at their normal speed, so rank's slowdown comes from sharing
 * it (time slices), not from the GPU; a mate slowing down with it, as on a bad GPU, does not
 * count. Only where some GPU must be shared and the GPU numbers are believable: the job runs
 * more ranks on the node than it has GPUs, and its ranks there name as many different GPUs
 * as they could (a client that sends every rank's GPU as 0, CUDA's index under a per-rank
 * CUDA_VISIBLE_DEVICES, must not hide a bad GPU). 0 otherwise, or when rank's GPU is unknown.
 * O(ranks), and only for a node with more of the job's ranks than GPUs. */
static unsigned healthy_gpu_mates(const struct hn_brain *b, const struct job *j, unsigned rank,
                                  uint64_t step)
{
    const struct rank_st *me = &j->ranks[rank];
    if (me->node < 0 || me->gpu < 0 || me->gpu >= 1024 || !j->strag)
        return 0;
    const struct node *nd = &b->nodes[me->node];
    unsigned gpus = nd->gpus_seen > nd->gpus_expected ? nd->gpus_seen : nd->gpus_expected;
    if (ranks_on(j, me->node) <= gpus)
        return 0; /* it may count a rank of an earlier run, never one too few */
    uint64_t seen[1024 / 64] = {0};
    unsigned on_node = 0, distinct = 0, n = 0;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        struct hn_strag_rank_info in;
        if (k->node != me->node || k->run != j->run)
            continue;
        on_node++;
        if (k->gpu < 0 || k->gpu >= 1024)
            return 0; /* a GPU number nvidia-smi would not give */
        if (!(seen[k->gpu / 64] & (1ull << (k->gpu % 64)))) {
            seen[k->gpu / 64] |= 1ull << (k->gpu % 64);
            distinct++;
        }
        if (r == rank || k->gpu != me->gpu || k->last_step + ROWS < step)
            continue;
        if (hn_strag_rank_get(j->strag, r, &in) == 0 && in.warm && !in.slow && in.cusum == 0 &&
            in.baseline < 1 + STRAGGLER_MIN_VS_PEERS)
            n++;
    }
    if (on_node <= gpus || distinct < gpus)
        return 0;
    return n;
}

/* Rank r's time in phase k: the median of its last PHASE_KEEP reports of it, NaN when none. */
static double rank_phase(const struct rank_st *r, int k)
{
    double v[PHASE_KEEP];
    size_t n = 0;
    for (int m = 0; m < PHASE_KEEP; m++) {
        if (r->phase[k][m] > 0)
            v[n++] = r->phase[k][m];
    }
    return n ? hn_median(v, n) : NAN;
}

/* Where rank r of j spends its extra time: the phase (PHASE_*) whose recent time (rank_phase)
 * is the most seconds above the median of the other ranks' of this run (in seconds, so that the
 * jitter of a 10 ms optimizer step does not outweigh a real slowdown of the backward pass),
 * and by how much (0.4: 40% longer); -1 when that is less than PHASE_SLOW_MIN of its median
 * (noise), or the ranks report no phase times. A
 * straggler slow in the forward and backward passes but not in the optimizer step points to
 * its GPU's compute (clocks, a throttled GPU); one slow in the optimizer step alone to host or
 * memory work (an offloaded optimizer, a slow CPU). */
static int slow_phase(const struct job *j, unsigned r, double *excess)
{
    int best = -1;
    double most = 0; /* seconds */
    *excess = 0;
    double *v = xcalloc(j->l.ranks, sizeof(double));
    for (int k = 0; k < PHASES; k++) {
        double mine = rank_phase(&j->ranks[r], k);
        if (!(mine > 0))
            continue;
        size_t n = 0;
        for (unsigned q = 0; q < j->l.ranks; q++) {
            const struct rank_st *o = &j->ranks[q];
            double theirs = q != r && o->node >= 0 && o->run == j->run ? rank_phase(o, k) : NAN;
            if (theirs > 0)
                v[n++] = theirs;
        }
        if (n == 0)
            continue;
        double med = hn_median(v, n);
        if (med > 0 && mine - med > most) {
            best = k;
            most = mine - med;
            *excess = mine / med - 1;
        }
    }
    free(v);
    return best >= 0 && *excess >= PHASE_SLOW_MIN ? best : -1;
}

/* The time over which a straggler's waste is weighed: what the job has left before its time
 * limit when the scheduler says (a job that ends in ten minutes is not worth a restart; one
 * with a week left is, for a few percent), else straggler-horizon. *over says which, for the
 * plan ("in the 5400 s the job has left", "of every 3600 s of the job"). */
static double strag_horizon(const struct hn_brain *b, double now, const struct job *j, char *over,
                            size_t size)
{
    if (j->time_left >= 0) {
        double left = fmax(0, j->time_left - (now - j->time_left_at));
        snprintf(over, size, "in the %.0f s the job has left", left);
        return left;
    }
    snprintf(over, size, "of every %.0f s of the job", b->cfg.straggler_horizon_s);
    return b->cfg.straggler_horizon_s;
}

/* What a restart of j costs, in seconds of its allocation: its own restarts' median when it
 * has been measured (restart_taken), else restart-overhead. *how says which for the plan (""
 * for restart-overhead, ", measured", or ", median of its last 3"). */
static double restart_cost(const struct hn_brain *b, const struct job *j, char *how, size_t size)
{
    how[0] = '\0';
    if (!(j->l.restart_s > 0))
        return b->cfg.restart_s;
    if (j->nrestarts > 1)
        snprintf(how, size, ", median of its last %u", j->nrestarts);
    else
        snprintf(how, size, ", measured"); /* or restored: the median of several */
    return j->l.restart_s;
}

/* Whether a drain of n would do something now: n is known, in service, and not held by the
 * guard for an operator already. */
static int node_free(const struct node *n)
{
    return n && hb_in_service(n->state) && !n->held;
}

static int job_uses(const struct job *j, int node);

/* Whether taking node n (its index node) out of service interrupts job j: j runs there, by
 * the scheduler's poll or by where its ranks report (hb_jobs_node_removed). The job's node
 * table first: a job none of whose ranks reports from n is not scanned. */
static int drain_takes(const struct job *j, const struct node *n, int node)
{
    return !j->l.ended && !j->l.pending &&
           (hb_node_runs(n, j->l.id) || (ranks_on(j, node) > 0 && job_uses(j, node)));
}

/* others_cost's sum is kept this long: it scans every job, and strag_follow may weigh the
 * drain after every step for a while (a figure that moved from the plan's, the decision the
 * same). The other jobs' unsaved work grows by that much meanwhile, which is noise against a
 * restart. */
#define OTHERS_TTL_S 10.0

/* The GPUs of the nodes the scheduler's last poll lists job id on (each node's expected count,
 * or the count seen), each node's shared evenly among the jobs listed on it: jobs that share a
 * node (one GPU each, say) do not count its GPUs once each, and the sum stays a floor. */
static double listed_gpus(const struct hn_brain *b, const char *id)
{
    double gpus = 0;
    for (size_t i = 0; i < b->nnodes; i++) {
        const struct node *m = &b->nodes[i];
        if (!hb_node_runs(m, id))
            continue;
        unsigned g = m->gpus_expected ? m->gpus_expected : m->gpus_seen ? m->gpus_seen : 1;
        gpus += (double)g / m->njobs;
    }
    return gpus;
}

/*
 * What a drain of n costs the jobs other than j that it interrupts too, in seconds of j's
 * allocation (*count: how many): each restarts (restart_cost) and loses its work since its
 * last checkpoint, all of it when it reported none, at its own size. A drain at j's checkpoint
 * costs j nothing of its work, but not them. A job the scheduler lists on n that houston has
 * no step reports of (an unmonitored job, one that has not stepped yet, one waiting for its
 * next run) counts a restart (restart-overhead) on its share of the GPUs of the nodes it is
 * listed on (listed_gpus), and no lost work, which is not known: *blind says how many of
 * *count are such. Kept for OTHERS_TTL_S.
 */
static double others_cost(const struct hn_brain *b, double now, struct job *j, const struct node *n,
                          unsigned *count, unsigned *blind)
{
    const struct hn_jobs *js = b->jobs;
    *count = *blind = 0;
    if (!n || !j->l.ranks)
        return 0;
    int node = (int)(n - b->nodes);
    if (j->others_node == node && now >= j->others_at && now - j->others_at < OTHERS_TTL_S) {
        *count = j->others_n;
        *blind = j->others_blind;
        return j->others_s;
    }
    double gpu_s = 0;
    char how[32];
    for (size_t i = 0; i < js->n; i++) {
        const struct job *o = js->v[i];
        if (o == j || !o->l.ranks || !drain_takes(o, n, node))
            continue;
        gpu_s += (restart_cost(b, o, how, sizeof(how)) + o->l.since_ckpt_s) * o->l.ranks;
        ++*count;
    }
    for (unsigned k = 0; k < n->njobs; k++) {
        int i = find_job(js, n->jobs[k]);
        /* j, or counted above; one waiting for its next run (pending) is not: its restart is
         * not stepping yet, and the drain makes it start again. */
        if (strcmp(n->jobs[k], j->l.id) == 0 ||
            (i >= 0 && js->v[i]->l.ranks && !js->v[i]->l.pending))
            continue;
        gpu_s += b->cfg.restart_s * listed_gpus(b, n->jobs[k]);
        ++*count;
        ++*blind;
    }
    j->others_node = node;
    j->others_at = now;
    j->others_n = *count;
    j->others_blind = *blind;
    j->others_s = gpu_s / j->l.ranks;
    return j->others_s;
}

/* What the policy weighs for j's straggler as it stands now: the waste over the horizon
 * (*over says which), against a restart (*how says whose: restart_cost). */
struct weigh {
    double waste, restart; /* restart: own + others */
    double own, others;    /* j's restart (how says whose), and what the drain costs the other
                              jobs it interrupts (also says how many) */
    char over[64], how[32], also[96];
};

/* Whether the policy drains the node of j's straggler at the next checkpoint, as it stands now
 * (the sums in *w). Never for a node out of service already (draining, say: a job whose
 * requeue failed runs on there), whose drain would do nothing, nor for one whose drain the
 * guard holds for an operator already. */
static int drain_pays(struct hn_brain *b, double now, struct job *j, const struct node *n,
                      struct weigh *w)
{
    w->waste =
        strag_horizon(b, now, j, w->over, sizeof(w->over)) * j->strag_slow / (1 + j->strag_slow);
    unsigned others = 0, blind = 0;
    w->own = restart_cost(b, j, w->how, sizeof(w->how));
    /* Other jobs only add to the cost: not looked for when the job's own restart outweighs. */
    int may = j->strag_act && node_free(n) && w->waste > w->own;
    w->others = may ? others_cost(b, now, j, n, &others, &blind) : 0;
    w->restart = w->own + w->others;
    w->also[0] = '\0';
    char unseen[48] = "";
    if (blind)
        snprintf(unseen, sizeof(unseen), " (%u without step reports: a restart)", blind);
    if (others)
        snprintf(w->also, sizeof(w->also), ", and %.0f s more for %u other job%s there%s",
                 w->others, others, others == 1 ? "" : "s", unseen);
    return j->strag_act && node_free(n) && w->waste > w->restart;
}

/* The plan for j's straggler (strag_rank, strag_slow and the rest set), made as a
 * straggler_policy finding with evidence ev and the job's plan; when `changed_only`, the
 * finding only if the decision is not the one planned already (a relapse: straggler_found). */
static void straggler_plan(struct hn_brain *b, double now, struct job *j, const char *ev,
                           int changed_only)
{
    unsigned rank = (unsigned)j->strag_rank;
    struct node *n = rank_node(b, j, rank);
    struct weigh w;
    int was = j->drain_planned;
    j->drain_planned = drain_pays(b, now, j, n, &w);
    j->plan_slow = j->strag_slow;
    j->plan_avail = node_free(n);
    if (j->strag_shared)
        set_plan(j,
                 "keep %s: rank %u shares GPU %d with %u rank%s of the job that are not slow; "
                 "give each rank its own GPU",
                 n->name, rank, j->ranks[rank].gpu, j->strag_shared,
                 j->strag_shared == 1 ? "" : "s");
    else if (!acts_on(b, j))
        set_plan(j,
                 "none: the scheduler does not list job %s, so its reports are not known to "
                 "come from its owner",
                 j->l.id);
    else if (n && !hb_in_service(n->state))
        set_plan(j,
                 "none: %s is %s already; the job runs on there (requeue it to move rank %u "
                 "off)",
                 n->name, hn_node_state_name(n->state), rank);
    else if (n && n->held)
        set_plan(j, "none: a drain of %s waits for an operator already (blast-radius guard)",
                 n->name);
    else if (j->drain_planned)
        /* A job that never reported a checkpoint waits for one: a drain now would throw away
         * all its work, and houston would not see that it did. Said, so that nobody waits for
         * a drain that a client without ckpt= never lets come. */
        set_plan(j,
                 "drain %s at the next checkpoint: the slowdown wastes %.0f s %s, a restart "
                 "costs %.0f s%s%s%s",
                 n->name, w.waste, w.over, w.own, w.how, w.also,
                 j->l.checkpoint < 0 ? "; the job has reported no checkpoint yet (ckpt=)" : "");
    else
        set_plan(j, "keep %s: the slowdown wastes %.0f s %s, less than a restart (%.0f s%s%s)%s",
                 n ? n->name : "the rank's node", w.waste, w.over, w.own, w.how, w.also,
                 n ? "" : "; its node is unknown");
    if (changed_only && was == j->drain_planned &&
        j->ranks[rank].plan_told == (uint8_t)(j->drain_planned + 1))
        return;
    j->ranks[rank].plan_told = (uint8_t)(j->drain_planned + 1);
    struct hn_finding p;
    hb_finding_set(&p, "straggler_policy", HN_SEV_INFO, n ? j->ranks[rank].gpu : -1, ev, "%s",
                   j->plan);
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, n)->finding = p;
    tag_job(b, from, j->l.id);
}

/* The held recovery of rank, if any, ends: it is slow again (a relapse, counted). Returns
 * whether there was one. */
static int quiet_end(struct job *j, unsigned rank)
{
    for (unsigned k = 0; k < j->nquiet; k++) {
        if (j->quiet[k].rank != rank)
            continue;
        j->quiet[k] = j->quiet[--j->nquiet];
        if (j->ranks[rank].relapses < UINT16_MAX)
            j->ranks[rank].relapses++;
        return 1;
    }
    return 0;
}

/* The job's plan is made again when the figure moves this much (either way) from the one it
 * was made with, and the decision it gives changes: a straggler found small that grows (a GPU
 * throttling more and more) is replaced after all, while one wandering about the line between
 * keep and drain does not flap (strag_follow; so for a relapse, straggler_found). */
#define REPLAN_FACTOR 1.5

/* A persistent straggler: the node becomes suspect, and the policy decides whether replacing
 * it at the next checkpoint pays: the GPU time the slowdown wastes over the horizon against
 * the GPU time of a restart (the job's whole allocation waits either way). The slowdown that
 * counts is the one against the peers: replacing the rank by a typical one gains that much at
 * most. A job the scheduler does not list gets the finding as information and no plan
 * (acts_on); nor does a straggler on a GPU shared with ranks that look normal
 * (healthy_gpu_mates: straggler_shared_gpu). */
static void straggler_found(struct hn_brain *b, double now, struct job *j,
                            const struct hn_strag_detection *d)
{
    if (d->vs_peers < STRAGGLER_MIN_VS_PEERS) {
        drift_found(b, now, j, d);
        return;
    }
    struct node *n = rank_node(b, j, d->rank);
    unsigned mates = n ? healthy_gpu_mates(b, j, d->rank, d->detect_step) : 0;
    int act = acts_on(b, j) && !mates;
    /* Slow again while its recovery is held (straggler-hold): the same episode, not a new one.
     * Nor is a rank a finding named in this episode already, found again by strag_watch to
     * stand in for the job's straggler. Nothing is told again, unless the node has been put
     * back in service meanwhile (an operator resumed it): then it is made suspect again as for
     * a first detection. */
    int relapse = quiet_end(j, d->rank);
    int silent =
        (relapse || j->ranks[d->rank].strag_told) && !(act && n && n->state == HN_NODE_READY);
    struct hn_finding f;
    char ev[320], where[64] = "";
    double phase_excess;
    int phase = slow_phase(j, d->rank, &phase_excess);
    int at =
        snprintf(ev, sizeof(ev),
                 "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f "
                 "vs_peers=%.3f ranks=%u gpu_mates=%u",
                 j->l.id, d->rank, (unsigned long long)d->onset_step,
                 (unsigned long long)d->detect_step, d->slowdown, d->vs_peers, j->l.ranks, mates);
    if (phase >= 0) {
        snprintf(ev + at, sizeof(ev) - (size_t)at, " phase=%s phase_excess=%.3f",
                 phase_names[phase], phase_excess);
        snprintf(where, sizeof(where), "; slowest in its %s pass (+%.0f%%)", phase_names[phase],
                 phase_excess * 100);
    }
    if (mates)
        hb_finding_set(&f, "straggler_shared_gpu", HN_SEV_INFO, j->ranks[d->rank].gpu, ev,
                       "job %s rank %u is %.0f%% slower than its peers since step %llu, but it "
                       "shares its GPU with %u rank%s of the job that are not slow: time "
                       "slicing, not the GPU",
                       j->l.id, d->rank, d->vs_peers * 100, (unsigned long long)d->onset_step,
                       mates, mates == 1 ? "" : "s");
    else
        hb_finding_set(&f, "straggler", act ? HN_SEV_SUSPECT : HN_SEV_INFO,
                       n ? j->ranks[d->rank].gpu : -1, ev,
                       "job %s rank %u is %.0f%% slower than its peers since step %llu%s", j->l.id,
                       d->rank, d->vs_peers * 100, (unsigned long long)d->onset_step, where);
    size_t from = b->qlen;
    if (!silent && n)
        hb_found(b, now, n, &f);
    else if (!silent)
        hb_push_out(b, HN_OUT_FINDING, now, NULL)->finding = f;
    tag_job(b, from, j->l.id);
    j->ranks[d->rank].strag_told = 1; /* its recovery is told too (detection) */
    /* One straggler per job, the one that costs most: a second, smaller one makes its node
     * suspect (above) and leaves the job's straggler and plan as they are, unless the job's
     * straggler keeps up while its recovery is held (strag_held): then it stands in. One on a
     * shared GPU, which houston leaves alone, never takes the place of one it would act on,
     * and gives way to it whatever their sizes, so that it cannot cancel a planned drain. */
    int held = strag_held(j);
    if (j->strag_rank >= 0 && j->strag_rank != (int)d->rank &&
        (mates ? !j->strag_shared || (!held && j->strag_slow >= d->vs_peers)
               : !j->strag_shared && !held && j->strag_slow >= d->vs_peers))
        return;
    /* A relapse of the job's straggler keeps its episode's onset. */
    if (!(silent && j->strag_rank == (int)d->rank))
        j->strag_onset = d->onset_step;
    /* A rank told already that takes over from a held straggler (standing in), or by a
     * relapse bigger than the one standing in: its plan is told only when the decision
     * changes, so that a rank that keeps falling back does not make two plans a cycle. */
    int again = silent && j->strag_rank != (int)d->rank && (held || relapse);
    silent = silent && j->strag_rank == (int)d->rank;
    /* It is slow now (quiet_end dropped a hold of its own): not held (strag_held). A held
     * recovery of the straggler it takes over from stays that rank's (quiet_tell tells it). */
    j->strag_rank = (int)d->rank;
    j->strag_shared = mates;
    j->strag_act = act && n;
    j->strag_slow = d->vs_peers;
    j->strag_from_start = d->kind == HN_STRAG_FROM_START;
    j->strag_phase = phase;
    j->strag_phase_excess = phase >= 0 ? phase_excess : NAN;
    if (silent && j->strag_slow < REPLAN_FACTOR * j->plan_slow &&
        j->strag_slow * REPLAN_FACTOR > j->plan_slow) {
        /* A relapse about as slow as before: the plan is made with the figure it was made with
         * (its figure now is charged), so that one falling back a little faster or slower each
         * time near the line between keep and drain does not flip the decision each time. */
        double slow = j->strag_slow;
        j->strag_slow = j->plan_slow;
        straggler_plan(b, now, j, ev, 1);
        j->strag_slow = slow;
        return;
    }
    straggler_plan(b, now, j, ev, silent || again);
}

/* A drain of n (rank's node) the blast-radius guard held at held_at for rank of j is called
 * off, when nothing bad was found on n since (n stays suspect): an operator who approved it
 * later would take out a node whose rank keeps up again, and requeue the job for nothing.
 * Returns whether it was. */
static int held_drain_off(const struct job *j, unsigned rank, struct node *n, double held_at)
{
    char mine[HN_JOB_ID_SIZE + 32];
    snprintf(mine, sizeof(mine), "job=%s rank=%u ", j->l.id, rank);
    int release = n && n->held && held_at > 0 && n->last_bad <= held_at &&
                  strcmp(n->held_finding.rule, "straggler") == 0 &&
                  strncmp(n->held_finding.evidence, mine, strlen(mine)) == 0;
    if (release)
        n->held = 0;
    return release;
}

/* The job's straggler, rank on node n, recovered: its planned drain is cancelled, and a drain
 * of n the guard held for it is called off (held_drain_off). Sets the plan; returns whether it
 * called a held drain off. */
static int strag_recovered(struct job *j, unsigned rank, struct node *n)
{
    int release = rank < j->l.ranks && held_drain_off(j, rank, n, j->ranks[rank].held_at);
    if (rank < j->l.ranks) {
        j->ranks[rank].strag_told = 0;
        j->ranks[rank].held_at = 0;
        j->ranks[rank].plan_told = 0;
    }
    j->strag_rank = -1;
    j->drain_planned = 0;
    set_plan(j, "straggler rank %u recovered%s%s%s", rank, release ? "; the held drain of " : "",
             release ? n->name : "", release ? " is called off (it stays suspect)" : "");
    j->strag_next = 1; /* another may still be slow: strag_watch */
    return release;
}

/* A told rank recovered for good: the job's straggler's plan and held drain go
 * (strag_recovered), and the recovery is told with evidence ev, and how often the rank fell
 * back while it was held (straggler-hold). held_at: when the guard held its node's drain for
 * it while it was the job's straggler, for one that no longer is (quiet). */
static void recovery_told(struct hn_brain *b, double now, struct job *j, unsigned rank,
                          const char *ev, double held_at)
{
    struct node *n = rank_node(b, j, rank);
    int released = 0;
    if (j->strag_rank == (int)rank) {
        released = strag_recovered(j, rank, n);
    } else { /* not the job's straggler: its node was made suspect, and the plan is not its */
        j->ranks[rank].strag_told = 0;
        /* It was, when its recovery was held, and another took over since: the drain held
         * for it goes all the same. */
        released = held_drain_off(j, rank, n, held_at);
        j->ranks[rank].held_at = 0;
        j->ranks[rank].plan_told = 0;
    }
    unsigned relapses = j->ranks[rank].relapses;
    j->ranks[rank].relapses = 0;
    char more[64] = "";
    if (relapses)
        snprintf(more, sizeof(more), " (slow again %u time%s before it held)", relapses,
                 relapses == 1 ? "" : "s");
    struct hn_finding f;
    hb_finding_set(&f, "straggler_recovered", HN_SEV_INFO, n ? j->ranks[rank].gpu : -1, ev,
                   "job %s rank %u is back in line with its peers%s%s", j->l.id, rank,
                   released ? "; its node's held drain is called off" : "", more);
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
    tag_job(b, from, j->l.id);
}

/*
 * A told rank the detector saw recover (d): its recovery is held for straggler-hold
 * (quiet_tell tells it then), so that a rank that keeps falling back (a GPU throttling on and
 * off) is one episode and not three findings every few minutes. Meanwhile the job's straggler
 * is not charged and not shown, and a drain planned for it waits. Without a hold, or with
 * QUIET_MAX held already, it is told now.
 */
static void quiet_start(struct hn_brain *b, double now, struct job *j,
                        const struct hn_strag_detection *d)
{
    /* Held already: the episode that ended was a drift (straggler_found left the hold alone),
     * in which it kept up with its peers, so the hold goes on. A second entry would tell its
     * recovery twice. */
    for (unsigned k = 0; k < j->nquiet; k++) {
        if (j->quiet[k].rank == d->rank)
            return;
    }
    if (!(b->cfg.straggler_hold_s > 0) || j->nquiet == QUIET_MAX) {
        char ev[320];
        snprintf(ev, sizeof(ev), "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f",
                 j->l.id, d->rank, (unsigned long long)d->onset_step,
                 (unsigned long long)d->detect_step, d->slowdown);
        recovery_told(b, now, j, d->rank, ev, 0);
        return;
    }
    double held_at = j->ranks[d->rank].held_at;
    j->quiet[j->nquiet++] =
        (struct quiet){d->rank, now, d->onset_step, d->detect_step, d->slowdown, held_at};
    if (j->strag_rank == (int)d->rank) {
        set_plan(j,
                 "rank %u keeps up with its peers again since step %llu: its recovery is told "
                 "after %.0f s of it; a drain planned waits until then",
                 d->rank, (unsigned long long)d->detect_step, b->cfg.straggler_hold_s);
        j->strag_next = 1; /* another still slow stands in meanwhile (strag_watch) */
    }
}

/* The recoveries held for straggler-hold and not broken by a relapse are told, after each
 * row; all of them (`all`) when the run ends (holds_end). */
static void quiet_tell(struct hn_brain *b, double now, struct job *j, int all)
{
    for (unsigned k = 0; k < j->nquiet;) {
        struct quiet q = j->quiet[k];
        if (!all && now - q.at < b->cfg.straggler_hold_s) {
            k++;
            continue;
        }
        j->quiet[k] = j->quiet[--j->nquiet];
        char ev[320];
        snprintf(ev, sizeof(ev),
                 "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f held_s=%.0f "
                 "relapses=%u",
                 j->l.id, q.rank, (unsigned long long)q.onset_step,
                 (unsigned long long)q.detect_step, q.slowdown, now - q.at,
                 (unsigned)j->ranks[q.rank].relapses);
        recovery_told(b, now, j, q.rank, ev, q.held_at);
    }
}

/* The run ends (interrupt_n) while recoveries are held: those ranks kept up until its end, and
 * are told so now, calling off a drain the guard held for them as a recovery then would have
 * (held_drain_off). Dropped untold, such a drain stayed held for an operator to approve. */
static void holds_end(struct hn_brain *b, double now, struct job *j)
{
    quiet_tell(b, now, j, 1);
}

static void detection(struct hn_brain *b, double now, struct job *j,
                      const struct hn_strag_detection *d)
{
    if (d->kind == HN_STRAG_PERSISTENT || d->kind == HN_STRAG_FROM_START) {
        straggler_found(b, now, j, d);
        return;
    }
    /* A rank's recovery is told when a straggler finding named it: the job's straggler, or a
     * second one that made its node suspect (a drift that never was one recovers unsaid). */
    if (d->kind == HN_STRAG_RECOVERED && d->rank != HN_STRAG_ALL_RANKS) {
        if (d->rank < j->l.ranks && j->ranks[d->rank].strag_told)
            quiet_start(b, now, j, d);
        return;
    }
    struct node *n = rank_node(b, j, d->rank); /* NULL for HN_STRAG_ALL_RANKS */
    struct hn_finding f;
    char ev[320];
    snprintf(ev, sizeof(ev), "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f",
             j->l.id, d->rank, (unsigned long long)d->onset_step,
             (unsigned long long)d->detect_step, d->slowdown);
    if (d->kind == HN_STRAG_RECOVERED && d->rank == HN_STRAG_ALL_RANKS) {
        hb_finding_set(&f, "job_recovered", HN_SEV_INFO, -1, ev,
                       "job %s is back to its normal step time", j->l.id);
    } else if (d->kind == HN_STRAG_JOB_SLOWDOWN) {
        hb_finding_set(&f, "job_slowdown", HN_SEV_INFO, -1, ev,
                       "job %s slowed down as a whole by %.0f%% (not one rank)", j->l.id,
                       d->slowdown * 100);
    } else {
        hb_finding_set(&f, "straggler_transient", HN_SEV_INFO, n ? j->ranks[d->rank].gpu : -1, ev,
                       "job %s rank %u was briefly %.0f%% slower (a spike, not persistent)",
                       j->l.id, d->rank, d->slowdown * 100);
    }
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
    tag_job(b, from, j->l.id);
}

/* A drift becomes a straggler at twice the margin a fresh detection needs: its figure against
 * the peers rests on where the rank stood among them before the episode, and ranks trade
 * places by up to 3% (bench/results/gpu-h200.md: the healthy H200 job's drifting rank later
 * stood 2.8% behind its peers by that figure). */
#define DRIFT_PROMOTE_VS_PEERS (2 * STRAGGLER_MIN_VS_PEERS)

/* A rank in an episode, as the detector sees it now at `step`, taken as a persistent
 * detection (the detector reports an episode once; drift_watch and strag_watch look again). */
static void found_now(struct hn_brain *b, double now, struct job *j, unsigned rank,
                      const struct hn_strag_rank_info *in, uint64_t step)
{
    struct hn_strag_detection d = {.kind = HN_STRAG_PERSISTENT,
                                   .rank = rank,
                                   .onset_step = in->onset_step,
                                   .detect_step = step,
                                   .slowdown = in->slowdown_now,
                                   .vs_peers = in->vs_peers_now,
                                   .peak = in->slowdown_now,
                                   .noise = in->noise};
    straggler_found(b, now, j, &d);
}

/* The drifting ranks again, after each row: the detector reports an episode once, so a drift
 * that goes on growing until the rank is slower than its peers after all (a GPU that ran
 * faster than the others and keeps slowing down) becomes a straggler here. A rank whose
 * episode ended is no longer followed. */
static void drift_watch(struct hn_brain *b, double now, struct job *j, uint64_t step)
{
    for (unsigned k = 0; k < j->ndrift;) {
        struct hn_strag_rank_info in;
        unsigned rank = j->drift[k];
        if (hn_strag_rank_get(j->strag, rank, &in) != 0 || !in.slow) {
            j->drift[k] = j->drift[--j->ndrift];
            continue;
        }
        if (in.vs_peers_now < DRIFT_PROMOTE_VS_PEERS) {
            k++;
            continue;
        }
        j->drift[k] = j->drift[--j->ndrift];
        found_now(b, now, j, rank, &in, step);
    }
}

/*
 * The job's straggler after each row. One slow from the start is in no episode (its baseline
 * is its slow speed), so the detector says nothing when it catches up with its peers: its
 * learned baseline over the step's reference, back under STRAGGLER_MIN_VS_PEERS, says so, and
 * it recovers as an episode's straggler does (its planned drain cancelled, its share no
 * longer charged). Once the job's straggler recovered, or while its recovery is held
 * (quiet_start), the slowest other rank still in an episode (the detector reported it once,
 * and straggler_found kept the costlier) becomes the job's straggler, planned for anew.
 */
static void strag_watch(struct hn_brain *b, double now, struct job *j, uint64_t step)
{
    struct hn_strag_rank_info in;
    if (j->strag_rank >= 0 && j->strag_from_start &&
        hn_strag_rank_get(j->strag, (unsigned)j->strag_rank, &in) == 0 && in.warm && !in.slow &&
        in.baseline < 1 + STRAGGLER_MIN_VS_PEERS) {
        char ev[160];
        snprintf(ev, sizeof(ev), "job=%s rank=%d step=%llu baseline=%.3f from_start=1", j->l.id,
                 j->strag_rank, (unsigned long long)step, in.baseline);
        recovery_told(b, now, j, (unsigned)j->strag_rank, ev, 0);
    }
    if (!j->strag_next || (j->strag_rank >= 0 && !strag_held(j)))
        return;
    j->strag_next = 0;
    int best = -1;
    struct hn_strag_rank_info bi = {0};
    for (unsigned r = 0; r < j->l.ranks; r++) {
        if ((int)r == j->strag_rank || j->ranks[r].node < 0 || j->ranks[r].run != j->run ||
            hn_strag_rank_get(j->strag, r, &in) != 0 || !in.slow ||
            in.vs_peers_now < (drifting(j, r) ? DRIFT_PROMOTE_VS_PEERS : STRAGGLER_MIN_VS_PEERS) ||
            (best >= 0 && in.vs_peers_now <= bi.vs_peers_now))
            continue;
        best = (int)r;
        bi = in;
    }
    if (best >= 0)
        found_now(b, now, j, (unsigned)best, &bi, step);
}

/*
 * The job's straggler against its peers now, after each row: the detector reports an episode
 * once, with its slowdown then, but a GPU that throttles more and more, or a rank that gets
 * better without recovering, moves on. Its share of each step (progress), the comparison with
 * another straggler and the policy at the checkpoint all go by the figure now: the median of
 * its recent reports over the step's reference inside an episode, its learned baseline over
 * the typical rank's for one slow from the start (as strag_watch). When the decision changes
 * with it (REPLAN_FACTOR), the plan is made again.
 */
static void strag_follow(struct hn_brain *b, double now, struct job *j, uint64_t step)
{
    struct hn_strag_rank_info in;
    if (j->strag_rank < 0 || strag_held(j) ||
        hn_strag_rank_get(j->strag, (unsigned)j->strag_rank, &in) != 0 || !in.warm)
        return;
    double cur;
    if (in.slow)
        cur = in.vs_peers_now;
    else if (j->strag_from_start)
        cur = in.baseline - 1;
    else
        return; /* out of its episode: its recovery is on its way (detection) */
    j->strag_slow = fmax(0, cur);
    struct weigh w;
    struct node *n = rank_node(b, j, (unsigned)j->strag_rank);
    /* Nor when its node came back into service, or went out of it (an operator resumed a node
     * the plan found draining, or the guard now holds another drain of it). */
    int avail = node_free(n);
    if (j->strag_slow < REPLAN_FACTOR * j->plan_slow &&
        j->strag_slow * REPLAN_FACTOR > j->plan_slow && avail == j->plan_avail)
        return;
    /* A node back in service is said even when the decision stays (no drain): the plan
     * would name a state the node left ("draining already") for good. Not one going out of
     * it: a hold of this job's own drain, or a checkpoint's, says so itself. */
    if (drain_pays(b, now, j, n, &w) == j->drain_planned && !(avail && !j->plan_avail))
        return;
    char ev[320];
    snprintf(ev, sizeof(ev), "job=%s rank=%d step=%llu vs_peers=%.3f planned_vs_peers=%.3f",
             j->l.id, j->strag_rank, (unsigned long long)step, j->strag_slow, j->plan_slow);
    straggler_plan(b, now, j, ev, 0);
}

static void flush_row(struct hn_brain *b, double now, struct job *j, struct row *r)
{
    if (r->have)
        resize(b, now, j);
    if (r->have && j->l.ranks >= 2) {
        if (!j->strag) {
            j->strag = hn_strag_new(&b->cfg.straggler, j->l.ranks);
            j->ndrift = 0; /* a new detector: no episode goes on */
        }
        if (j->strag && hn_strag_step(j->strag, r->step, r->secs) > 0) {
            struct hn_strag_detection d;
            while (hn_strag_poll(j->strag, &d))
                detection(b, now, j, &d);
        }
        if (j->strag && j->ndrift)
            drift_watch(b, now, j, r->step);
        if (j->strag && j->nquiet)
            quiet_tell(b, now, j, 0);
        if (j->strag && (j->strag_next || (j->strag_rank >= 0 && j->strag_from_start)))
            strag_watch(b, now, j, r->step);
        if (j->strag && j->strag_rank >= 0)
            strag_follow(b, now, j, r->step);
    }
    for (unsigned k = 0; k < j->l.ranks && r->have; k++)
        r->secs[k] = NAN;
    r->have = 0;
}

/*
 * Files one rank's time for a step; rows leave in step order once complete or pushed out by
 * later steps. Reports older than the oldest row in flight are too late and left out.
 *
 * Agents forward a node's reports once per collection (10 s by default), each at its own
 * moment, so a row is complete only once every node's next frame has come: ROWS steps in
 * flight cover that only for steps of a few seconds. With faster steps the rows would leave
 * before most nodes' reports arrive, every row would lack a quorum and the detector would see
 * nothing. So the detector takes every stride-th step only, counted from the run's first
 * reported step (so that a client reporting every tenth step, 1, 11, 21..., is sampled too;
 * the detector's steps may have gaps), and the stride doubles whenever a row's worth of
 * reports (one per rank) came too late since it was last set, until ROWS rows span the
 * agents' delay: 0.3 s steps and 10 s frames on eight nodes settle at 4, a row every 1.2 s.
 * Reports from before the last change do not count, so one batch of late reports doubles it
 * once. After STRIDE_CALM rows in a row completed while the newest step filed was less than
 * half the window ahead (so half the stride would have held them), it is halved again, so that
 * the backlog of an agent's outage does not leave it high for the rest of the run. A new run
 * starts again at 1.
 */
static void restride(struct job *j, uint32_t to)
{
    uint64_t top = j->next_row, base = j->row_base;
    for (size_t q = 0; q < ROWS; q++) {
        if (j->rows[q].have && j->rows[q].step - base >= top)
            top = j->rows[q].step - base + 1;
    }
    clear_rows(j); /* the rows in flight are dropped: some of their reports are filed already */
    j->rows_started = 1;
    j->row_base = base;
    j->stride = to;
    j->next_row = (top + to - 1) / to * to;
    j->late_from = j->next_row;
    j->top_at = j->next_row / to;
}

static void row_put(struct hn_brain *b, double now, struct job *j, unsigned rank, uint64_t step,
                    double secs)
{
    if (!j->rows_started) {
        j->rows_started = 1;
        j->row_base = step;
        j->next_row = 0;
    }
    if (step < j->row_base) { /* before the first this run reported: too late for any row */
        j->late_total++;
        return;
    }
    uint64_t k = j->stride, d = step - j->row_base; /* next_row and late_from count like d */
    if (d % k)
        return;
    if (d < j->next_row) {
        j->late_total++;
        if (d >= j->late_from && ++j->late >= j->l.ranks && k < STRIDE_MAX)
            restride(j, (uint32_t)k * 2);
        return;
    }
    uint64_t at = d / k, next = j->next_row / k;
    if (at >= next + (uint64_t)2 * ROWS) { /* a jump: hand over what is there, start again */
        for (uint64_t q = next; q < next + ROWS; q++) {
            struct row *r = &j->rows[q % ROWS];
            if (r->have && r->step - j->row_base == q * k)
                flush_row(b, now, j, r);
        }
        next = at - ROWS + 1;
        j->calm = 0;
    }
    while (at >= next + ROWS) { /* pushed out, complete or not */
        struct row *r = &j->rows[next % ROWS];
        if (r->have && r->step - j->row_base == next * k)
            flush_row(b, now, j, r);
        next++;
        j->calm = 0;
    }
    struct row *r = &j->rows[at % ROWS];
    if (r->step != step) {
        if (r->have)
            flush_row(b, now, j, r);
        r->step = step;
    }
    if (isnan(r->secs[rank]))
        r->have++;
    r->secs[rank] = secs;
    j->top_at = at > j->top_at ? at : j->top_at;
    while (1) {
        r = &j->rows[next % ROWS];
        if (r->step - j->row_base != next * k || r->have < j->l.ranks)
            break;
        flush_row(b, now, j, r);
        /* Complete while the newest step filed is less than half the rows ahead: half the
         * stride would still have held it. */
        j->calm = j->top_at - next < ROWS / 2 ? j->calm + 1 : 0;
        next++;
    }
    j->next_row = next * k;
    if (k > 1 && j->calm >= STRIDE_CALM)
        restride(j, (uint32_t)k / 2);
}

/* ---- step reports ---- */

/* Predictive: the job's nodes flagged for replacement leave at this checkpoint. */
static void replace_flagged(struct hn_brain *b, double now, struct job *j, int64_t ckpt)
{
    for (unsigned r = 0; r < j->l.ranks; r++) {
        int ni = j->ranks[r].node;
        if (ni < 0 || j->ranks[r].run != j->run || !b->nodes[ni].replace_at_ckpt)
            continue;
        struct node *n = &b->nodes[ni];
        n->replace_at_ckpt = 0;
        if (!hb_in_service(n->state))
            continue;
        struct hn_finding f;
        char ev[320];
        snprintf(ev, sizeof(ev), "job=%s checkpoint=%lld", j->l.id, (long long)ckpt);
        hb_finding_set(&f, "ecc_trend", HN_SEV_FATAL, -1, ev,
                       "ecc trend: %s replaced at checkpoint %lld of job %s before it fails",
                       n->name, (long long)ckpt, j->l.id);
        size_t from = b->qlen;
        hb_found(b, now, n, &f);
        tag_job(b, from, j->l.id);
    }
}

static void checkpoint(struct hn_brain *b, double now, struct job *j, int64_t ckpt)
{
    if (ckpt < 0 || ckpt <= j->l.checkpoint)
        return;
    j->l.checkpoint = ckpt;
    double typ = typical_step(j), before = j->l.since_ckpt_s;
    if (!isnan(typ) && (uint64_t)ckpt <= j->l.step)
        j->l.since_ckpt_s = fmin(before, (double)(j->l.step - (uint64_t)ckpt) * typ);
    else
        j->l.since_ckpt_s = 0;
    /* The straggler's share, of the time that is left. */
    j->l.strag_ckpt_s = before > 0 ? j->l.strag_ckpt_s * (j->l.since_ckpt_s / before) : 0;
    replace_flagged(b, now, j, ckpt);
    if (j->l.pending || !j->drain_planned || j->strag_rank < 0 || strag_held(j))
        return; /* a straggler keeping up again (quiet_start): the drain waits */
    struct node *n = rank_node(b, j, (unsigned)j->strag_rank);
    j->drain_planned = 0;
    if (!n)
        return;
    struct hn_finding f;
    char ev[320];
    /* The job's time left shrank since the plan, or its straggler got better: a restart now
     * may no longer pay, also when the guard holds the node for something else meanwhile (the
     * drain would then wait for an operator, below). Nor does a drain of a node out of
     * service already (an operator put it in repair): it would do nothing, and the plan must
     * not say it was done. */
    struct weigh w;
    (void)drain_pays(b, now, j, n, &w);
    if (!hb_in_service(n->state) || !(w.waste > w.restart)) {
        if (!hb_in_service(n->state))
            set_plan(j,
                     "none: at checkpoint %lld %s is %s already; the job runs on there "
                     "(requeue it to move rank %d off)",
                     (long long)ckpt, n->name, hn_node_state_name(n->state), j->strag_rank);
        else
            set_plan(j,
                     "keep %s: at checkpoint %lld the slowdown wastes %.0f s %s, less than a "
                     "restart (%.0f s%s%s)",
                     n->name, (long long)ckpt, w.waste, w.over, w.own, w.how, w.also);
        snprintf(ev, sizeof(ev), "job=%s rank=%d checkpoint=%lld slowdown=%.3f", j->l.id,
                 j->strag_rank, (long long)ckpt, j->strag_slow);
        hb_finding_set(&f, "straggler_policy", HN_SEV_INFO, j->ranks[j->strag_rank].gpu, ev, "%s",
                       j->plan);
        size_t from = b->qlen;
        hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
        tag_job(b, from, j->l.id);
        return;
    }
    snprintf(ev, sizeof(ev), "job=%s rank=%d checkpoint=%lld slowdown=%.3f onset_step=%llu",
             j->l.id, j->strag_rank, (long long)ckpt, j->strag_slow,
             (unsigned long long)j->strag_onset);
    hb_finding_set(&f, "straggler", HN_SEV_FATAL, j->ranks[j->strag_rank].gpu, ev,
                   "straggler: job %s rank %d %.0f%% slower; replaced at checkpoint %lld", j->l.id,
                   j->strag_rank, j->strag_slow * 100, (long long)ckpt);
    int rank = j->strag_rank;
    double slow = j->strag_slow;
    size_t from = b->qlen;
    hb_found(b, now, n, &f); /* the drain interrupts the job, which clears the plan */
    tag_job(b, from, j->l.id);
    /* The plan now says what was done, until the next decision or restart. */
    if (n->held && strcmp(n->held_finding.rule, "straggler") == 0)
        j->ranks[rank].held_at = now;
    if (n->held)
        set_plan(j,
                 "drain %s at checkpoint %lld held for an operator (blast-radius guard): rank %d "
                 "is %.0f%% slower than its peers",
                 n->name, (long long)ckpt, rank, slow * 100);
    else
        set_plan(j, "drained %s at checkpoint %lld: rank %d was %.0f%% slower than its peers",
                 n->name, (long long)ckpt, rank, slow * 100);
}

/* The rank's compute time when it reported the time spent waiting in collectives; NaN (not
 * known) when that wait is the whole step or more: its timers disagree, and its step time
 * would make it the slowest rank of the job. */
static double rank_seconds(const struct hn_step_in *s)
{
    if (!isnan(s->comm_s))
        return s->comm_s < s->seconds ? s->seconds - s->comm_s : NAN;
    return s->seconds;
}

/* j's reports add up to more step time than the wall time they came in (wall_mismatch): said
 * once a run, as information for whoever instruments the job (its MFU and tokens per second,
 * which go by the same times, are off too). */
static void wall_tell(struct hn_brain *b, double now, struct job *j)
{
    j->wall_told = 1;
    double reported = j->wall_work / j->wall_adv, wall = j->wall_s / j->wall_adv;
    char ev[320];
    snprintf(ev, sizeof(ev), "job=%s reported_s=%.6g wall_s=%.6g watched_s=%.0f limit=%.0f",
             j->l.id, reported, wall, j->wall_s, WALL_K);
    struct hn_finding f;
    hb_finding_set(&f, "step_time_mismatch", HN_SEV_INFO, -1, ev,
                   "job %s's step reports add up to %.3g s between two reports, but they come "
                   "every %.3g s: their step times (dur=) are not seconds of wall time "
                   "(milliseconds?); its hang limit goes by the wall time",
                   j->l.id, reported, wall);
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, NULL)->finding = f;
    tag_job(b, from, j->l.id);
}

/* `unbroken`: the reporting node's frames came without a break since the last progress. */
static void progress(struct job *j, double now, const struct hn_step_in *s, int unbroken)
{
    /* The first report of a run is progress even at step 0 (a loop that counts from 0): front
     * and l.step start at 0, and a job whose only report is step 0 would never be checked for
     * hangs. */
    if (s->step <= j->front && j->advanced)
        return;
    if (j->last_progress > 0 && j->watched) {
        /* A wait the job came back from (a checkpoint save, an evaluation) is its own to
         * have: the hang limit allows for it next time. Not one houston did not watch: the
         * first step of a run (its time is the client's), after a restore, a job listed
         * again after it ended, a wait its agents went silent in or their frames broke. Nor
         * one in an announced pause (a pause notice): it will announce the next one too, and
         * the limit between its pauses stays its steps' own. */
        double gap = now - j->last_progress;
        int learn = unbroken && !j->pause;
        /* Less the steps in between but the last, by its time: a wait over many steps whose
         * reports were lost (a full queue) or left out (a log interval) is their work. (Watched
         * means advanced: the step is past front here.) */
        double pause = fmax(0, gap - (double)(s->step - j->front - 1) * s->seconds);
        if (learn && pause > j->l.pause_s)
            j->l.pause_s = pause;
        /* The rhythm of its reports: what the steps since the last one took (a report per
         * log interval of many steps), or the wait itself when houston watched it. */
        double rhythm = (double)(s->step - j->front) * s->seconds;
        wall_frame(j, now, rhythm, learn);
        if (learn && gap > rhythm)
            rhythm = gap;
        if (isfinite(rhythm)) {
            j->run_gaps = 1;
            j->gaps[j->gaps_at] = rhythm;
            j->gaps_at = (j->gaps_at + 1) % RECENT;
            if (j->ngaps < RECENT)
                j->ngaps++;
        }
    } else {
        j->frame_from = 0; /* not watched: the next frame is not judged */
        j->frame_at = now;
        j->frame_work = 0;
        j->frame_adv = 0;
    }
    if (s->step > j->l.step || !j->advanced) {
        double add = s->seconds;
        if (j->last_progress > 0) {
            uint64_t steps = s->step > j->l.step ? s->step - j->l.step : 1;
            add = fmin((double)steps * s->seconds, now - j->last_progress);
            if (add < 0)
                add = 0;
        }
        /* A straggler's share of each step is GPU time lost to it; the step still counts as
         * productive (Meta's ETTR), the slowdown shows in MFU instead. */
        if (j->strag_rank >= 0 && !strag_held(j)) {
            double share = add * j->strag_slow / (1 + j->strag_slow);
            lose(j, HN_LOSS_STRAGGLER, share);
            j->l.strag_ckpt_s += share;
        }
        j->l.productive_s += add;
        j->l.since_ckpt_s += add;
        j->l.step = s->step;
    }
    j->front = s->step;
    j->advanced = 1;
    j->last_progress = fmax(j->last_progress, now); /* agents' clocks differ a little */
    j->l.hung = 0;
    j->watched = 1;
    /* Back from the pause it declared; two advances end it too (a notice whose step was off:
     * a sample count, say). */
    if (j->pause && (j->front > j->pause_step || ++j->pause_adv >= 2))
        j->pause = 0;
    j->recent[j->recent_at] = s->seconds;
    j->recent_at = (j->recent_at + 1) % RECENT;
    if (j->nrecent < RECENT)
        j->nrecent++;
}

static void rates(const struct hn_brain *b, struct job *j, int node, const struct hn_step_in *s)
{
    if (!(s->seconds > 0))
        return;
    double tps = s->tokens / s->seconds; /* NaN when tokens are not reported */
    ewma(&j->tokens_per_s_rank, tps);
    double tf = !isnan(s->tflops) ? s->tflops : tps * s->flops_per_token / 1e12;
    ewma(&j->tflops, tf);
    /* Each report against the peak of the GPU it ran on: a job across two SKUs is measured
     * against each one's. */
    double peak = b->nodes[node].peak;
    if (peak > 0)
        ewma(&j->mfu, tf * 1e12 / peak);
}

/* A report sent by a user who may not report for the job (may_report): a step_owner finding about
 * the node (warning), at most one a minute per node. */
static void owner_refused(struct hn_brain *b, double now, int node, const struct hn_step_in *s,
                          int64_t owner)
{
    struct node *n = &b->nodes[node];
    if (now < n->step_owner_next)
        return;
    n->step_owner_next = now + OWNER_WARN_S;
    struct hn_finding f;
    char ev[160];
    snprintf(ev, sizeof(ev), "job=%s rank=%lld uid=%lld owner=%lld", s->job, (long long)s->rank,
             (long long)s->uid, (long long)owner);
    hb_finding_set(&f, "step_owner", HN_SEV_WARN, -1, ev,
                   "step reports of job %s refused: sent by uid %lld, the job belongs to uid %lld",
                   s->job, (long long)s->uid, (long long)owner);
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
    tag_job(b, from, s->job);
}

/* A report of j whose rank is beyond the job's cap was refused: a step_rank_cap finding about
 * the node that sent it, the first time for the job, and at most one a minute per node (a
 * process that makes up a job id per report gets one line a minute, not one per report). */
static void cap_refused(struct hn_brain *b, double now, struct job *j, int node,
                        const struct hn_step_in *s)
{
    struct node *n = &b->nodes[node];
    if (j->cap_warned || now < n->step_cap_next)
        return;
    j->cap_warned = 1;
    n->step_cap_next = now + CAP_WARN_S;
    struct hn_finding f;
    char ev[320];
    snprintf(ev, sizeof(ev),
             "job=%s rank=%lld world=%lld cap=%u ranks_per_node_max=%u sched_nodes=%u "
             "report_nodes=%u",
             j->l.id, (long long)s->rank, (long long)s->world, j->cap, ranks_per_node(b),
             j->cap_sched, j->nreporters);
    hb_finding_set(&f, "step_rank_cap", HN_SEV_WARN, -1, ev,
                   "step reports of job %s refused: rank %lld is beyond its cap of %u ranks "
                   "(%u per node, %u nodes)",
                   j->l.id, (long long)s->rank, j->cap, ranks_per_node(b),
                   j->cap_sched > j->nreporters ? j->cap_sched : j->nreporters);
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
    tag_job(b, from, j->l.id);
}

/* Whether uid may report steps of a job that owner owns: the owner, root, and the users of
 * step-trusted-uids. */
static int may_report(const struct hn_brain *b, int64_t uid, int64_t owner)
{
    if (uid == 0 || uid == owner)
        return 1;
    for (unsigned k = 0; k < b->cfg.n_step_trusted_uids; k++) {
        if (uid == b->cfg.step_trusted_uids[k])
            return 1;
    }
    return 0;
}

/* Whether a rank of j last reported as a user who may not report for owner: reports accepted
 * while no poll listed the job, such as reports made up for a job id before Slurm gave it out. */
static int foreign_ranks(const struct hn_brain *b, const struct job *j, int64_t owner)
{
    for (unsigned r = 0; r < j->l.ranks; r++) {
        if (j->ranks[r].uid >= 0 && !may_report(b, j->ranks[r].uid, owner))
            return 1;
    }
    return 0;
}

/* The step a hang waits past: the highest since this controller knew the job (the saved one
 * before any report after a restore). */
static uint64_t waited_step(const struct job *j)
{
    return j->front ? j->front : j->l.step;
}

/* A rank declared that its job stops stepping on purpose after s->step (docs/jobs.md, "Hangs"):
 * its hang limit is at least hang-pause-max until it steps past it. Not for a job the brain
 * does not know, that is not running, that has already passed that step (a late notice), or
 * from a rank of the run before (a delayed frame) or beyond its ranks. */
static void pause_notice(struct job *j, double now, unsigned rank, const struct hn_step_in *s)
{
    /* A job waiting for its next run has no pause of its own, unless its requeue failed: it
     * runs on where it is (hb_jobs_tick), and may save a checkpoint. */
    if (!j || j->l.ended || (j->l.pending && !(j->l.requeue_failed && !j->l.hung)) ||
        s->step < waited_step(j) || rank >= j->l.ranks)
        return;
    const struct rank_st *r = &j->ranks[rank];
    /* Of a rank last heard in the run before, or received before this run began (a notice of
     * that run an agent delivered late): not this run's pause. */
    if ((r->node >= 0 && r->run != j->run) || now < j->run_from)
        return;
    if (j->pause) { /* more ranks announce it: the pause began with the first notice */
        if (s->step > j->pause_step)
            j->pause_step = s->step;
        return;
    }
    j->pause = s->pause < HN_PAUSE_OTHER ? s->pause : HN_PAUSE_OTHER; /* newer kinds: other */
    j->pause_step = s->step;
    j->pause_at = now;
    j->pause_adv = 0;
}

/* Sizing (docs/jobs.md, "Rank cap"): a report's rank must fit the job's cap, else the report
 * is refused (-ERANGE) and changes nothing but the job's reporting nodes; a `world` above
 * the cap is believed only up to the cap, so that rank 0 of a large job that reports before
 * the scheduler lists the job's nodes is still accepted. */
void hn_step_in_init(struct hn_step_in *s, const char *job, int64_t rank, uint64_t step,
                     double seconds)
{
    *s = (struct hn_step_in){.job = job,
                             .rank = rank,
                             .local_rank = -1,
                             .world = -1,
                             .gpu = -1,
                             .step = step,
                             .seconds = seconds,
                             .tokens = NAN,
                             .forward_s = NAN,
                             .backward_s = NAN,
                             .optimizer_s = NAN,
                             .comm_s = NAN,
                             .tflops = NAN,
                             .flops_per_token = NAN,
                             .checkpoint = -1,
                             .uid = -1,
                             .pause = HN_PAUSE_NONE};
}

/* A report received on node n before houston took n out of service, of a job that the
 * removal did not know ran there (its first reports came in the same frame as the fault, or a
 * later one): the job ran on the node when it failed, and is interrupted and requeued as the
 * node's other jobs were. Only a report received after the collection of the agent's frame
 * before the last one the removal saw (the fault's own frame, when a fault of the node's took
 * it out): any earlier one came in a frame the brain had read, and named its job then (a
 * backlog of an ended job's reports is no job on the node). The executor requeues the job only
 * if the scheduler says it still runs on n. */
static void ran_on_removed(struct hn_brain *b, double now, struct job *j, struct node *n)
{
    if (n->removed_at <= 0 || now > n->removed_at || now <= n->removed_from || j->l.pending ||
        j->l.requeued_at >= n->removed_at)
        return;
    /* As of the removal: the rest of the interrupted run's reports (stamped up to then) are
     * not its next run. */
    interrupt(b, j, n->removed_at, n->removed_cause);
    /* Unless the scheduler's list the removal went by named it: requeued then. Once another
     * poll has been applied (by the order they are applied in: a poll's time is when it
     * began), a job it lists there may have been named at the removal too; a second requeue
     * of it is skipped by the executor (the job no longer runs on n). */
    if (!hb_node_runs(n, j->l.id) || b->jobs->sched_gen != n->removed_gen)
        hb_requeue(b, n->removed_at, n, j->l.id);
}

/* Whether the scheduler has shown interrupted job j off its nodes since the interruption
 * (listed waiting, or running again after that), or never will: no scheduler lists jobs, or
 * it has never listed this one. */
static int left_its_nodes(const struct hn_brain *b, const struct job *j)
{
    return !b->jobs->sched_lists || j->sched_seen < 0 || j->sched_waiting ||
           j->run_listed > j->l.requeued_at;
}

int hn_brain_step(struct hn_brain *b, double now, int node, const struct hn_step_in *s)
{
    struct hn_jobs *js = b->jobs;
    if (!hb_node_at(b, node) || !s->job || !s->job[0] || strlen(s->job) >= sizeof(js->v[0]->l.id) ||
        (!s->pause && !(s->seconds >= 0 && s->seconds <= STEP_SECONDS_MAX)) || s->pause < 0 ||
        s->rank >= (int64_t)RANKS_MAX || s->world > (int64_t)RANKS_MAX)
        return -EINVAL;
    told(js, now);
    /* Who may report (docs/steps.md, may_report): the job's owner, root and step-trusted-uids.
     * The uid is the kernel's word (the agent's SO_PASSCRED); unknown for an older agent. The
     * owner is the latest poll's, else the one a poll gave before (a job that ended, or waits
     * to be requeued, keeps it). */
    int i = find_job(js, s->job);
    int64_t listed = js->nowners ? owner_of(js, s->job) : -1;
    int64_t owner = listed >= 0 ? listed : i >= 0 ? js->v[i]->owner : -1;
    if (owner >= 0 && s->uid >= 0 && !may_report(b, s->uid, owner)) {
        owner_refused(b, now, node, s, owner);
        return -EPERM;
    }
    if (s->pause) {
        pause_notice(i >= 0 ? js->v[i] : NULL, now, s->rank >= 0 ? (unsigned)s->rank : 0, s);
        return 0;
    }
    unsigned rank = s->rank >= 0 ? (unsigned)s->rank : 0;
    struct job *j = i >= 0 ? js->v[i] : new_job(js, s->job, now - s->seconds);
    if (listed >= 0 && listed != j->owner) {
        /* First listed (or the id was reused): if another user reported for it before, none
         * of what the job's reports built (steps, checkpoint, ranks, rows, detector) can be
         * trusted, and it starts again from this report. */
        if (i >= 0 && foreign_ranks(b, j, listed)) {
            job_free(j);
            j = js->v[i] = job_alloc(s->job, now - s->seconds);
        }
        j->owner = listed;
    }
    add_reporter(j, node);
    unsigned had = run_ranks(j);
    /* A rank beyond a shed run's ranks, received before its first report: a report of the
     * run before that its node delivered late (the run_from check below needs the rank's
     * state, which the shed dropped). */
    if (!j->l.pending && now < fmax(j->run_from, j->restored_at) && rank >= j->l.ranks &&
        rank < j->shed_from) /* shed_from: 0 unless this run shed */
        return 0;
    /* A world other than this run's, received before the run began: a report of the run
     * before, its node's agent late to deliver it. */
    if (!j->l.pending && j->run_world && s->world > 0 && (unsigned)s->world != j->run_world &&
        rank < j->l.ranks && j->ranks[rank].node >= 0 && j->ranks[rank].run == j->run &&
        now < fmax(j->run_from, j->restored_at))
        return 0;
    /* Received before the interruption: of the run it ended (dropped below), and no measure
     * of the waiting job's size either. */
    if (j->l.pending && now <= j->l.requeued_at)
        return 0;
    unsigned want = rank + 1;
    unsigned claim = s->world > 0 && (unsigned)s->world > want ? (unsigned)s->world : want;
    if (claim > j->l.ranks) {
        /* The ranks it had in an earlier run are its own, whatever this run's nodes so far. */
        unsigned cap = rank_cap(b, j);
        if (cap < j->l.ranks_high)
            cap = j->l.ranks_high;
        if (want > cap && want > j->l.ranks) {
            cap_refused(b, now, j, node, s);
            return -ERANGE;
        }
        unsigned to = claim < cap ? claim : cap;
        if (to < want)
            to = want; /* within the ranks it already has (a ledger restored bigger) */
        if (to > j->l.ranks)
            grow_ranks(b, now, j, to);
    }
    struct rank_st *r = &j->ranks[rank];
    /* A rank of the run before this one that steps on from where it was, received before this
     * run's first report: a report of that run a node's agent delivered late (it sends once
     * per cycle), not of this one. */
    if (r->node >= 0 && r->run != j->run && now < j->run_from && s->step > r->last_step)
        return 0;
    if (j->l.ended)
        j->watched = 0; /* back after it ended (requeued by someone else, say) */
    j->l.ended = 0;
    j->l.ended_at = 0;
    j->dirty = 1;

    int new_run = r->node >= 0 && r->run == j->run && s->step < r->last_step;
    if (j->l.pending) {
        /* Reports of the interrupted run still in flight (an agent sends once per cycle) are
         * not progress. The next run is a rank starting over at or before its last step (a
         * restart from a checkpoint), a rank not seen before once the scheduler has shown the
         * job off its nodes (until then it may be one of the interrupted run's that had not
         * reported yet: a job first heard at its node's fault), or any report once the
         * interrupted run's stragglers have had a minute to arrive. */
        int next = (r->node >= 0 && s->step <= r->last_step) ||
                   (r->node < 0 && left_its_nodes(b, j)) ||
                   now - j->pending_at > fmax(60, 2 * typical_step(j)) ||
                   j->l.requeue_failed; /* it goes on where it runs: its steps are its run's */
        /* Whatever the rank, one received before the interruption is of the run it ended. */
        if (!next || now <= j->l.requeued_at)
            return 0;
        if (!j->l.requeue_failed) /* one that ran on where it was did not restart */
            restart_taken(j, now, s->seconds);
        resume(b, j, now, s->seconds, s->step);
        new_run_nodes(j, node);
    } else if (new_run) { /* restarted without houston: its cause is unknown */
        interrupt_n(b, j, now, HN_LOSS_OTHER, had);
        resume(b, j, now, s->seconds, s->step);
        new_run_nodes(j, node);
    }
    if (claim > j->run_claim)
        j->run_claim = claim;
    if (s->world > 0 && (unsigned)s->world > j->run_world)
        j->run_world = (unsigned)s->world;
    if (s->world > 0 && (!j->run_world_lo || (unsigned)s->world < j->run_world_lo))
        j->run_world_lo = (unsigned)s->world;
    if (j->run_world_lo != j->run_world)
        j->mixed_worlds = 1;
    set_rank_node(j, r, node);
    j->sched_waiting = 0; /* it steps: it runs, whatever the last poll said */
    r->uid = s->uid;
    r->gpu = s->gpu;
    r->run = j->run;
    r->last_step = s->step;
    double secs = rank_seconds(s);
    r->last_secs = secs;
    r->phase[PHASE_FORWARD][r->phase_at] = (float)s->forward_s;
    r->phase[PHASE_BACKWARD][r->phase_at] = (float)s->backward_s;
    r->phase[PHASE_OPTIMIZER][r->phase_at] = (float)s->optimizer_s;
    r->phase_at = (uint8_t)((r->phase_at + 1) % PHASE_KEEP);
    j->l.last_report = now;

    progress(j, now, s, b->nodes[node].heard_from <= j->last_progress);
    if (!j->wall_told && wall_mismatch(j))
        wall_tell(b, now, j);
    rates(b, j, node, s);
    if (!isnan(secs))
        row_put(b, now, j, rank, s->step, secs);
    else
        j->untimed++;
    checkpoint(b, now, j, s->checkpoint);
    add_point(j, now);
    ran_on_removed(b, now, j, &b->nodes[node]);
    return 0;
}

/* ---- interruptions from the rest of the brain ---- */

static enum hn_loss_cause cause_of(const struct hn_finding *f)
{
    if (strcmp(f->rule, "straggler") == 0)
        return HN_LOSS_STRAGGLER;
    if (strcmp(f->rule, "hang") == 0)
        return HN_LOSS_HANG;
    if (strcmp(f->rule, "operator") == 0)
        return HN_LOSS_OPERATOR;
    return HN_LOSS_FAILURE;
}

static int job_uses(const struct job *j, int node)
{
    for (unsigned r = 0; r < j->l.ranks; r++) {
        if (j->ranks[r].node == node && j->ranks[r].run == j->run)
            return 1;
    }
    return 0;
}

void hb_jobs_node_removed(struct hn_brain *b, double now, struct node *n,
                          const struct hn_finding *f)
{
    struct hn_jobs *js = b->jobs;
    int node = (int)(n - b->nodes);
    n->removed_at = now;
    n->removed_from = n->heard_before;
    n->removed_gen = js->sched_gen;
    n->removed_cause = cause_of(f);
    for (size_t i = 0; i < js->n; i++) {
        struct job *j = js->v[i];
        if (!drain_takes(j, n, node))
            continue;
        interrupt(b, j, now, cause_of(f));
        if (!hb_node_runs(n, j->l.id))
            hb_requeue(b, now, n, j->l.id);
    }
}

/* A job waiting for its next run that a poll missed (ended) and the next one lists again: it
 * had not ended. Nor had one that unlisted_end ended for its silence (the only end of a job
 * not waiting with an ended_at), as no scheduler listed it then: a controller restarted, or
 * squeue failing, before its first poll, say; a hung job would otherwise stay "ended" while
 * the scheduler lists it running, never checked for hangs. */
static void relisted(struct job *j)
{
    if (j->l.ended && (j->l.pending || j->l.ended_at > 0)) {
        j->l.ended = 0;
        j->l.ended_at = 0;
        /* Its silence was not watched as a listed job's (progress): a report before the next
         * tick would learn it as a pause, and its hang limit grow to it. */
        j->watched = 0;
        j->dirty = 1;
    }
}

void hb_jobs_sched_seen(struct hn_brain *b, double now, const char *job)
{
    struct hn_jobs *js = b->jobs;
    js->sched_poll = now;
    js->sched_lists = 1;
    js->sched_gen++;
    told(js, now);
    if (!job || !job[0])
        return;
    int i = find_job(js, job);
    if (i < 0)
        return;
    struct job *j = js->v[i];
    if (j->sched_waiting)
        j->ran_again = now;
    if (j->sched_waiting || j->run_listed < 0 || j->l.ended)
        j->run_listed = now;
    relisted(j);
    j->sched_seen = now;
    j->sched_waiting = 0;
}

void hb_jobs_sched_waiting(struct hn_brain *b, double now, const char *job, enum hn_wait why)
{
    struct hn_jobs *js = b->jobs;
    js->sched_poll = now;
    js->sched_lists = 1;
    told(js, now);
    int i = find_job(js, job);
    if (i < 0)
        return;
    struct job *j = js->v[i];
    if (j->sched_seen == now && !j->sched_waiting)
        return; /* this poll listed a part of it running (a heterogeneous job) */
    relisted(j);
    if (j->l.last_report >= now) { /* it stepped since the poll began: running by now */
        j->sched_seen = now;
        return;
    }
    j->sched_seen = now;
    j->sched_waiting = 1;
    j->run_listed = -1;
    if (j->l.requeue_failed) { /* someone requeued it after all */
        j->l.requeue_failed = 0;
        /* Its restart begins with that requeue, as houston learns of it (as for one of a
         * running job, interrupt): houston's was refused and moved nothing, and the job sat
         * where it ran (hung, say) until now. Saved, for a controller restart. */
        j->l.requeued_at = j->l.restart_from = now;
        j->pause = 0; /* that run, and the pause it announced, are over */
        j->dirty = 1;
    }
    j->watched = 0; /* the wait is not the job's own: not a pause to learn */
    /* Queued again without houston: the scheduler requeued it. */
    if (why == HN_WAIT_QUEUED && !j->l.pending && !j->l.ended && j->last_progress > 0)
        interrupt(b, j, now, HN_LOSS_OTHER);
}

void hb_jobs_time_left(struct hn_brain *b, double now, const char *job, double seconds)
{
    int i = find_job(b->jobs, job);
    if (i < 0)
        return;
    b->jobs->v[i]->time_left = seconds >= 0 ? seconds : -1;
    b->jobs->v[i]->time_left_at = now;
}

/* ---- hangs ---- */

/* A node the scheduler lists j on, or NULL. */
static struct node *sched_node(struct hn_brain *b, const struct job *j)
{
    for (size_t i = 0; i < b->nnodes; i++) {
        if (hb_node_runs(&b->nodes[i], j->l.id))
            return &b->nodes[i];
    }
    return NULL;
}

/* The one node whose ranks did not reach the job's highest step, or -1 (none, or several). */
static int hang_culprit(const struct job *j)
{
    int culprit = -1;
    unsigned behind = 0;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node < 0 || k->run != j->run || k->last_step >= j->front)
            continue;
        behind++;
        if (culprit >= 0 && culprit != k->node)
            return -1;
        culprit = k->node;
    }
    return behind < j->l.ranks ? culprit : -1;
}

/* GPU utilisation (%) at or above which a hung rank's GPU is taken as spinning in a collective
 * kernel, and below which as idle (idle_culprit). */
#define SPIN_UTIL 50
#define IDLE_UTIL 10

/*
 * A collective hang: every rank stopped at the same step, so no node's ranks lag
 * (hang_culprit). The ranks that reached the collective wait in it, and NCCL's kernels keep
 * their GPUs busy while they wait; the rank that never arrived (a crashed or stuck process, a
 * host-side deadlock) leaves its GPU idle. The one node all of whose GPUs of the job are idle
 * while every other node's are busy, by GPU samples taken during the hang, is the culprit; -1
 * when there is no such node, or a GPU of the job has no such sample.
 */
static int idle_culprit(const struct hn_brain *b, const struct job *j)
{
    int idle = -1;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node < 0 || k->run != j->run)
            continue;
        const struct node *n = &b->nodes[k->node];
        if (k->gpu < 0 || (unsigned)k->gpu >= n->gpus_expected)
            return -1;
        const struct gpu_st *g = &n->gpus[k->gpu];
        double util = g->v[HN_F_GPU_UTIL];
        /* A sample from the hang: of the node's latest frame (g->t and last_data are in the
         * agent's clock), which it collected after the last progress in the controller's
         * (heard). The agent's own clock may be minutes off. */
        if (isnan(util) || g->t[HN_F_GPU_UTIL] < n->last_data || n->heard <= j->last_progress)
            return -1; /* no sample from the hang */
        if (util >= SPIN_UTIL)
            continue;
        if (util >= IDLE_UTIL || (idle >= 0 && idle != k->node))
            return -1; /* neither, or idle ranks on two nodes */
        idle = k->node;
    }
    if (idle < 0 || j->nodes < 2)
        return -1;
    /* All of that node's ranks idle, not some (a rank of it spinning means it arrived). */
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node == idle && k->run == j->run &&
            b->nodes[idle].gpus[k->gpu].v[HN_F_GPU_UTIL] >= IDLE_UTIL)
            return -1;
    }
    return idle;
}

/* Whether node n's agent has been silent at now for half a hang limit: no frame of it arrived
 * since (or none ever). A whole limit of silence from every node is hang_unseen. */
static int agent_silent(const struct node *n, double now, double limit)
{
    return n->heard_at <= 0 || now - n->heard_at > limit / 2;
}

/* The silent and the heard among a job's nodes (silence_add), for silence_culprit. */
struct silence {
    int node;    /* the silent one, -1: none */
    int several; /* more than one is silent */
    double live; /* the earliest a heard one has been heard live from (INFINITY: none heard) */
};

static void silence_add(struct silence *s, const struct hn_brain *b, int node, double now,
                        double limit)
{
    const struct node *n = &b->nodes[node];
    if (!agent_silent(n, now, limit))
        s->live = fmin(s->live, n->live_from);
    else if (s->node >= 0 && s->node != node)
        s->several = 1;
    else
        s->node = node;
}

/*
 * A node that died or locked up (a kernel panic, a GPU fallen off the bus taking the host
 * with it) stops its ranks and its agent at once: the other ranks wait in the next collective
 * at the same step, so no node lags (hang_culprit), and the dead node sends no GPU samples
 * (idle_culprit). The one node of the job whose agent went silent (agent_silent), while
 * another node's frames kept arriving live from before it went silent (never heard: from
 * `since`, the job's last progress or start) until now, is the culprit; -1 when there is none
 * or several. Frames that arrive only after an outage of the controller's own (a backlog, a
 * partition) do not count as live, so the agent that reconnects last is not blamed. A silent
 * agent alone makes a node suspect (agent_silent finding); with a hang of its job it is drained.
 */
static int silence_culprit(const struct hn_brain *b, const struct silence *s, double since)
{
    if (s->node < 0 || s->several)
        return -1;
    const struct node *n = &b->nodes[s->node];
    return s->live <= (n->heard_at > 0 ? n->heard_at : since) ? s->node : -1;
}

/* silence_culprit among the nodes of the job's run. */
static int silent_culprit(const struct hn_brain *b, const struct job *j, double now, double limit)
{
    struct silence s = {-1, 0, INFINITY};
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node >= 0 && k->run == j->run)
            silence_add(&s, b, k->node, now, limit);
    }
    return j->nodes >= 2 ? silence_culprit(b, &s, j->last_progress) : -1;
}

enum blame { BY_RANKS, BY_SILENT, BY_IDLE };

/* "; n2's agent silent for 95 s" and the like: why node n is blamed. */
static void blame_text(char *out, size_t size, const struct node *n, enum blame by, double now)
{
    if (!n)
        out[0] = '\0';
    else if (by == BY_SILENT && n->heard_at <= 0)
        snprintf(out, size, "; %s's agent never heard", n->name);
    else if (by == BY_SILENT)
        snprintf(out, size, "; %s's agent silent for %.0f s", n->name, now - n->heard_at);
    else if (by == BY_IDLE)
        snprintf(out, size, "; its GPUs idle on %s while the others wait in a collective", n->name);
    else
        snprintf(out, size, "; ranks behind on %s", n->name);
}

static const char *const blame_name[] = {"", " by=silent_agent", " by=idle_gpus"};

static void hang(struct hn_brain *b, double now, struct job *j, double limit)
{
    enum blame by = BY_RANKS;
    int culprit = hang_culprit(j);
    if (culprit < 0 && (culprit = silent_culprit(b, j, now, limit)) >= 0)
        by = BY_SILENT;
    else if (culprit < 0 && (culprit = idle_culprit(b, j)) >= 0)
        by = BY_IDLE;
    struct node *n = culprit >= 0 ? &b->nodes[culprit] : NULL;
    struct hn_finding f;
    char ev[320];
    const char *pause = hn_pause_name(j->pause);
    char during[64] = "";
    if (pause)
        snprintf(during, sizeof(during), " (a declared %s pause)", pause);
    char blame[HN_NAME_MAX + 64];
    blame_text(blame, sizeof(blame), n, by, now);
    snprintf(ev, sizeof(ev), "job=%s step=%llu no_progress_s=%.0f limit_s=%.0f culprit=%s%s%s%s",
             j->l.id, (unsigned long long)waited_step(j), now - j->last_progress, limit,
             n ? n->name : "unknown", n ? blame_name[by] : "", pause ? " pause=" : "",
             pause ? pause : "");
    hb_finding_set(&f, "hang", HN_SEV_FATAL, -1, ev,
                   "hang: job %s made no progress past step %llu for %.0f s%s%s", j->l.id,
                   (unsigned long long)waited_step(j), now - j->last_progress, during, blame);
    j->l.hung = 1;
    /* A hang ends its pause (interrupt() does so too, but not for a job whose requeue failed,
     * which is waiting already): the next run is not in it. */
    j->pause = 0;
    /* Its requeue had failed and it ran on where it was (the only job waiting for its next
     * run that is checked for hangs): tried again, as the scheduler may take it this time (it
     * did not answer before, say). Another refusal is told again, now that the job stays hung
     * (hb_jobs_requeue_failed); a requeue taken has its restart watched (restart_watch). Its
     * wait stays its interruption's: it never progressed since. */
    if (j->l.pending) {
        j->l.requeue_failed = 0;
        j->l.requeued_at = now;
        j->l.restart_from = now; /* the one refused restarted nothing */
        j->dirty = 1;
    }
    size_t from = b->qlen;
    if (n)
        hb_found(b, now, n, &f); /* drains it (guard permitting) and requeues the job */
    else
        hb_push_out(b, HN_OUT_FINDING, now, NULL)->finding = f;
    if (!j->l.pending)
        interrupt(b, j, now, HN_LOSS_HANG); /* no culprit, or the guard holds it */
    if (!requeued(b, from, j->l.id)) {
        /* The job still has to start again. The requeue goes by a node the job runs on (the
         * executor requeues only a job the scheduler lists there): one the scheduler lists it
         * on, else one a rank of this run reported from (no scheduler), else rank 0's (a
         * ledger restored after a controller restart). Rank 0's own node may be one of the
         * run before, the job gone from it. */
        struct node *any = n ? n : sched_node(b, j);
        for (unsigned r = 0; !any && r < j->l.ranks; r++) {
            if (j->ranks[r].run == j->run)
                any = rank_node(b, j, r);
        }
        if (!any)
            any = rank_node(b, j, 0);
        if (any)
            hb_requeue(b, now, any, j->l.id);
    }
    tag_job(b, from, j->l.id);
}

/* Seconds without progress after which the job is hung (docs/jobs.md, "Hangs"). */
static double hang_limit(const struct hn_brain *b, const struct job *j)
{
    double typ = typical_gap(j);
    double limit = fmax(b->cfg.hang_min_s, isnan(typ) ? 0 : b->cfg.hang_k * typ);
    /* Until this run advanced twice under watch, its rhythm is unknown (one report per log
     * interval?) and its first steps may be slow (compilation, warm-up, as the first run's
     * were): the longest a pause may make the limit. */
    double pause = j->run_gaps ? b->cfg.hang_pause_k * j->l.pause_s : b->cfg.hang_pause_max_s;
    /* A pause the job declared (a checkpoint save) may last the longest a pause may. */
    if (j->pause)
        pause = b->cfg.hang_pause_max_s;
    return fmax(limit, fmin(b->cfg.hang_pause_max_s, pause));
}

/* Of the nodes the job's ranks report from in this run (until one has, after a controller
 * restart, those the scheduler lists it on): the longest unbroken record of frames since the
 * job's last progress (seconds; their collection times are in the controller's clock), and
 * the latest arrival of a frame (0: none). Their frames would carry its progress. */
static void job_heard(const struct hn_brain *b, const struct job *j, double *watched,
                      double *arrived)
{
    double w = -1, a = 0;
    int any = 0;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node < 0 || k->run != j->run)
            continue;
        const struct node *n = &b->nodes[k->node];
        any = 1;
        w = fmax(w, n->heard - fmax(j->last_progress, n->heard_from));
        a = fmax(a, n->heard_at);
    }
    for (size_t i = 0; !any && i < b->nnodes; i++) {
        const struct node *n = &b->nodes[i];
        if (hb_node_runs(n, j->l.id)) {
            w = fmax(w, n->heard - fmax(j->last_progress, n->heard_from));
            a = fmax(a, n->heard_at);
        }
    }
    *watched = w;
    *arrived = a;
}

/* No progress for longer than the limit, and no frame from the job's nodes lately: houston
 * cannot see it (the controller cut off from them, or the nodes gone). Said once, until a
 * frame of theirs arrives again. */
static void hang_unseen(struct hn_brain *b, double now, struct job *j, double limit, double arrived)
{
    struct hn_finding f;
    char ev[256];
    snprintf(ev, sizeof(ev), "job=%s step=%llu no_progress_s=%.0f limit_s=%.0f last_frame_s=%.0f",
             j->l.id, (unsigned long long)waited_step(j), now - j->last_progress, limit,
             arrived > 0 ? now - arrived : -1);
    hb_finding_set(&f, "hang_unseen", HN_SEV_INFO, -1, ev,
                   "job %s made no progress past step %llu for %.0f s, but no frame came from "
                   "its nodes' agents for %.0f s; not called a hang",
                   j->l.id, (unsigned long long)waited_step(j), now - j->last_progress,
                   arrived > 0 ? now - arrived : now - j->last_progress);
    j->unseen_told = 1;
    j->unseen_at = now;
    j->watched = 0;
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, NULL)->finding = f;
    tag_job(b, from, j->l.id);
}

/*
 * A requeue of job j failed for good (the scheduler refused it: `sbatch --no-requeue`,
 * JobRequeue=0; or did not answer, after the executor's retries): its run goes on where it is.
 * A hung job stays hung, its time the hang's until it steps again or ends (no hang at start:
 * it never left its nodes), and someone must cancel or requeue it; one interrupted for its
 * node or a straggler goes on, and its next steps are taken as its next run (resume). A
 * `requeue_failed` warning, once per requeue (hang() may try again), with the scheduler's words.
 * Saved in the ledger, as a restart must not take the job for a new run either.
 */
void hb_jobs_requeue_failed(struct hn_brain *b, double now, const char *id, const char *result)
{
    int i = find_job(b->jobs, id);
    if (i < 0)
        return;
    struct job *j = b->jobs->v[i];
    if (j->l.ended || !j->l.pending || j->l.requeue_failed)
        return;
    j->l.requeue_failed = 1;
    j->dirty = 1;
    char words[160];
    hn_strlcpy(words, result, sizeof(words));
    for (char *c = words; *c; c++) /* one line, no quotes: it goes into evidence="..." */
        if (*c == '"' || *c == '\n' || *c == '\r')
            *c = ' ';
    struct hn_finding f;
    char ev[256];
    snprintf(ev, sizeof(ev), "job=%s hung=%d scheduler=\"%s\"", j->l.id, j->l.hung, words);
    hb_finding_set(&f, "requeue_failed", HN_SEV_WARN, -1, ev, "houston could not requeue job %s%s",
                   j->l.id,
                   j->l.hung ? ": it stays hung where it runs; cancel or requeue it by hand"
                             : ": it goes on where it runs");
    size_t from = b->qlen;
    hb_push_out(b, HN_OUT_FINDING, now, NULL)->finding = f;
    tag_job(b, from, j->l.id);
}

/* Hangs at start in a row after which houston stops requeueing the job (restart_watch). */
#define RESTART_HANGS 2

/* The limit on a restart's wait for its first step (restart_watch): as long as any wait of the
 * job, since a job whose log shows a step an hour has that. */
static double restart_limit(const struct hn_brain *b, const struct job *j)
{
    return fmax(b->cfg.hang_pause_max_s, hang_limit(b, j));
}

/*
 * A job interrupted and requeued that the scheduler runs again (a poll lists it running after
 * one listed it waiting, or not at all, since the requeue), but whose new run has sent no step
 * for hang-pause-max (the longest a start may take: loading a checkpoint, setting up NCCL,
 * compiling) or its own hang limit if longer, while an agent of a node it runs on sent frames
 * all along: a hang at start (a bad node of the new allocation, a stuck rendezvous). The lost
 * time up to the start stays with the first cause, from then on it is the hang's; the job is
 * requeued again. None of its new ranks reported, so the only node it can name is one whose
 * agent is silent while another's reports (silence_culprit), drained like any culprit. After
 * RESTART_HANGS requeues in a row the next hang at start is reported and the job left alone
 * (a node it names made suspect): a loop of requeues helps nobody. A job whose requeue failed
 * never left its nodes: it is no new run.
 */
static void restart_watch(struct hn_brain *b, double now, struct job *j)
{
    /* Running again: listed running by a poll after one listed it waiting (or not at all)
     * since the requeue. A job the scheduler never took off its nodes is not a new run. */
    if (j->sched_waiting || j->run_listed <= j->l.requeued_at ||
        j->l.restart_hangs > RESTART_HANGS || j->l.requeue_failed)
        return;
    double since = j->run_listed;
    double limit = restart_limit(b, j);
    if (now - since <= limit)
        return;
    struct node *any = NULL;
    double watched = -1;
    struct silence s = {-1, 0, INFINITY};
    for (size_t i = 0; i < b->nnodes; i++) {
        struct node *n = &b->nodes[i];
        if (hb_node_runs(n, j->l.id)) {
            watched = fmax(watched, n->heard - fmax(since, n->heard_from));
            any = any ? any : n;
            silence_add(&s, b, (int)i, now, limit);
        }
    }
    if (!any || watched < limit)
        return;
    /* None of its new ranks reported, so none lags: only a node whose agent is silent while
     * another's reports (silence_culprit) can be named. */
    int culprit = silence_culprit(b, &s, since);
    struct node *n = culprit >= 0 ? &b->nodes[culprit] : NULL;
    struct hn_finding f;
    char ev[320], blame[HN_NAME_MAX + 64];
    /* Requeued again RESTART_HANGS times in a row, named node or not (a node the guard holds
     * may be named again and again); after that it is left to people, and a node it names
     * made suspect, not drained. */
    int again = ++j->l.restart_hangs <= RESTART_HANGS;
    blame_text(blame, sizeof(blame), n, BY_SILENT, now);
    snprintf(ev, sizeof(ev), "job=%s step=%llu restart=%u no_step_s=%.0f limit_s=%.0f culprit=%s%s",
             j->l.id, (unsigned long long)j->l.step, j->l.restart_hangs, now - since, limit,
             n ? n->name : "unknown", n ? blame_name[BY_SILENT] : "");
    hb_finding_set(&f, "hang", HN_SEV_FATAL, -1, ev,
                   "hang: job %s runs again (for %.0f s per the scheduler) but its new run "
                   "reported no step%s%s",
                   j->l.id, now - since, blame,
                   again ? "" : "; it hung at start before too: not requeued again");
    size_t from = b->qlen;
    if (n && !again)
        f.severity = HN_SEV_SUSPECT;
    if (n)
        hb_found(b, now, n, &f); /* a fatal one drains it, guard permitting, and requeues */
    else
        hb_push_out(b, HN_OUT_FINDING, now, NULL)->finding = f;
    if (!again) {
        tag_job(b, from, j->l.id);
        return;
    }
    if (since > j->l.interrupted_at) {
        lose_n(j, j->l.pending_cause, since - j->l.interrupted_at, j->l.charged_ranks);
        j->l.interrupted_at = since;
    }
    j->l.pending_cause = HN_LOSS_HANG;
    j->l.requeued_at = now;
    j->l.interruptions++;
    j->l.hung = 1;
    j->dirty = 1;
    if (!requeued(b, from, j->l.id))
        hb_requeue(b, now, any, j->l.id);
    tag_job(b, from, j->l.id);
}

/* A job that ends while it waits for its next run: its wait, lost to its cause, ran to `at`
 * (not before its interruption), where its wall time ends too. */
static void end_wait(struct job *j, double at)
{
    j->l.ended_at = fmax(at, j->l.interrupted_at);
    lose_n(j, j->l.pending_cause, j->l.ended_at - j->l.interrupted_at, j->l.charged_ranks);
    j->l.interrupted_at = j->l.ended_at;
}

/*
 * A job no scheduler lists (none polled, or an id it does not know: HOUSTON_JOB_ID outside
 * Slurm) cannot be asked whether it still runs, and is not checked for hangs: silent for
 * longer than its hang limit (a restart's, while it waits for its next run), it has ended, at
 * its last report. Before, its wall time ran on for ever after it finished, its ETTR falling
 * towards 0. A report brings it back (hn_brain_step), and the silence is then wall time
 * neither productive nor lost to a cause, as any gap without reports; so does a poll that
 * lists it (relisted), which is then watched for hangs as any job it lists.
 */
static void unlisted_end(struct hn_brain *b, double now, struct job *j)
{
    double last = fmax(j->l.last_report, j->last_progress);
    double limit = j->l.pending ? restart_limit(b, j) : hang_limit(b, j);
    if (!(last > 0) || now - last <= limit)
        return;
    j->l.ended = 1;
    j->l.ended_at = last;
    if (j->l.pending)
        end_wait(j, last); /* as for a job a poll missed */
    j->pause = 0;
    j->dirty = 1;
}

void hb_jobs_tick(struct hn_brain *b, double now)
{
    struct hn_jobs *js = b->jobs;
    told(js, now);
    for (size_t i = 0; i < js->n; i++) {
        struct job *j = js->v[i];
        if (j->l.ended)
            continue;
        /* Only the scheduler can say a job still holds its nodes; without it, silence may
         * just be the end of the job. A job it lists waiting (requeued, suspended) has not
         * ended; one it no longer lists has, also while houston waits for its next run. */
        if (j->sched_seen < 0) {
            unlisted_end(b, now, j);
            continue;
        }
        if (j->sched_seen < js->sched_poll) {
            j->l.ended = 1;
            j->l.ended_at = 0;
            /* Waiting for its next run, it never got one: the wait, lost to its cause, ran to
             * the last poll that listed it. (Should a later poll list it again, the wait goes
             * on from there: relisted.) */
            if (j->l.pending)
                end_wait(j, j->sched_seen);
            j->pause = 0;
            j->dirty = 1;
            continue;
        }
        if (j->l.pending)
            restart_watch(b, now, j);
        /* A job whose requeue failed goes on where it runs (hb_jobs_requeue_failed): it can
         * hang there like any other, unless it is hung already. */
        int stays = j->l.pending && j->l.requeue_failed && !j->l.hung;
        if ((j->l.pending && !stays) || j->sched_waiting) {
            add_point(j, now);
            continue;
        }
        /* Not while it waited: the clock starts again when it runs again (a suspended job). */
        double last = fmax(j->last_progress, j->ran_again);
        double limit = hang_limit(b, j);
        if (!j->l.hung && j->last_progress > 0 && now - last > limit) {
            double watched, arrived;
            job_heard(b, j, &watched, &arrived);
            if (j->unseen_told && arrived > j->unseen_at)
                j->unseen_told = 0; /* its agents are back */
            /* A hang: an agent of the job's nodes collected frames without a break for a whole
             * limit after its last progress, and none carried any. A backlog after an
             * outage is read in order; one with frames lost starts the record again. */
            if (watched >= limit)
                hang(b, now, j, limit);
            else if (now - arrived > limit / 2 && !j->unseen_told)
                hang_unseen(b, now, j, limit, arrived);
        }
        add_point(j, now);
    }
}

/* ---- views and persistence ---- */

size_t hn_brain_job_bytes(const struct hn_brain *b, size_t i)
{
    if (i >= b->jobs->n)
        return 0;
    const struct job *j = b->jobs->v[i];
    return sizeof(*j) + (size_t)j->ranks_alloc * (sizeof(*j->ranks) + ROWS * sizeof(double)) +
           (size_t)j->jn_cap * sizeof(*j->jn);
}

int hn_brain_job_rank(const struct hn_brain *b, size_t i, unsigned r, const char **node, int *gpu,
                      double *seconds)
{
    if (i >= b->jobs->n || r >= b->jobs->v[i]->l.ranks)
        return -EINVAL;
    const struct rank_st *k = &b->jobs->v[i]->ranks[r];
    *node = k->node >= 0 ? b->nodes[k->node].name : NULL;
    *gpu = k->gpu;
    *seconds = k->last_secs;
    return 0;
}

size_t hn_brain_job_count(const struct hn_brain *b)
{
    return b->jobs->n;
}

int hn_brain_find_job(const struct hn_brain *b, const char *id)
{
    return find_job(b->jobs, id);
}

int hn_brain_job_view(const struct hn_brain *b, size_t i, struct hn_job_view *out)
{
    const struct hn_jobs *js = b->jobs;
    if (i >= js->n)
        return -EINVAL;
    const struct job *j = js->v[i];
    /* A job whose reports were all refused (the rank cap) is kept only to count its nodes:
     * not a job to show anyone. */
    if (j->l.ranks == 0)
        return -ENOENT;
    memset(out, 0, sizeof(*out));
    out->l = j->l;
    out->state = j->l.ended         ? "ended"
                 : j->l.hung        ? "hung"
                 : j->l.pending     ? "restarting"
                 : j->sched_waiting ? "waiting"
                                    : "running";
    out->nodes = j->nodes;
    double now = js->now;
    double end = job_end(j, now);
    out->wall_s = end > j->l.first_seen ? end - j->l.first_seen : 0;
    out->step_seconds = typical_step(j);
    /* Only a job the scheduler lists is checked for hangs. */
    int checked = !j->l.ended && j->sched_seen >= 0 && !(j->sched_waiting && !j->l.pending);
    /* A restart waits for its first step under restart_watch's limit; a job whose requeue
     * failed runs on under the usual one. */
    out->hang_limit_s = !checked                               ? NAN
                        : j->l.pending && !j->l.requeue_failed ? restart_limit(b, j)
                                                               : hang_limit(b, j);
    out->no_progress_s = checked && !j->l.pending && !j->sched_waiting && j->last_progress > 0
                             ? fmax(0, now - fmax(j->last_progress, j->ran_again))
                             : NAN;
    out->pause = checked ? hn_pause_name(j->pause) : NULL;
    out->pause_step = j->pause_step;
    out->pause_s = out->pause ? fmax(0, now - j->pause_at) : NAN;
    out->straggler_every = j->stride;
    out->late_reports = j->late_total;
    out->untimed_reports = j->untimed;
    out->tokens_per_s = j->tokens_per_s_rank * j->l.ranks;
    out->tflops_per_gpu = j->tflops;
    out->mfu = job_mfu(j);
    out->ettr = ettr(j, now);
    out->effective_mfu = out->mfu * out->ettr;
    /* A wait for the next run is charged when it ends (the next run's first step, a hang at
     * restart, the job's end): until then it is shown as lost so far, so that lost time grows
     * through an outage instead of jumping when it is over. */
    if (j->l.pending && !j->l.ended && now > j->l.interrupted_at) {
        out->l.lost_s[j->l.pending_cause] += now - j->l.interrupted_at;
        out->l.lost_gpu_s[j->l.pending_cause] += (now - j->l.interrupted_at) * j->l.charged_ranks;
    }
    for (int c = 0; c < HN_LOSS_NCAUSES; c++)
        out->lost_gpu_h[c] = out->l.lost_gpu_s[c] / 3600.0;
    /* One keeping up again, its recovery held (quiet_start), is not shown. */
    out->straggler_rank = strag_held(j) ? -1 : j->strag_rank;
    if (out->straggler_rank >= 0 && j->ranks[j->strag_rank].node >= 0)
        hn_strlcpy(out->straggler_node, b->nodes[j->ranks[j->strag_rank].node].name,
                   sizeof(out->straggler_node));
    out->straggler_slowdown = out->straggler_rank >= 0 ? j->strag_slow : 0;
    out->straggler_onset = j->strag_onset;
    out->straggler_phase =
        out->straggler_rank >= 0 && j->strag_phase >= 0 ? phase_names[j->strag_phase] : NULL;
    out->straggler_phase_excess = out->straggler_phase ? j->strag_phase_excess : NAN;
    hn_strlcpy(out->plan, j->plan, sizeof(out->plan));
    out->series = j->series;
    out->nseries = j->nseries;
    return 0;
}

const struct hn_job_ledger *hn_brain_job_ledger(const struct hn_brain *b, size_t i)
{
    const struct hn_jobs *js = b->jobs;
    /* No ledger for a job whose reports were all refused, as in hn_brain_job_view. */
    return i < js->n && js->v[i]->l.ranks != 0 ? &js->v[i]->l : NULL;
}

int hn_brain_job_dirty(struct hn_brain *b, size_t i, int clear)
{
    if (i >= b->jobs->n)
        return 0;
    struct job *j = b->jobs->v[i];
    int d = j->dirty;
    if (clear)
        j->dirty = 0;
    return d;
}

int hn_brain_job_points_unsaved(const struct hn_brain *b, size_t i, const struct hn_job_point **p,
                                size_t *n, int *replace)
{
    if (i >= b->jobs->n)
        return -EINVAL;
    const struct job *j = b->jobs->v[i];
    size_t from = j->points_rewrite || j->saved_points > j->nseries ? 0 : j->saved_points;
    *p = j->series + from;
    *n = j->nseries - from;
    *replace = from == 0 && j->points_rewrite;
    return 0;
}

void hn_brain_job_points_saved(struct hn_brain *b, size_t i)
{
    if (i >= b->jobs->n)
        return;
    struct job *j = b->jobs->v[i];
    j->saved_points = j->nseries;
    j->points_rewrite = 0;
}

int hn_brain_restore_points(struct hn_brain *b, const char *id, const struct hn_job_point *p,
                            size_t n)
{
    int i = find_job(b->jobs, id);
    if (i < 0)
        return -ENOENT;
    struct job *j = b->jobs->v[i];
    /* Thinned as add_point would have: every k-th point, back from the newest, at most
     * SERIES_MAX (the oldest go first, as there). From the k-th on, an odd count lost the
     * newest point. */
    size_t k = 1;
    while (n / k > SERIES_MAX)
        k *= 2;
    j->nseries = 0;
    size_t count = n ? (n - 1) / k + 1 : 0;
    if (count > SERIES_MAX)
        count = SERIES_MAX;
    for (size_t q = n - count * k + k - 1; count && q < n; q += k)
        j->series[j->nseries++] = p[q];
    j->series_dt = SERIES_DT * (double)k;
    j->next_point = j->nseries ? j->series[j->nseries - 1].time + j->series_dt : 0;
    j->saved_points = j->nseries;
    j->points_rewrite = k > 1;
    return 0;
}

int hn_brain_restore_job(struct hn_brain *b, const struct hn_job_ledger *l)
{
    struct hn_jobs *js = b->jobs;
    if (!l->id[0] || l->ranks > RANKS_MAX)
        return -EINVAL;
    if (find_job(js, l->id) >= 0)
        return -EEXIST;
    struct job *j = new_job(js, l->id, l->first_seen);
    unsigned ranks = l->ranks;
    if (ranks)
        grow_ranks(b, l->first_seen, j, ranks); /* a new job: nothing is held */
    j->l = *l;
    j->l.ranks = ranks;
    /* The interrupted run's size, which its wait is charged at; a ledger of schema 10 or
     * older, or one not waiting, has none: its ranks stand in. */
    if (!(l->pending && l->charged_ranks > 0 && l->charged_ranks <= ranks))
        j->l.charged_ranks = ranks;
    /* A ledger of before GPU time was kept by charge: its time at its rank count. */
    for (int c = 0; c < HN_LOSS_NCAUSES; c++) {
        if (j->l.lost_gpu_s[c] == 0 && j->l.lost_s[c] != 0)
            j->l.lost_gpu_s[c] = j->l.lost_s[c] * ranks;
    }
    j->last_progress = l->last_report;
    j->advanced = 1; /* it waits past its saved step (waited_step), not on a first report */
    j->restored_at = l->last_report; /* what came before is the run it restores, or older */
    j->l.ranks_high = l->ranks_high > ranks && l->ranks_high <= RANKS_MAX ? l->ranks_high : ranks;
    /* Waiting for its next run when the controller stopped: it still is (the time since its
     * last progress goes to the same cause; nothing to correct, the charge is not known). Also
     * when it ended so waiting: a poll that missed it and a later one that lists it again
     * (relisted), or its next run's first step, go on with that wait as without a restart. */
    j->l.pending = l->pending != 0;
    /* Hung, and left alone after hangs at start, only while it waits for its next run. */
    j->l.hung = j->l.pending && l->hung;
    j->l.restart_hangs = j->l.pending ? l->restart_hangs : 0;
    j->l.requeue_failed = j->l.pending && l->requeue_failed;
    if (j->l.pending) {
        int c = l->pending_cause;
        j->l.pending_cause = c >= 0 && c < HN_LOSS_NCAUSES ? c : HN_LOSS_OTHER;
        if (!(l->interrupted_at > 0))
            j->l.interrupted_at = l->last_report;
        j->pending_at = l->last_report;
        if (!(l->requeued_at > 0)) /* a ledger from before it was saved */
            j->l.requeued_at = l->last_report;
        /* Not after the last requeue: a damaged database, or one of schema 11 or older. */
        if (!(l->restart_from > 0 && l->restart_from <= j->l.requeued_at))
            j->l.restart_from = j->l.requeued_at;
    }
    /* Its restarts' median stands for the ones it was taken from. */
    if (l->restart_s > 0 && isfinite(l->restart_s))
        j->restarts[j->nrestarts++] = l->restart_s;
    else
        j->l.restart_s = 0;
    return 0;
}
