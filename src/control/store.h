/*
 * store.h - the controller's durable state in SQLite (WAL): node states, the event log
 * (findings, transitions, actions, guard holds), the action journal, and which agent frames
 * were accepted.
 *
 * The contract that makes `kill -9` harmless: the controller applies one agent frame (or one
 * operator request) to the brain, then writes everything the brain decided, the nodes it
 * changed and the frame's (node, boot_id, seq) in ONE transaction (hn_store_begin ..
 * hn_store_commit), and only then answers the agent 200. Actions are journalled as pending in
 * that transaction and marked done by the executor after the scheduler ran them. On restart
 * the controller reloads the nodes into a new brain (hn_store_load_nodes), continues action
 * ids after hn_store_max_action_id(), and re-examines hn_store_pending_actions() before
 * running any of them again. A frame whose seq is not above the stored one for its
 * (node, boot_id) is a resend: answered 200 "duplicate" and not applied twice.
 *
 * One struct hn_store is one SQLite connection; use it from one thread at a time (the
 * controller serialises on its brain lock). Strings passed in are copied; strings passed to
 * callbacks are valid during the call only. Functions return 0 (or what they say) or a negative
 * errno: -EINVAL for a bad argument, -EEXIST for a duplicate key, -ENOENT for an unknown action,
 * -EBUSY when another process holds the database past the busy timeout, -EIO for the rest;
 * hn_store_error() then says why. After a failed write the caller rolls the transaction
 * back. A callback that returns non-zero stops the walk, and the walk returns that value.
 */
#ifndef HN_STORE_H
#define HN_STORE_H

#include "brain/brain.h"

#include <stddef.h>
#include <stdint.h>

struct hn_store;

/* Opens (creating if needed) the database at path, in WAL mode with synchronous=NORMAL and a busy
 * timeout, and creates or upgrades the schema (PRAGMA user_version); a database written by a
 * newer houston is refused. ":memory:" works for tests. NULL with a reason in err. */
struct hn_store *hn_store_open(const char *path, char *err, size_t errsize);
void hn_store_close(struct hn_store *s);
/* full=1: synchronous=FULL, commits survive a power cut too (one disk flush each); 0: NORMAL,
 * commits survive the process being killed (the default). */
int hn_store_set_sync(struct hn_store *s, int full);
/* The last SQLite error, for logs. */
const char *hn_store_error(const struct hn_store *s);

/* BEGIN IMMEDIATE: the write lock is taken at once, so a transaction never fails half-way
 * for want of it. Everything below that writes belongs between begin and commit. */
int hn_store_begin(struct hn_store *s);
int hn_store_commit(struct hn_store *s);
int hn_store_rollback(struct hn_store *s);

/* Appends one brain output to the event log (actions also go to the journal as pending; an
 * action id already journalled is -EEXIST). Returns the event's id (> 0) or a negative errno. */
int64_t hn_store_append(struct hn_store *s, const struct hn_out *o);

/* Saves a node's current state (insert or update; gpus_seen is not saved). */
int hn_store_put_node(struct hn_store *s, const struct hn_node_view *v);

/* Frames: 1 if (node, boot_id, seq) was already accepted (seq <= the stored one), 0 if not,
 * negative on error. hn_store_mark_frame records it as accepted at `time` (the controller's
 * clock); the stored seq never goes down. A new boot_id starts afresh; rows of earlier boots
 * are kept until retention (hn_store_prune), so a late resend from before a reboot is still
 * recognised. */
int hn_store_frame_seen(struct hn_store *s, const char *node, uint64_t boot_id, uint64_t seq);
int hn_store_mark_frame(struct hn_store *s, const char *node, uint64_t boot_id, uint64_t seq,
                        double time);

/* Action journal. Marks an action done (ok: 1) or failed (ok: 0) with a note for people
 * (NULL: none); -ENOENT when it was never journalled. */
int hn_store_action_done(struct hn_store *s, uint64_t action_id, int ok, const char *result);
typedef int (*hn_store_action_fn)(void *ctx, const struct hn_action *a, double time);
/* Calls fn for each action not yet done, oldest first, with the time it was decided. The list
 * is read before the first call, so fn may call hn_store_action_done. */
int hn_store_pending_actions(struct hn_store *s, hn_store_action_fn fn, void *ctx);
/* The highest action id ever journalled, 0 when none. On a read error also 0 (with
 * hn_store_error set): ids would then restart, and the journal refuses a reused id (-EEXIST
 * from hn_store_append), so nothing journalled is overwritten. */
