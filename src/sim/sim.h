/*
 * sim.h - the fleet simulator: a discrete-event model of a GPU fleet running one synchronous
 * training job, driving the controller's real brain (brain/brain.h) in virtual time.
 *
 * What is modelled (docs/sim.md has the long version):
 *   - the fleet: racks of nodes of GPUs (NVL72: 18 nodes x 4 GPUs; HGX: 8-GPU nodes), of which
 *     the job uses all but the spares;
 *   - the job: synchronous, so the slowest node gates every step; it reports its progress to
 *     the brain as step reports, one per node (a node's ranks report alike) every `report`
 *     seconds of nominal compute; it checkpoints every ckpt_interval of compute (the write
 *     pauses it for ckpt_write) and restarts from its last checkpoint after restart_overhead;
 *   - failures: a Poisson process over the job's and the spares' nodes at node_failure_rate per
 *     node-day, the cause drawn from data/failures.csv (the Llama 3 paper's table 5), each
 *     reaching the brain through its signal (an Xid, a DBE, an IB port down, a lost GPU, a hang,
 *     or nothing for silent corruption); some announce themselves earlier by a rising
 *     correctable-ECC count (precursors);
 *   - degradations: a node's compute slows down (a throttled GPU) at straggler_rate per
 *     node-day by straggler_slowdown;
 *   - the scheduler: the brain's actions (drain, requeue, resume) are carried out by the
 *     simulator; a requeued job restarts on healthy nodes, spares replacing drained ones;
 *     broken nodes come back after repair_time, healthy ones drained by mistake after
 *     inspect_time. Faults the brain does not act on are handled as operators would without
 *     houston: a crashed or hung job is restarted after fallback_detect.
 * Nothing in the brain knows it is simulated: the same inputs, the same code.
 *
 * Deterministic for a given seed: one random stream (xoshiro256**), events ordered by time and
 * then by insertion.
 */
#ifndef HN_SIM_H
#define HN_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum hn_sim_policy {
    HN_SIM_REACTIVE,   /* act on faults only */
    HN_SIM_STRAGGLER,  /* and replace stragglers at a checkpoint when it pays */
    HN_SIM_PREDICTIVE, /* and replace nodes whose ECC trend announces a failure */
    HN_SIM_NPOLICIES
};

struct hn_sim_config {
    unsigned gpus;             /* in the fleet, spares included [16384] */
    unsigned gpus_per_node;    /* [8] */
    unsigned nodes_per_rack;   /* [18 for 4-GPU nodes, else 1] */
    unsigned spares;           /* nodes kept out of the job [2% of nodes, at least 1] */
    double days;               /* simulated time [54] */
    double node_failure_rate;  /* unexpected interruptions per node-day [419/(54*2048)] */
    double ckpt_interval_s;    /* compute time between checkpoints [3600] */
    double ckpt_write_s;       /* [60] */
    double restart_overhead_s; /* from requeue to the first step of the next run [600] */
    double report_s;           /* nominal compute between two step reports [60] */
    double repair_s;           /* a broken node's repair [48 h] */
    double inspect_s;          /* a healthy node drained by mistake comes back [4 h] */
    double fallback_detect_s;  /* operators notice what houston did not [1800] */
    double straggler_rate;     /* slowdown onsets per node-day [0.002] */
    double straggler_slowdown; /* [0.3] */
    double base_mfu;           /* the job's MFU without faults [0.40] */
    double tick_s;             /* brain ticks and scheduler polls [300] */
    uint64_t seed;             /* [1] */
    enum hn_sim_policy policy; /* [straggler] */
    int precursors;            /* faults may announce themselves [1] */
    char sku[32];              /* [H100, or GB200 for 4-GPU nodes] */
    char failures_file[4096];  /* [data/failures.csv] */
    unsigned timeline_max;     /* events kept for the timeline [200] */
    int gpu_samples;           /* also send each job GPU's telemetry every tick [0] */
    /* The job's ranks per node, one per GPU (the ledger's GPU-hours count ranks) [0: 1, one
     * report per node, so that 100,000 GPUs simulate in minutes] */
    unsigned ranks_per_node;
    double epoch_s; /* added to every time the brain sees [0] */
};

void hn_sim_config_default(struct hn_sim_config *cfg);
/* The policy's name as --policy takes it ("reactive", "straggler", "predictive"); "unknown"
 * out of range. hn_sim_policy_names: the names by policy, NULL after the last. */
const char *hn_sim_policy_name(enum hn_sim_policy p);
extern const char *const hn_sim_policy_names[HN_SIM_NPOLICIES + 1];
/* Sets a key of a scenario file or a flag (without dashes): gpus, gpus-per-node,
 * nodes-per-rack, spares, days, node-failure-rate, ckpt-interval, ckpt-write,
 * restart-overhead, report, repair-time, inspect-time, fallback-detect, straggler-rate,
 * straggler-slowdown, base-mfu, tick, seed, policy, precursors, sku, failures-file.
 * Durations take s, m, h, d suffixes. Returns 0 or -1 with a reason in err ("KEY: bad value
 * 'VALUE'", "unknown setting 'KEY'"). The keys are a table in sim_cmd.c, which makes the flags
 * of `houston sim` from it too. */
