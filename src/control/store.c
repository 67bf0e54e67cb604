/*
 * store.c - the controller's durable state in SQLite (see store.h for the contract).
 *
 * One connection, WAL journal. synchronous=NORMAL (the default): a committed transaction is
 * in the WAL when the commit returns, so a process killed at any point leaves either the whole
 * transaction or none of it; only a power cut can lose the last commits. synchronous=FULL
 * (hn_store_set_sync) also survives that, at one disk flush per commit (~340 commits/s on
 * this project's VMs, against ~9,500 with NORMAL).
 * The statements the controller runs for every frame (begin, commit, append, put_node,
 * frame_seen, mark_frame) are prepared once at open and reset after each use; listings are
 * prepared per call. Strings are bound SQLITE_STATIC: each bound string outlives the step
 * that reads it, within the same function, and bindings are cleared right after.
 *
 * SQLite has no unsigned 64-bit integer: boot ids, seqs and action ids are stored as the
 * int64 with the same bits, and seqs are compared as unsigned (frame_seen in C, mark_frame in
 * SQL). Fixed-size strings of the brain's structs are bound up to their array size even if a
 * terminator were missing.
 */
#include "control/store.h"

#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_VERSION      12
#define BUSY_TIMEOUT_MS     5000
#define QUERY_LIMIT_DEFAULT 100
#define QUERY_LIMIT_MAX     10000

/* Schema migrations: migrations[v] takes a database from user_version v to v + 1. A new
 * version appends one entry and never edits an old one. */
static const char *const migrations[SCHEMA_VERSION] = {
    "CREATE TABLE nodes ("
    " name TEXT PRIMARY KEY, rack TEXT NOT NULL, sku TEXT NOT NULL, state TEXT NOT NULL,"
    " gpus_expected INTEGER NOT NULL, drained_by_houston INTEGER NOT NULL,"
    " held INTEGER NOT NULL, since REAL NOT NULL, reason TEXT NOT NULL);"
    "CREATE TABLE events ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, kind TEXT NOT NULL,"
    " node TEXT NOT NULL, rule TEXT, severity INTEGER, gpu INTEGER, detail TEXT, evidence TEXT,"
    " from_state TEXT, to_state TEXT, actor TEXT, action TEXT, action_id INTEGER, job TEXT,"
    " reason TEXT);"
    "CREATE INDEX events_node ON events (node, id);"
    "CREATE INDEX events_kind ON events (kind, id);"
    "CREATE TABLE actions ("
    " id INTEGER PRIMARY KEY, event_id INTEGER NOT NULL, kind TEXT NOT NULL,"
    " node TEXT NOT NULL, job TEXT NOT NULL, reason TEXT NOT NULL, time REAL NOT NULL,"
    " done INTEGER, result TEXT);"
    "CREATE INDEX actions_pending ON actions (id) WHERE done IS NULL;"
    "CREATE TABLE frames ("
    " node TEXT NOT NULL, boot_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " PRIMARY KEY (node, boot_id)) WITHOUT ROWID;",
    /* 1 -> 2: the job ledger, and events about a job name it. */
    "CREATE TABLE jobs ("
    " id TEXT PRIMARY KEY, ranks INTEGER NOT NULL, first_seen REAL NOT NULL,"
    " last_report REAL NOT NULL, step INTEGER NOT NULL, checkpoint INTEGER NOT NULL,"
    " productive_s REAL NOT NULL, lost_failure REAL NOT NULL, lost_straggler REAL NOT NULL,"
    " lost_hang REAL NOT NULL, lost_operator REAL NOT NULL, lost_other REAL NOT NULL,"
    " interruptions INTEGER NOT NULL, ended INTEGER NOT NULL);"
    "CREATE INDEX events_job ON events (job, id) WHERE job IS NOT NULL;",
    /* 2 -> 3: the longest pause a job came back from (its hang limit allows for it). */
    "ALTER TABLE jobs ADD COLUMN pause_s REAL NOT NULL DEFAULT 0;",
    /* 3 -> 4: a job's history (MFU, ETTR, step time over time), as the brain keeps it. */
    "CREATE TABLE job_points ("
    " job TEXT NOT NULL, time REAL NOT NULL, mfu REAL, ettr REAL, step_s REAL,"
    " PRIMARY KEY (job, time)) WITHOUT ROWID;",
    /* 4 -> 5: a job waiting for its next run stays so across a restart. */
    "ALTER TABLE jobs ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN pending_cause INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN interrupted_at REAL NOT NULL DEFAULT 0;",
    /* 5 -> 6: a hung job stays so, one left alone after hangs at start or whose requeue
     * failed too. */
    "ALTER TABLE jobs ADD COLUMN hung INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN restart_hangs INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN requeue_failed INTEGER NOT NULL DEFAULT 0;"
    /* and retention finds old events by time (hn_store_prune) */
    "CREATE INDEX events_time ON events (time);",
    /* 6 -> 7: when a boot's last frame came, so that retention can forget old boots; the rows
     * already there count from the upgrade. No index on it: every frame moves its boot's time,
     * and an index would cost each frame's transaction more than the hourly scan of one row
     * per agent boot costs retention. */
    "ALTER TABLE frames ADD COLUMN time REAL NOT NULL DEFAULT 0;"
    "UPDATE frames SET time = CAST(strftime('%s', 'now') AS REAL);",
    /* 7 -> 8: a job's work since its last checkpoint (and the straggler's share of it), so
     * that an interruption after a restart charges it; when a job that ended while waiting
     * for its next run was last listed. */
    "ALTER TABLE jobs ADD COLUMN since_ckpt_s REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN strag_ckpt_s REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN ended_at REAL NOT NULL DEFAULT 0;",
    /* 8 -> 9: GPU time lost by cause, charged at the job's rank count of the time (a job that
     * changed size between runs); before, wall time times the ranks now. */
    "ALTER TABLE jobs ADD COLUMN gpu_failure REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN gpu_straggler REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN gpu_hang REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN gpu_operator REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN gpu_other REAL NOT NULL DEFAULT 0;"
    "UPDATE jobs SET gpu_failure = lost_failure * ranks, gpu_straggler = lost_straggler * ranks,"
    " gpu_hang = lost_hang * ranks, gpu_operator = lost_operator * ranks,"
    " gpu_other = lost_other * ranks;"
    "ALTER TABLE jobs ADD COLUMN ranks_high INTEGER NOT NULL DEFAULT 0;",
    /* 9 -> 10: a node's last removal by houston (time, its agent's frame before, the cause),
     * so that a job first heard from it after a controller restart is still requeued. */
    "ALTER TABLE nodes ADD COLUMN removed_at REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE nodes ADD COLUMN removed_from REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE nodes ADD COLUMN removed_cause INTEGER NOT NULL DEFAULT 0;",
    /* 10 -> 11: when houston requeued a job waiting for its next run, so that after a
     * controller restart a late report of the run it ended is not its next run's; and the
     * size of that run, which its wait is charged at. */
    "ALTER TABLE jobs ADD COLUMN requeued_at REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN charged_ranks INTEGER NOT NULL DEFAULT 0;",
    /* 11 -> 12: what a job's restarts took (their median), which the straggler policy weighs
     * against a straggler's waste. */
    "ALTER TABLE jobs ADD COLUMN restart_s REAL NOT NULL DEFAULT 0;"
    /* and when the restart a waiting job waits for began, which it is measured from */
    "ALTER TABLE jobs ADD COLUMN restart_from REAL NOT NULL DEFAULT 0;",
};