uint64_t hn_store_max_action_id(struct hn_store *s);

/* Nodes, as saved. */
struct hn_store_node {
    const char *name, *rack, *sku;
    enum hn_node_state state;
    unsigned gpus_expected;
    int drained_by_houston;
    int held;
    double since;
    const char *reason;
    double removed_at, removed_from; /* its last removal by houston (hn_node_view) */
    int removed_cause;
};
typedef int (*hn_store_node_fn)(void *ctx, const struct hn_store_node *n);
/* Calls fn for each saved node, in the order they were first saved. fn must not save nodes. */
int hn_store_load_nodes(struct hn_store *s, hn_store_node_fn fn, void *ctx);

/* The job ledger: saved (insert or replace) when a job's ledger changed; loaded at restart,
 * oldest report first: at most `limit` jobs (0: all), those not ended first, of them those
 * waiting for their next run first, then the latest reports. */
int hn_store_put_job(struct hn_store *s, const struct hn_job_ledger *l);
typedef int (*hn_store_job_fn)(void *ctx, const struct hn_job_ledger *l);
int hn_store_load_jobs(struct hn_store *s, size_t limit, hn_store_job_fn fn, void *ctx);
/* Calls fn with the id of every saved job. */
typedef int (*hn_store_id_fn)(void *ctx, const char *id);
int hn_store_job_ids(struct hn_store *s, hn_store_id_fn fn, void *ctx);
/* One job's ledger: 0, -ENOENT when none is saved, or another negative errno. */
int hn_store_load_job(struct hn_store *s, const char *id, struct hn_job_ledger *out);

/* A job's history (struct hn_job_point: MFU, ETTR, step time over time), as the brain keeps it:
 * points p[0..n) added (a point at a time already saved replaces it), or with replace the
 * job's saved points replaced by them (the brain thinned its history). Unknown values (NaN)
 * are saved as NULL. Loaded at restart, oldest first. */
int hn_store_put_points(struct hn_store *s, const char *job, const struct hn_job_point *p, size_t n,
                        int replace);
typedef int (*hn_store_point_fn)(void *ctx, const struct hn_job_point *p);
int hn_store_load_points(struct hn_store *s, const char *job, hn_store_point_fn fn, void *ctx);

/* Retention: deletes what is older than `before` (seconds since the epoch): events (those of
 * an action only once it is done), done actions (never the newest, whose id the next ones
 * follow), jobs whose last report is older, with their histories (ended ones, and those not
 * ended for which keep(ctx, id) returns 0: a job the caller no longer has, which nothing would
 * end now; keep NULL: all), and the frame records of agent boots whose last frame is; at most
 * `batch` events, actions, ended jobs, other jobs and frame records (0: all), so that a call is
 * short: call again while a count comes back equal to batch or more. Rows deleted per table go
 * to *out (may be NULL). Runs in the caller's transaction, if any. */
struct hn_store_pruned {
    uint64_t events, actions, jobs, points, frames;
};
int hn_store_prune(struct hn_store *s, double before, size_t batch, hn_store_id_fn keep, void *ctx,
                   struct hn_store_pruned *out);

/* The event log, newest first. NULL/0 filter fields (or a NULL filter) match everything. */
struct hn_event_filter {
    const char *node;
    const char *kind; /* "finding", "transition", "action", "held" */
    const char *rule;
    const char *job;
    double since;      /* time >= since */
    int64_t before_id; /* id < before_id (paging), 0: no bound */
    unsigned limit;    /* 0: 100; at most 10000 */
};
/* A field the event's kind does not have is NULL (strings), 0 (severity, action_id) or -1
 * (gpu, action_done). from and to are state names (hn_node_state_name), action is "drain",
 * "resume" or "requeue". */
struct hn_store_event {
    int64_t id;
    double time;
    const char *kind, *node;
    const char *rule; /* findings, transitions (the cause), held */
    int severity;     /* enum hn_severity */
    int gpu;
    const char *detail, *evidence;
    const char *from, *to, *actor;     /* transitions */
    const char *action, *job, *reason; /* actions */
    uint64_t action_id;
    int action_done;           /* -1 pending, 0 failed, 1 done */
    const char *action_result; /* NULL until done, and when none was given */
};
typedef int (*hn_store_event_fn)(void *ctx, const struct hn_store_event *e);
int hn_store_query_events(struct hn_store *s, const struct hn_event_filter *f, hn_store_event_fn fn,
                          void *ctx);

#endif