int hn_sim_config_set(struct hn_sim_config *cfg, const char *key, const char *value, char *err,
                      size_t errsize);

/* Why GPU time was lost, as the simulator knows it (the truth, not the brain's view). */
enum hn_sim_cause {
    HN_SIM_LOST_FAILURE,    /* crashes: recomputation and restarts */
    HN_SIM_LOST_STRAGGLER,  /* slow steps, and the restarts that replaced stragglers */
    HN_SIM_LOST_HANG,       /* time hung, recomputation and restarts */
    HN_SIM_LOST_PREDICTIVE, /* restarts that replaced nodes before they failed */
    HN_SIM_LOST_CHECKPOINT, /* checkpoint writes */
    HN_SIM_LOST_WAITING,    /* no healthy nodes to run on */
    HN_SIM_NCAUSES
};
const char *hn_sim_cause_name(enum hn_sim_cause c);

struct hn_sim_result {
    double ettr, mfu, effective_mfu;
    double lost_gpu_h[HN_SIM_NCAUSES];
    double job_gpu_h;                     /* GPU-hours the job held */
    unsigned interruptions;               /* job restarts */
    unsigned failures;                    /* faults on any node */
    unsigned job_failures;                /* of which on the job's nodes */
    unsigned stragglers;                  /* slowdown onsets */
    unsigned detected;                    /* faults and slowdowns the brain found */
    double detect_median_s, detect_p95_s; /* fault or onset -> the brain's first finding */
    unsigned drains, false_drains;        /* false: a node with nothing wrong */
    unsigned predicted;                   /* failures avoided by replacing the node first */
    double brain_ettr;                    /* the brain's own ledger, for comparison */
    double wall_s;                        /* simulated */
    double kept_s;                        /* wall time of kept steps (ETTR = kept / wall) */
    double lost_s[HN_SIM_NCAUSES];        /* wall time lost; kept + these = wall (the
                                             straggler's slowdown of kept steps is in kept,
                                             and added to lost_gpu_h[straggler]) */
    uint64_t events, step_reports;
};

struct hn_sim;

/* NULL with a reason in err (bad configuration, unreadable failures file). */
struct hn_sim *hn_sim_new(const struct hn_sim_config *cfg, char *err, size_t errsize);
void hn_sim_free(struct hn_sim *s);
/* Runs to the end of the simulated time and closes the books. */
void hn_sim_run(struct hn_sim *s);
/* Runs the events up to virtual time t (seconds since the start); for real-time use
 * (`houston demo`). hn_sim_run() afterwards finishes the run. */
void hn_sim_run_until(struct hn_sim *s, double t);
double hn_sim_now(const struct hn_sim *s);

struct hn_brain;
struct hn_out;
/* Called with every output of the brain, before the simulator acts on it. */
typedef void (*hn_sim_output_fn)(void *ctx, const struct hn_out *o);
void hn_sim_set_output_hook(struct hn_sim *s, hn_sim_output_fn fn, void *ctx);
/* The brain the simulator drives (to serve its state, as `houston demo` does). */
struct hn_brain *hn_sim_brain(struct hn_sim *s);
struct hn_sku_table;
/* The SKU table the simulator loaded (data/skus.csv), borrowed: it lives as long as s. */
struct hn_sku_table *hn_sim_skus(struct hn_sim *s);
/* Throttles GPU 0 of the job's slot-th node (0-based: the node of rank slot x
 * ranks_per_node) by slowdown (0.3: 30%) now; returns the node or -1. */
int hn_sim_inject_slowdown(struct hn_sim *s, unsigned slot, double slowdown);
const char *hn_sim_job_id(const struct hn_sim *s);
void hn_sim_result(const struct hn_sim *s, struct hn_sim_result *out);
/* Each fault, precursor or slowdown the brain found: when it began, what it was, on which
 * node, and how long until the brain's first suspect or fatal finding on that node. */
#define HN_SIM_DETECTIONS_MAX 4096
struct hn_sim_detection {
    double time_s, latency_s;
    int node;
    char kind[64];
};
size_t hn_sim_detections(const struct hn_sim *s, const struct hn_sim_detection **out);

/* The timeline: "TIME_S KIND TEXT" lines, oldest first, at most timeline_max. */
size_t hn_sim_timeline(const struct hn_sim *s, const char *const **lines);

/* Meta's expected ETTR for random failures and reactive recovery ("Revisiting Reliability in
 * Large-Scale Machine Learning Research Clusters", Kokolis et al. 2024):
 * (1 - N r (u0 + dt/2)) / (1 + w / dt), N nodes at r failures per node-second. */
double hn_sim_expected_ettr(double nodes, double rate_per_node_s, double u0_s, double ckpt_s,
                            double write_s);

#endif