enum stmt_id {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_EVENT,
    ST_ACTION,
    ST_NODE,
    ST_FRAME_GET,
    ST_FRAME_PUT,
    ST_ACTION_DONE,
    ST_JOB,
    ST_JOB_GET,
    ST_POINTS_CLEAR,
    ST_POINT,
    ST_COUNT
};

/* A job ledger's columns as hn_store_load_jobs and hn_store_load_job read them (job_row). */
#define JOB_COLUMNS                                                                                \
    "id, ranks, first_seen, last_report, step, checkpoint, productive_s, lost_failure,"            \
    " lost_straggler, lost_hang, lost_operator, lost_other, interruptions, ended, pause_s,"        \
    " pending, pending_cause, interrupted_at, hung, restart_hangs, requeue_failed, since_ckpt_s,"  \
    " strag_ckpt_s, ended_at, gpu_failure, gpu_straggler, gpu_hang, gpu_operator, gpu_other,"      \
    " ranks_high, requeued_at, charged_ranks, restart_s, restart_from"

static const char *const stmt_sql[ST_COUNT] = {
    [ST_JOB_GET] = "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?",
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_POINTS_CLEAR] = "DELETE FROM job_points WHERE job = ?",
    [ST_POINT] = "INSERT OR REPLACE INTO job_points (job, time, mfu, ettr, step_s)"
                 " VALUES (?, ?, ?, ?, ?)",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_EVENT] = "INSERT INTO events (time, kind, node, rule, severity, gpu, detail, evidence,"
                 " from_state, to_state, actor, action, action_id, job, reason)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [ST_ACTION] = "INSERT INTO actions (id, event_id, kind, node, job, reason, time)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?)",
    [ST_NODE] = "INSERT INTO nodes (name, rack, sku, state, gpus_expected, drained_by_houston,"
                " held, since, reason, removed_at, removed_from, removed_cause)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET rack = excluded.rack, sku = excluded.sku,"
                " state = excluded.state, gpus_expected = excluded.gpus_expected,"
                " drained_by_houston = excluded.drained_by_houston, held = excluded.held,"
                " since = excluded.since, reason = excluded.reason,"
                " removed_at = excluded.removed_at, removed_from = excluded.removed_from,"
                " removed_cause = excluded.removed_cause",
    [ST_FRAME_GET] = "SELECT seq FROM frames WHERE node = ? AND boot_id = ?",
    /* The update happens only when the new seq is above the stored one as unsigned numbers:
     * with equal signs the signed order is the unsigned one, otherwise the negative (top bit
     * set) one is the larger. */
    [ST_FRAME_PUT] = "INSERT INTO frames (node, boot_id, seq, time) VALUES (?, ?, ?, ?)"
                     " ON CONFLICT (node, boot_id) DO UPDATE SET seq = excluded.seq,"
                     " time = excluded.time"
                     " WHERE CASE WHEN (excluded.seq < 0) = (frames.seq < 0)"
                     " THEN excluded.seq > frames.seq ELSE excluded.seq < 0 END",
    [ST_ACTION_DONE] = "UPDATE actions SET done = ?, result = ? WHERE id = ?",
    [ST_JOB] =
        "INSERT OR REPLACE INTO jobs (id, ranks, first_seen, last_report, step, checkpoint,"
        " productive_s, lost_failure, lost_straggler, lost_hang, lost_operator, lost_other,"
        " interruptions, ended, pause_s, pending, pending_cause, interrupted_at, hung,"
        " restart_hangs, requeue_failed, since_ckpt_s, strag_ckpt_s, ended_at, gpu_failure,"
        " gpu_straggler, gpu_hang, gpu_operator, gpu_other, ranks_high, requeued_at,"
        " charged_ranks, restart_s, restart_from)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
        " ?, ?, ?, ?, ?, ?, ?, ?)",
};

struct hn_store {
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    char err[256];
};

