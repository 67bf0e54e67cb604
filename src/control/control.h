/*
 * control.h - the per-cluster controller that `houston control` runs (control_cmd.c).
 *
 * It receives agents' frames (POST /v1/ingest), feeds them to the brain (brain/brain.h)
 * under one lock, persists what the brain decided in the same transaction as the frame's
 * sequence number (control/store.h), answers the agent, and lets an executor thread carry out
 * the actions through the scheduler backend (sched/sched.h). A tick drives time-based
 * detection; a scheduler poll tells the brain which jobs run where and which draining nodes
 * are empty. The JSON API (control/api.c, docs/api.md) reads the same state.
 *
 * Files: control.c is the service (set-up, ingest, tick, scheduler poll, saving); executor.c
 * its executor thread; api.c the HTTP routes, which call into the service (never the other
 * way); control_cmd.c the command; config.c the settings; store.c the SQLite store.
 *
 * Threads: libmicrohttpd's (ingest and API handlers), the executor, and the main thread
 * (tick, signals). Everything shared is under struct hn_control.lock.
 */
#ifndef HN_CONTROL_H
#define HN_CONTROL_H

#include "common/buf.h"
#include "common/log.h"
#include "common/rules.h"
#include "common/sku.h"
#include "brain/brain.h"
#include "control/store.h"
#include "sched/sched.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define HN_CONTROL_MAX_NODES 100000

struct hn_control_node_cfg {
    char name[HN_NAME_MAX];
    char rack[HN_NAME_MAX];
    char sku[32];
    unsigned gpus;
};

struct hn_control_config {
    char listen[128];                   /* listen: default 127.0.0.1:8080 */
    char token_file[PATH_MAX];          /* token-file: agents' bearer token (required) */
    char operator_token_file[PATH_MAX]; /* operator-token-file: for POSTs (required) */
    char store[PATH_MAX];         /* store: SQLite path, default /var/lib/houston/houston.db */
    int store_full_sync;          /* store-sync: normal (default) or full */
    double retention_days;        /* store-retention: days of events and ended jobs, 0: all */
    char scheduler[32];           /* scheduler: slurm | dry-run */
    char scontrol[256];           /* scontrol: program, default scontrol */
    char squeue[256];             /* squeue: program, default squeue */
    int sched_timeout_ms;         /* scheduler-timeout: seconds in the file, default 10 */
    char topology_conf[PATH_MAX]; /* topology-conf: Slurm topology.conf (block plugin) */
    char xid_catalog[PATH_MAX];   /* xid-catalog */
    char sku_file[PATH_MAX];      /* sku-file: the operator's SKUs, over data/skus.csv */
    char web_root[PATH_MAX];      /* web-root: the dashboard's files (docs/dashboard.md) */
    char default_sku[32];         /* default-sku: for nodes not listed, default H100 */
    unsigned default_gpus;        /* default-gpus: default 8 */
    int accept_unknown; /* accept-unknown-nodes: yes, no; default yes only with no node listed */
    double tick_s;      /* tick: seconds between brain ticks, default 5 */
    double poll_s;      /* scheduler-poll: seconds, default 5 */
    double agent_silence_s;         /* agent-silence: seconds without a frame, default 120 */
    size_t max_frame;               /* max-frame-bytes: default 4 MiB */
    struct hn_brain_config brain;   /* guard-fraction, guard-window, guard-per-rack, ... */
    struct hn_rules rules;          /* the rule keys, rules-file, rule; brain follows them */
    struct hn_sku_rules *sku_rules; /* rule = SKU KEY VALUE (repeatable) */
    size_t nsku_rules;
    struct hn_control_node_cfg *nodes; /* node = NAME RACK SKU GPUS (repeatable) */
    size_t nnodes;
};

void hn_control_config_defaults(struct hn_control_config *cfg);
void hn_control_config_fini(struct hn_control_config *cfg);
/* The shipped rule thresholds (data/rules.csv); hn_cmd_control applies it before the config
 * file, as if the file began with `rules-file = <this>`. */
const char *hn_control_rules_default_path(void);
/* One setting; 0 or -1 with a reason. */
int hn_control_config_set(struct hn_control_config *cfg, const char *key, const char *value,
                          char *err, size_t errsize);
/* Checks what the settings need (token files readable, store directory writable, topology
 * parseable). Appends one line per problem to out; returns the number of problems. */
int hn_control_config_check(const struct hn_control_config *cfg, struct hn_buf *out);

/* Per-node facts the brain does not keep. */
struct hn_control_node {
    double last_seen;   /* when the controller received its last frame */
    double last_sample; /* the agent's time of that frame, clamped (rates use it) */
    uint64_t frames;
    /* The agent's clock against the controller's: the least (arrival - collection time) of
     * its frames, which a queued frame does not lower, rising by at most a second a minute
     * (a clock stepped back). Its frames and step reports are put in the controller's clock
     * with it (agent_clock in control.c). */
    double clock_off;
    double clock_off_at;   /* when it was last set; 0: not yet */
    uint64_t boot_id, seq; /* of its last frame: the next one follows it, or there is a break */
    /* The last frame saved as accepted (hn_store_mark_frame), when saved: a frame of the same
     * boot is a duplicate without asking the store when its seq is not above (frame_seen in
     * control.c). Cleared when retention may have deleted the boot's record. */
    int saved;
    uint64_t saved_boot, saved_seq;
};