static const char *const out_kind_names[] = {
    [HN_OUT_FINDING] = "finding",
    [HN_OUT_TRANSITION] = "transition",
    [HN_OUT_ACTION] = "action",
    [HN_OUT_HELD] = "held",
};

static const char *const action_kind_names[] = {
    [HN_ACT_DRAIN] = "drain",
    [HN_ACT_RESUME] = "resume",
    [HN_ACT_REQUEUE] = "requeue",
};

/* ---- errors ---- */

static int errno_of(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
        return -EEXIST;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return -EBUSY;
    case SQLITE_NOMEM:
        return -ENOMEM;
    case SQLITE_FULL:
        return -ENOSPC;
    default:
        return -EIO;
    }
}

/* Records "what: SQLite's message" and returns the errno for rc. */
static int fail(struct hn_store *s, int rc, const char *what)
{
    snprintf(s->err, sizeof(s->err), "%s: %s", what, sqlite3_errmsg(s->db));
    return errno_of(rc);
}

static int fail_msg(struct hn_store *s, int err, const char *msg)
{
    hn_strlcpy(s->err, msg, sizeof(s->err));
    return err;
}

/* ---- binding parameters in order ---- */

/* Binds parameters 1, 2, ... of one statement and remembers the first failure, so a caller
 * binds everything and checks once. */
struct binder {
    sqlite3_stmt *st;
    int next;
    int rc;
};

static void bind_init(struct binder *b, sqlite3_stmt *st)
{
    b->st = st;
    b->next = 1;
    b->rc = SQLITE_OK;
}

static void bind_result(struct binder *b, int rc)
{
    if (b->rc == SQLITE_OK)
        b->rc = rc;
    b->next++;
}

/* Binds text of at most cap bytes (the array it lives in); NULL binds SQL NULL. */
static void bind_text(struct binder *b, const char *s, size_t cap)
{
    if (!s) {
        bind_result(b, sqlite3_bind_null(b->st, b->next));
        return;
    }
    size_t n = strnlen(s, cap);
    bind_result(b, sqlite3_bind_text(b->st, b->next, s, (int)n, SQLITE_STATIC));
}

/* A NUL-terminated string that does not live in a fixed array. */
static void bind_str(struct binder *b, const char *s)
{
    bind_text(b, s, s ? strlen(s) : 0);
}

static void bind_int(struct binder *b, int64_t v)
{
    bind_result(b, sqlite3_bind_int64(b->st, b->next, v));
}

static void bind_u64(struct binder *b, uint64_t v)
{
    bind_int(b, (int64_t)v);
}

static void bind_double(struct binder *b, double v)
{
    bind_result(b, sqlite3_bind_double(b->st, b->next, v));
}

static void bind_null(struct binder *b, int count)
{
    for (int i = 0; i < count; i++)
        bind_result(b, sqlite3_bind_null(b->st, b->next));
}

/* Steps a cached statement that returns no row, then makes it ready for the next use. */
static int run(struct hn_store *s, enum stmt_id id, const struct binder *b, const char *what)
{
    sqlite3_stmt *st = s->st[id];
    int ret = 0;
    if (b && b->rc != SQLITE_OK) {
        ret = fail(s, b->rc, what);
    } else {
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            ret = fail(s, rc, what);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

/* ---- opening ---- */

static int exec(struct hn_store *s, const char *sql, const char *what)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : fail(s, rc, what);
}

/* Runs a statement that returns one integer or text row (a PRAGMA). text may be NULL. */
static int query_one(struct hn_store *s, const char *sql, int64_t *num, char *text, size_t size)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, sql);
    int ret = 0;
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        ret = rc == SQLITE_DONE ? fail_msg(s, -EIO, "no row") : fail(s, rc, sql);
    } else {
        if (num)
            *num = sqlite3_column_int64(st, 0);
        if (text) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            hn_strlcpy(text, t ? (const char *)t : "", size);
        }
    }
    sqlite3_finalize(st);
    return ret;
}

static int set_pragmas(struct hn_store *s, int in_memory)
{
    char mode[16];
    int rc = query_one(s, "PRAGMA journal_mode = WAL", NULL, mode, sizeof(mode));
    if (rc < 0)
        return rc;
    /* An in-memory database has no journal file; any other answer means WAL is not
     * available (a read-only folder, a filesystem without shared memory). */
    if (strcmp(mode, "wal") != 0 && !(in_memory && strcmp(mode, "memory") == 0)) {
        snprintf(s->err, sizeof(s->err), "journal_mode is %s, not wal", mode);
        return -EIO;
    }
    return exec(s, "PRAGMA synchronous = NORMAL", "synchronous");
}

int hn_store_set_sync(struct hn_store *s, int full)
{
    return exec(s, full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
                "synchronous");
}

/* Creates or upgrades the schema in one transaction, so that a crash half-way leaves the
 * previous version. */
static int migrate(struct hn_store *s)
{
    int rc = exec(s, "BEGIN IMMEDIATE", "schema");
    if (rc < 0)
        return rc;
    int64_t version = 0;
    rc = query_one(s, "PRAGMA user_version", &version, NULL, 0);
    if (rc < 0)
        goto out_rollback;
    if (version < 0 || version > SCHEMA_VERSION) {
        snprintf(s->err, sizeof(s->err),
                 "schema version %lld is not one this houston knows (%d or older)",
                 (long long)version, SCHEMA_VERSION);
        rc = -EIO;
        goto out_rollback;
    }
    if (version == SCHEMA_VERSION)
        return exec(s, "COMMIT", "schema");
    for (int64_t v = version; v < SCHEMA_VERSION; v++) {
        rc = exec(s, migrations[v], "schema");
        if (rc < 0)
            goto out_rollback;
    }
    char sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", SCHEMA_VERSION);
    rc = exec(s, sql, "schema");
    if (rc < 0)
        goto out_rollback;
    return exec(s, "COMMIT", "schema");

out_rollback:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static int prepare_all(struct hn_store *s)
{
    for (int i = 0; i < ST_COUNT; i++) {
        int rc =
            sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL);
        if (rc != SQLITE_OK)
            return fail(s, rc, "prepare");
    }
    return 0;
}

struct hn_store *hn_store_open(const char *path, char *err, size_t errsize)
{
    struct hn_store *s = xcalloc(1, sizeof(*s));
    if (!path || !*path) {
        fail_msg(s, -EINVAL, "no database path");
        goto out_close;
    }
    int rc = sqlite3_open_v2(
        path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        if (s->db)
            fail(s, rc, path);
        else
            fail_msg(s, -ENOMEM, "out of memory");
        goto out_close;
    }
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    if (set_pragmas(s, strcmp(path, ":memory:") == 0) < 0 || migrate(s) < 0 || prepare_all(s) < 0)
        goto out_close;
    return s;

out_close:
    if (err && errsize)
        snprintf(err, errsize, "%s: %s", path ? path : "(null)", s->err);
    hn_store_close(s);
    return NULL;
}

void hn_store_close(struct hn_store *s)
{
    if (!s)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    /* An open transaction is rolled back by the close; every statement is finalised, so the
     * close cannot be refused as busy. */
    sqlite3_close(s->db);
    free(s);
}

const char *hn_store_error(const struct hn_store *s)
{
    return s ? s->err : "no store";
}

/* ---- transactions ---- */

int hn_store_begin(struct hn_store *s)
{
    return run(s, ST_BEGIN, NULL, "begin");
}

int hn_store_commit(struct hn_store *s)
{
    return run(s, ST_COMMIT, NULL, "commit");
}

int hn_store_rollback(struct hn_store *s)
{
    return run(s, ST_ROLLBACK, NULL, "rollback");
}

/* ---- writes ---- */

static int journal_action(struct hn_store *s, int64_t event_id, const struct hn_out *o)
{
    const struct hn_action *a = &o->action;
    struct binder b;
    bind_init(&b, s->st[ST_ACTION]);
    bind_u64(&b, a->id);
    bind_int(&b, event_id);
    bind_str(&b, action_kind_names[a->kind]);
    bind_text(&b, a->node, sizeof(a->node));
    bind_text(&b, a->job, sizeof(a->job));
    bind_text(&b, a->reason, sizeof(a->reason));
    bind_double(&b, o->time);
    return run(s, ST_ACTION, &b, "journal action");
}

int64_t hn_store_append(struct hn_store *s, const struct hn_out *o)
{
    if ((unsigned)o->kind >= HN_ARRAY_LEN(out_kind_names))
        return fail_msg(s, -EINVAL, "append: unknown output kind");
    const int is_action = o->kind == HN_OUT_ACTION;
    if (is_action && ((unsigned)o->action.kind >= HN_ARRAY_LEN(action_kind_names) ||
                      o->action.id == 0 || o->action.id > (uint64_t)INT64_MAX))
        return fail_msg(s, -EINVAL, "append: bad action kind or id");

    struct binder b;
    bind_init(&b, s->st[ST_EVENT]);
    bind_double(&b, o->time);
    bind_str(&b, out_kind_names[o->kind]);
    bind_text(&b, o->node, sizeof(o->node));
    if (is_action) {
        bind_null(&b, 5);
    } else {
        const struct hn_finding *f = &o->finding;
        bind_text(&b, f->rule, sizeof(f->rule));
        bind_int(&b, f->severity);
        bind_int(&b, f->gpu);
        bind_text(&b, f->detail, sizeof(f->detail));
        bind_text(&b, f->evidence, sizeof(f->evidence));
    }
    if (o->kind == HN_OUT_TRANSITION) {
        bind_str(&b, hn_node_state_name(o->from));
        bind_str(&b, hn_node_state_name(o->to));
        bind_text(&b, o->actor, sizeof(o->actor));
    } else {
        bind_null(&b, 3);
    }
    if (is_action) {
        bind_str(&b, action_kind_names[o->action.kind]);
        bind_u64(&b, o->action.id);
        bind_text(&b, o->action.job[0] ? o->action.job : o->job, sizeof(o->job));
        bind_text(&b, o->action.reason, sizeof(o->action.reason));
    } else {
        bind_null(&b, 2);
        if (o->job[0])
            bind_text(&b, o->job, sizeof(o->job));
        else
            bind_null(&b, 1);
        bind_null(&b, 1);
    }
    int rc = run(s, ST_EVENT, &b, "append");
    if (rc < 0)
        return rc;
    int64_t id = sqlite3_last_insert_rowid(s->db);
    if (is_action) {
        rc = journal_action(s, id, o);
        if (rc < 0)
            return rc;
    }
    return id;
}

int hn_store_put_node(struct hn_store *s, const struct hn_node_view *v)
{
    if (!v->name || !*v->name)
        return fail_msg(s, -EINVAL, "put_node: no name");
    struct binder b;
    bind_init(&b, s->st[ST_NODE]);
    bind_str(&b, v->name);
    bind_str(&b, v->rack ? v->rack : "");
    bind_str(&b, v->sku ? v->sku : "");
    bind_str(&b, hn_node_state_name(v->state));
    bind_int(&b, v->gpus_expected);
    bind_int(&b, v->drained_by_houston != 0);
    bind_int(&b, v->held != 0);
    bind_double(&b, v->since);
    bind_text(&b, v->reason, sizeof(v->reason));
    bind_double(&b, v->removed_at);
    bind_double(&b, v->removed_from);
    bind_int(&b, v->removed_cause);
    return run(s, ST_NODE, &b, "put_node");
}