/* A set of job ids (open addressing, grows at half full). */
struct hn_idset {
    uint64_t *v; /* the ids' hashes (control.c, id_key); 0: a free slot */
    size_t cap, n;
};

struct hn_control {
    struct hn_control_config cfg;
    pthread_mutex_t lock;
    struct hn_brain *brain;
    struct hn_store *store;
    struct hn_xid_catalog *catalog;
    struct hn_sku_table *skus;
    struct hn_control_node *nodes; /* by brain node index */
    size_t cap_nodes;
    char token[512];
    char operator_token[512];
    /* executor */
    pthread_t executor;
    pthread_cond_t wake;
    int stop;
    int executor_running;
    struct hn_sched sched;
    /* counters for /metrics, under lock */
    uint64_t steps_accepted, steps_refused; /* step reports in accepted frames */
    uint64_t steps_not_owner; /* refused: sent by a user other than the job's owner or root */
    uint64_t jobs_reloaded;   /* ledgers reloaded from the store for a job the brain forgot */
    uint64_t job_reads;       /* store reads for a job the brain did not have (reload_job) */
    /* The ids of the jobs in the store, or more (a job whose saving was rolled back, one
     * retention deleted since its last rebuild): reload_job reads the store only for these. */
    struct hn_idset saved_jobs;
    uint64_t steps_no_uid;   /* accepted without a sender uid (an older agent): not checked */
    uint64_t owners_dropped; /* jobs whose owner a poll could not keep (hn_brain_job_owner) */
    uint64_t polls_ok, polls_failed; /* scheduler polls (hn_control_poll) */
    int poll_failing;                /* the last poll failed (logged once until one works) */
    uint64_t frames_accepted, frames_duplicate, frames_malformed, frames_unauthorized,
        frames_unknown, samples;
    uint64_t outputs[4]; /* by enum hn_out_kind */
    uint64_t actions_ok, actions_failed, actions_skipped;
    uint64_t store_errors;
    uint64_t pruned[5];    /* rows store-retention deleted: events, actions, jobs, points,
                            * frames */
    uint64_t pruned_told;  /* events, actions, jobs, frames deleted as of the last log line */
    uint64_t prune_errors; /* retention runs that failed (tried again an hour later) */
    double next_prune;     /* when retention next runs (hn_control_tick) */
    int fatal;             /* a store failure: the process stops and a restart reloads the store */
    struct hn_complain malformed_log; /* refused frames, logged rate-limited */
    double ingest_seconds;            /* time spent applying frames */
};

/* Sets up everything but the HTTP server and threads: reads token files, opens the store,
 * builds the brain from the config, restores saved nodes. 0 or -1 with a reason. */
int hn_control_init(struct hn_control *c, char *err, size_t errsize);
void hn_control_fini(struct hn_control *c);

/* Applies one frame (the ingest handler's work, usable without HTTP). Returns 200 (accepted),
 * 208 (duplicate: already accepted), 400 (malformed, reason in err), 500 (store failure). */
int hn_control_ingest(struct hn_control *c, const void *frame, size_t len, double now, char *err,
                      size_t errsize);
/* The store failed after the brain changed: logs it, sets fatal and raises SIGTERM so the
 * process stops and a restart reloads a consistent state. Caller holds c->lock. */
void hn_control_store_failed(struct hn_control *c, const char *what);
/* Saves what the brain decided (hn_control_flush) in one transaction. On a failure it rolls
 * back and stops the controller (hn_control_store_failed with what, e.g. "saving a tick").
 * Caller holds c->lock. 0 or -EIO. */
int hn_control_save(struct hn_control *c, const char *what);
/* Ticks the brain and persists what it decided. */
void hn_control_tick(struct hn_control *c, double now);
/* Asks the scheduler which job runs where and whether draining nodes are empty (the backend's
 * list_jobs and node_info; the executor thread calls it every poll-interval). Nothing for a
 * backend that cannot list jobs (dry-run). */
void hn_control_poll(struct hn_control *c, double now);
/* Starts the executor thread, which carries out pending actions through the scheduler and
 * polls it; stop asks it to end and joins it (nothing when it did not start). 0 or -EAGAIN. */
int hn_control_executor_start(struct hn_control *c);
void hn_control_executor_stop(struct hn_control *c);
/* Persists and announces everything the brain decided, inside the caller's transaction
 * (hn_control_save is the whole of it). Caller holds c->lock. 0 or -EIO. */
int hn_control_flush(struct hn_control *c);

/* The HTTP routes (control/api.c). */
struct hn_http_route;
const struct hn_http_route *hn_control_routes(const struct hn_control *c, size_t *n);

#endif