int hn_store_frame_seen(struct hn_store *s, const char *node, uint64_t boot_id, uint64_t seq)
{
    sqlite3_stmt *st = s->st[ST_FRAME_GET];
    struct binder b;
    bind_init(&b, st);
    bind_str(&b, node);
    bind_u64(&b, boot_id);
    int ret;
    if (b.rc != SQLITE_OK) {
        ret = fail(s, b.rc, "frame_seen");
    } else {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            ret = seq <= (uint64_t)sqlite3_column_int64(st, 0);
        else if (rc == SQLITE_DONE)
            ret = 0;
        else
            ret = fail(s, rc, "frame_seen");
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

int hn_store_mark_frame(struct hn_store *s, const char *node, uint64_t boot_id, uint64_t seq,
                        double time)
{
    if (!node)
        return fail_msg(s, -EINVAL, "mark_frame: no node");
    struct binder b;
    bind_init(&b, s->st[ST_FRAME_PUT]);
    bind_str(&b, node);
    bind_u64(&b, boot_id);
    bind_u64(&b, seq);
    bind_double(&b, time);
    return run(s, ST_FRAME_PUT, &b, "mark_frame");
}

int hn_store_action_done(struct hn_store *s, uint64_t action_id, int ok, const char *result)
{
    struct binder b;
    bind_init(&b, s->st[ST_ACTION_DONE]);
    bind_int(&b, ok != 0);
    bind_str(&b, result);
    bind_u64(&b, action_id);
    int rc = run(s, ST_ACTION_DONE, &b, "action_done");
    if (rc < 0)
        return rc;
    if (sqlite3_changes(s->db) == 0) {
        snprintf(s->err, sizeof(s->err), "action_done: no action %llu",
                 (unsigned long long)action_id);
        return -ENOENT;
    }
    return 0;
}

/* ---- reads ---- */

static const char *col_text(sqlite3_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(st, col);
}

/* For columns declared NOT NULL, which are still NULL if SQLite ran out of memory. */
static const char *col_str(sqlite3_stmt *st, int col)
{
    const char *t = col_text(st, col);
    return t ? t : "";
}

/* Index of name in names (n entries), or -1. */
static int name_index(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++) {
        if (strcmp(names[i], name) == 0)
            return (int)i;
    }
    return -1;
}

struct pending {
    struct hn_action a;
    double time;
};

/* Reads every pending action into a heap array (*out, *count) the caller frees. */
static int read_pending(struct hn_store *s, struct pending **out, size_t *count)
{
    static const char sql[] = "SELECT id, kind, node, job, reason, time FROM actions"
                              " WHERE done IS NULL ORDER BY id";
    sqlite3_stmt *st = NULL;
    struct pending *list = NULL;
    size_t n = 0, cap = 0;
    int ret = 0;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, "pending_actions");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int kind = name_index(action_kind_names, HN_ARRAY_LEN(action_kind_names), col_text(st, 1));
        if (kind < 0) {
            snprintf(s->err, sizeof(s->err), "pending_actions: action %lld has an unknown kind",
                     (long long)sqlite3_column_int64(st, 0));
            ret = -EIO;
            goto out_finalize;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            list = xrealloc(list, cap * sizeof(*list));
        }
        struct pending *p = &list[n++];
        memset(p, 0, sizeof(*p));
        p->a.id = (uint64_t)sqlite3_column_int64(st, 0);
        p->a.kind = (enum hn_action_kind)kind;
        hn_strlcpy(p->a.node, col_str(st, 2), sizeof(p->a.node));
        hn_strlcpy(p->a.job, col_str(st, 3), sizeof(p->a.job));
        hn_strlcpy(p->a.reason, col_str(st, 4), sizeof(p->a.reason));
        p->time = sqlite3_column_double(st, 5);
    }
    if (rc != SQLITE_DONE)
        ret = fail(s, rc, "pending_actions");

out_finalize:
    sqlite3_finalize(st);
    if (ret < 0) {
        free(list);
        return ret;
    }
    *out = list;
    *count = n;
    return 0;
}

int hn_store_pending_actions(struct hn_store *s, hn_store_action_fn fn, void *ctx)
{
    struct pending *list = NULL;
    size_t n = 0;
    int ret = read_pending(s, &list, &n);
    for (size_t i = 0; ret == 0 && i < n; i++)
        ret = fn(ctx, &list[i].a, list[i].time);
    free(list);
    return ret;
}

uint64_t hn_store_max_action_id(struct hn_store *s)
{
    int64_t max = 0;
    if (query_one(s, "SELECT coalesce(max(id), 0) FROM actions", &max, NULL, 0) < 0)
        return 0;
    return (uint64_t)max;
}

int hn_store_load_nodes(struct hn_store *s, hn_store_node_fn fn, void *ctx)
{
    static const char sql[] = "SELECT name, rack, sku, state, gpus_expected, drained_by_houston,"
                              " held, since, reason, removed_at, removed_from, removed_cause"
                              " FROM nodes ORDER BY rowid";
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, "load_nodes");
    int ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hn_store_node n = {
            .name = col_str(st, 0),
            .rack = col_str(st, 1),
            .sku = col_str(st, 2),
            .drained_by_houston = sqlite3_column_int(st, 5) != 0,
            .held = sqlite3_column_int(st, 6) != 0,
            .since = sqlite3_column_double(st, 7),
            .reason = col_str(st, 8),
            .removed_at = sqlite3_column_double(st, 9),
            .removed_from = sqlite3_column_double(st, 10),
            .removed_cause = sqlite3_column_int(st, 11),
        };
        int64_t gpus = sqlite3_column_int64(st, 4);
        const char *state = col_text(st, 3);
        if (!state || hn_node_state_parse(state, &n.state) < 0 || gpus < 0 || gpus > UINT32_MAX) {
            snprintf(s->err, sizeof(s->err), "load_nodes: node %s has a bad state or GPU count",
                     n.name);
            ret = -EIO;
            break;
        }
        n.gpus_expected = (unsigned)gpus;
        ret = fn(ctx, &n);
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = fail(s, rc, "load_nodes");
    sqlite3_finalize(st);
    return ret;
}

int hn_store_put_job(struct hn_store *s, const struct hn_job_ledger *l)
{
    if (!l->id[0])
        return fail_msg(s, -EINVAL, "put_job: no id");
    struct binder b;
    bind_init(&b, s->st[ST_JOB]);
    bind_text(&b, l->id, sizeof(l->id));
    bind_int(&b, l->ranks);
    bind_double(&b, l->first_seen);
    bind_double(&b, l->last_report);
    bind_u64(&b, l->step);
    bind_int(&b, l->checkpoint);
    bind_double(&b, l->productive_s);
    for (int c = 0; c < HN_LOSS_NCAUSES; c++)
        bind_double(&b, l->lost_s[c]);
    bind_int(&b, l->interruptions);
    bind_int(&b, l->ended != 0);
    bind_double(&b, l->pause_s);
    bind_int(&b, l->pending != 0);
    bind_int(&b, l->pending_cause);
    bind_double(&b, l->interrupted_at);
    bind_int(&b, l->hung != 0);
    bind_int(&b, l->restart_hangs);
    bind_int(&b, l->requeue_failed != 0);
    bind_double(&b, l->since_ckpt_s);
    bind_double(&b, l->strag_ckpt_s);
    bind_double(&b, l->ended_at);
    for (int c = 0; c < HN_LOSS_NCAUSES; c++)
        bind_double(&b, l->lost_gpu_s[c]);
    bind_int(&b, l->ranks_high);
    bind_double(&b, l->requeued_at);
    bind_int(&b, l->charged_ranks);
    bind_double(&b, l->restart_s);
    bind_double(&b, l->restart_from);
    return run(s, ST_JOB, &b, "put_job");
}

/* A real, or SQL NULL for an unknown (NaN) or infinite one. */
static void bind_real(struct binder *b, double v)
{
    if (isfinite(v))
        bind_double(b, v);
    else
        bind_null(b, 1);
}

int hn_store_put_points(struct hn_store *s, const char *job, const struct hn_job_point *p, size_t n,
                        int replace)
{
    if (!job || !job[0])
        return fail_msg(s, -EINVAL, "put_points: no job");
    if (replace) {
        struct binder b;
        bind_init(&b, s->st[ST_POINTS_CLEAR]);
        bind_str(&b, job);
        int rc = run(s, ST_POINTS_CLEAR, &b, "put_points");
        if (rc != 0)
            return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(p[i].time))
            continue;
        struct binder b;
        bind_init(&b, s->st[ST_POINT]);
        bind_str(&b, job);
        bind_double(&b, p[i].time);
        bind_real(&b, p[i].mfu);
        bind_real(&b, p[i].ettr);
        bind_real(&b, p[i].step_seconds);
        int rc = run(s, ST_POINT, &b, "put_points");
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A REAL column, NaN for NULL. */
static double col_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

int hn_store_load_points(struct hn_store *s, const char *job, hn_store_point_fn fn, void *ctx)
{
    static const char sql[] = "SELECT time, mfu, ettr, step_s FROM job_points WHERE job = ?"
                              " ORDER BY time";
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, "load_points");
    int ret = 0;
    rc = sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC);
    while (ret == 0 && rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hn_job_point p = {sqlite3_column_double(st, 0), col_real(st, 1), col_real(st, 2),
                                 col_real(st, 3)};
        ret = fn(ctx, &p);
        rc = SQLITE_OK;
    }
    if (ret == 0 && rc != SQLITE_DONE && rc != SQLITE_OK)
        ret = fail(s, rc, "load_points");
    sqlite3_finalize(st);
    return ret;
}

/* A row of JOB_COLUMNS, values out of range made harmless. */
static void job_row(sqlite3_stmt *st, struct hn_job_ledger *out)
{
    _Static_assert(HN_LOSS_NCAUSES == 5, "one column per cause");
    struct hn_job_ledger l;
    memset(&l, 0, sizeof(l));
    hn_strlcpy(l.id, col_str(st, 0), sizeof(l.id));
    int64_t ranks = sqlite3_column_int64(st, 1);
    l.ranks = ranks > 0 && ranks <= UINT32_MAX ? (unsigned)ranks : 0;
    l.first_seen = sqlite3_column_double(st, 2);
    l.last_report = sqlite3_column_double(st, 3);
    l.step = (uint64_t)sqlite3_column_int64(st, 4);
    l.checkpoint = sqlite3_column_int64(st, 5);
    l.productive_s = sqlite3_column_double(st, 6);
    for (int c = 0; c < HN_LOSS_NCAUSES; c++)
        l.lost_s[c] = sqlite3_column_double(st, 7 + c);
    int64_t intr = sqlite3_column_int64(st, 12);
    l.interruptions = intr > 0 && intr <= UINT32_MAX ? (unsigned)intr : 0;
    l.ended = sqlite3_column_int(st, 13) != 0;
    double pause = sqlite3_column_double(st, 14);
    l.pause_s = pause > 0 && isfinite(pause) ? pause : 0;
    l.pending = sqlite3_column_int(st, 15) != 0;
    int cause = sqlite3_column_int(st, 16);
    l.pending_cause = cause >= 0 && cause < HN_LOSS_NCAUSES ? cause : HN_LOSS_OTHER;
    double at = sqlite3_column_double(st, 17);
    l.interrupted_at = isfinite(at) ? at : 0;
    l.hung = sqlite3_column_int(st, 18) != 0;
    int64_t hangs = sqlite3_column_int64(st, 19);
    l.restart_hangs = hangs > 0 && hangs <= 1000 ? (unsigned)hangs : 0;
    l.requeue_failed = sqlite3_column_int(st, 20) != 0;
    /* Times: not negative, and finite. */
    double t[3];
    for (int k = 0; k < 3; k++) {
        t[k] = sqlite3_column_double(st, 21 + k);
        t[k] = t[k] > 0 && isfinite(t[k]) ? t[k] : 0;
    }
    l.since_ckpt_s = t[0];
    l.strag_ckpt_s = fmin(t[1], t[0]);
    l.ended_at = t[2];
    for (int c = 0; c < HN_LOSS_NCAUSES; c++) {
        double g = sqlite3_column_double(st, 24 + c);
        l.lost_gpu_s[c] = isfinite(g) ? g : 0;
    }
    int64_t high = sqlite3_column_int64(st, 29);
    l.ranks_high = high > 0 && high <= UINT32_MAX ? (unsigned)high : 0;
    double rq = sqlite3_column_double(st, 30);
    l.requeued_at = rq > 0 && isfinite(rq) ? rq : 0;
    int64_t charged = sqlite3_column_int64(st, 31);
    l.charged_ranks = charged > 0 && charged <= UINT32_MAX ? (unsigned)charged : 0;
    double took = sqlite3_column_double(st, 32);
    l.restart_s = took > 0 && isfinite(took) ? took : 0;
    double from = sqlite3_column_double(st, 33);
    l.restart_from = from > 0 && isfinite(from) ? from : 0;
    *out = l;
}

int hn_store_load_jobs(struct hn_store *s, size_t limit, hn_store_job_fn fn, void *ctx)
{
    static const char sql[] = "SELECT " JOB_COLUMNS " FROM (SELECT * FROM jobs"
                              " ORDER BY ended, pending DESC, last_report DESC LIMIT ?)"
                              " ORDER BY last_report";
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, "load_jobs");
    rc = sqlite3_bind_int64(st, 1, limit > 0 && limit <= INT64_MAX ? (int64_t)limit : -1);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return fail(s, rc, "load_jobs");
    }
    int ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hn_job_ledger l;
        job_row(st, &l);
        ret = fn(ctx, &l);
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = fail(s, rc, "load_jobs");
    sqlite3_finalize(st);
    return ret;
}

int hn_store_job_ids(struct hn_store *s, hn_store_id_fn fn, void *ctx)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "SELECT id FROM jobs", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, "job_ids");
    int ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
        ret = fn(ctx, col_str(st, 0));
    if (ret == 0 && rc != SQLITE_DONE)
        ret = fail(s, rc, "job_ids");
    sqlite3_finalize(st);
    return ret;
}

int hn_store_load_job(struct hn_store *s, const char *id, struct hn_job_ledger *out)
{
    sqlite3_stmt *st = s->st[ST_JOB_GET];
    struct binder b;
    bind_init(&b, st);
    bind_str(&b, id);
    int ret;
    if (b.rc != SQLITE_OK) {
        ret = fail(s, b.rc, "load_job");
    } else {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            job_row(st, out);
            ret = 0;
        } else {
            ret = rc == SQLITE_DONE ? -ENOENT : fail(s, rc, "load_job");
        }
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return ret;
}

/* Jobs not ended whose last report is older than `before` and that keep() does not claim, with
 * their histories: at most limit (-1: all) of them, by id. Such a job was forgotten by the
 * controller before it could be called ended (more jobs than jobs-max, made-up ids among them,
 * reported within one hang limit), so nothing would ever end it and retention never took it:
 * the table, and the controller's set of saved ids, grew for ever. Their ids are read first,
 * then deleted, rather than deleted under a scan of the same table. */
static int prune_silent_jobs(struct hn_store *s, double before, int64_t limit, hn_store_id_fn keep,
                             void *ctx, uint64_t *jobs, uint64_t *points)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db,
                                "SELECT id FROM jobs WHERE ended = 0 AND last_report < ?1"
                                " ORDER BY id",
                                -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(st, 1, before);
    char **ids = NULL;
    size_t n = 0, cap = 0;
    while (rc == SQLITE_OK && (limit < 0 || (int64_t)n < limit) &&
           (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = col_str(st, 0);
        rc = SQLITE_OK;
        if (!id[0] || (keep && keep(ctx, id)))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            ids = xrealloc(ids, cap * sizeof(*ids));
        }
        ids[n++] = xstrdup(id);
    }
    int ret = rc == SQLITE_OK || rc == SQLITE_DONE ? 0 : fail(s, rc, "prune");
    sqlite3_finalize(st);
    st = NULL;
    if (ret == 0 && n) {
        rc = sqlite3_prepare_v2(s->db, "DELETE FROM jobs WHERE id = ?", -1, &st, NULL);
        ret = rc == SQLITE_OK ? 0 : fail(s, rc, "prune");
    }
    for (size_t i = 0; ret == 0 && i < n; i++) {
        struct binder b;
        bind_init(&b, s->st[ST_POINTS_CLEAR]);
        bind_str(&b, ids[i]);
        ret = run(s, ST_POINTS_CLEAR, &b, "prune");
        if (ret == 0)
            *points += (uint64_t)sqlite3_changes(s->db);
        if (ret == 0) {
            sqlite3_reset(st);
            rc = sqlite3_bind_text(st, 1, ids[i], -1, SQLITE_STATIC);
            if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
            ret = rc == SQLITE_DONE ? 0 : fail(s, rc, "prune");
        }
        if (ret == 0)
            *jobs += (uint64_t)sqlite3_changes(s->db);
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < n; i++)
        free(ids[i]);
    free(ids);
    return ret;
}

int hn_store_prune(struct hn_store *s, double before, size_t batch, hn_store_id_fn keep, void *ctx,
                   struct hn_store_pruned *out)
{
    /* The histories go with their jobs (the same jobs: the first `batch` by id). */
    static const char *const sql[] = {
        /* Not an event of an action not yet done, nor of the newest; an event whose action a
         * batch before took goes too. */
        "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE time < ?1 AND"
        " (action_id IS NULL OR action_id NOT IN (SELECT id FROM actions WHERE done IS NULL"
        " OR id = (SELECT max(id) FROM actions))) LIMIT ?2)",
        "DELETE FROM actions WHERE id IN (SELECT id FROM actions WHERE time < ?1 AND done IS"
        " NOT NULL AND id < (SELECT max(id) FROM actions) LIMIT ?2)",
        "DELETE FROM job_points WHERE job IN (SELECT id FROM jobs WHERE ended != 0 AND"
        " last_report < ?1 ORDER BY id LIMIT ?2)",
        "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE ended != 0 AND"
        " last_report < ?1 ORDER BY id LIMIT ?2)",
        "DELETE FROM frames WHERE (node, boot_id) IN (SELECT node, boot_id FROM frames WHERE"
        " time < ?1 LIMIT ?2)",
    };
    int64_t limit = batch > 0 && batch <= INT64_MAX ? (int64_t)batch : -1;
    uint64_t n[5] = {0, 0, 0, 0, 0};
    for (size_t k = 0; k < 5; k++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(s->db, sql[k], -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_double(st, 1, before);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(st, 2, limit);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        int ret = rc == SQLITE_DONE ? 0 : fail(s, rc, "prune"); /* before finalize resets it */
        sqlite3_finalize(st);
        if (ret)
            return ret;
        n[k] = (uint64_t)sqlite3_changes(s->db);
    }
    int ret = prune_silent_jobs(s, before, limit, keep, ctx, &n[3], &n[2]);
    if (ret)
        return ret;
    if (out)
        *out = (struct hn_store_pruned){n[0], n[1], n[3], n[2], n[4]};
    return 0;
}

/* Builds the event query for f; its parameters are bound by bind_filter in the same order. */
static void filter_sql(const struct hn_event_filter *f, char *sql, size_t size)
{
    size_t len = (size_t)snprintf(
        sql, size, "%s",
        "SELECT e.id, e.time, e.kind, e.node, e.rule, e.severity, e.gpu, e.detail, e.evidence,"
        " e.from_state, e.to_state, e.actor, e.action, e.job, e.reason, e.action_id, a.done,"
        " a.result FROM events e LEFT JOIN actions a ON a.id = e.action_id WHERE 1");
    const char *parts[6];
    size_t n = 0;
    if (f->node)
        parts[n++] = " AND e.node = ?";
    if (f->job)
        parts[n++] = " AND e.job = ?";
    if (f->kind)
        parts[n++] = " AND e.kind = ?";
    if (f->rule)
        parts[n++] = " AND e.rule = ?";
    if (f->since != 0)
        parts[n++] = " AND e.time >= ?";
    if (f->before_id != 0)
        parts[n++] = " AND e.id < ?";
    for (size_t i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(sql + len, size - len, "%s", parts[i]);
    if (len < size)
        snprintf(sql + len, size - len, " ORDER BY e.id DESC LIMIT ?");
}

static void bind_filter(struct binder *b, const struct hn_event_filter *f)
{
    if (f->node)
        bind_str(b, f->node);
    if (f->job)
        bind_str(b, f->job);
    if (f->kind)
        bind_str(b, f->kind);
    if (f->rule)
        bind_str(b, f->rule);
    if (f->since != 0)
        bind_double(b, f->since);
    if (f->before_id != 0)
        bind_int(b, f->before_id);
    unsigned limit = f->limit ? f->limit : QUERY_LIMIT_DEFAULT;
    bind_int(b, limit < QUERY_LIMIT_MAX ? limit : QUERY_LIMIT_MAX);
}

static void event_from_row(sqlite3_stmt *st, struct hn_store_event *e)
{
    memset(e, 0, sizeof(*e));
    e->id = sqlite3_column_int64(st, 0);
    e->time = sqlite3_column_double(st, 1);
    e->kind = col_str(st, 2);
    e->node = col_str(st, 3);
    e->rule = col_text(st, 4);
    e->severity = sqlite3_column_int(st, 5);
    e->gpu = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 6);
    e->detail = col_text(st, 7);
    e->evidence = col_text(st, 8);
    e->from = col_text(st, 9);
    e->to = col_text(st, 10);
    e->actor = col_text(st, 11);
    e->action = col_text(st, 12);
    e->job = col_text(st, 13);
    e->reason = col_text(st, 14);
    e->action_id = (uint64_t)sqlite3_column_int64(st, 15);
    e->action_done = sqlite3_column_type(st, 16) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 16);
    e->action_result = col_text(st, 17);
}

int hn_store_query_events(struct hn_store *s, const struct hn_event_filter *f, hn_store_event_fn fn,
                          void *ctx)
{
    static const struct hn_event_filter all;
    if (!f)
        f = &all;
    char sql[1024];
    filter_sql(f, sql, sizeof(sql));
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(s, rc, "query_events");
    struct binder b;
    bind_init(&b, st);
    bind_filter(&b, f);
    int ret = 0;
    if (b.rc != SQLITE_OK) {
        ret = fail(s, b.rc, "query_events");
        goto out_finalize;
    }
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct hn_store_event e;
        event_from_row(st, &e);
        ret = fn(ctx, &e);
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = fail(s, rc, "query_events");

out_finalize:
    sqlite3_finalize(st);
    return ret;
}
