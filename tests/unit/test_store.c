/*
 * test_store.c - the controller's SQLite store: schema creation and reopening, the event log
 * and its filters, nodes, frame dedupe, the action journal, rollback, and a writer killed with
 * SIGKILL in the middle of its transactions.
 */
#include "control/store.h"
#include "common/util.h"

#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/types.h>
#include <sys/wait.h>

/* A fresh database path in the test's scratch folder. */
static void db_path(char *out, size_t size, const char *name)
{
    int n = snprintf(out, size, "%s/%s.db", tu_tmpdir(), name);
    assert_true(n > 0 && (size_t)n < size);
}

static struct hn_store *open_ok(const char *path)
{
    char err[256] = "";
    struct hn_store *s = hn_store_open(path, err, sizeof(err));
    if (!s)
        fail_msg("hn_store_open %s: %s", path, err);
    return s;
}

/* Runs one SQL statement on its own connection and returns its first column as text. */
static void raw_query(const char *path, const char *sql, char *out, size_t size)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    out[0] = '\0';
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        hn_strlcpy(out, (const char *)sqlite3_column_text(st, 0), size);
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* ---- building brain outputs ---- */

static void out_base(struct hn_out *o, enum hn_out_kind kind, double time, const char *node)
{
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->time = time;
    hn_strlcpy(o->node, node, sizeof(o->node));
}

static void finding(struct hn_out *o, enum hn_out_kind kind, double time, const char *node,
                    const char *rule, enum hn_severity sev, int gpu, const char *detail)
{
    out_base(o, kind, time, node);
    hn_strlcpy(o->finding.rule, rule, sizeof(o->finding.rule));
    o->finding.severity = sev;
    o->finding.gpu = gpu;
    hn_strlcpy(o->finding.detail, detail, sizeof(o->finding.detail));
    snprintf(o->finding.evidence, sizeof(o->finding.evidence), "ev(%s)", detail);
}

static void action(struct hn_out *o, double time, const char *node, uint64_t id,
                   enum hn_action_kind kind, const char *job, const char *reason)
{
    out_base(o, HN_OUT_ACTION, time, node);
    o->action.id = id;
    o->action.kind = kind;
    hn_strlcpy(o->action.node, node, sizeof(o->action.node));
    hn_strlcpy(o->action.job, job, sizeof(o->action.job));
    hn_strlcpy(o->action.reason, reason, sizeof(o->action.reason));
}

static int64_t append_ok(struct hn_store *s, const struct hn_out *o)
{
    int64_t id = hn_store_append(s, o);
    if (id <= 0)
        fail_msg("append: %lld %s", (long long)id, hn_store_error(s));
    return id;
}

/* ---- collecting events as lines ---- */

struct lines {
    char text[8192];
    size_t len;
    int count;
    int64_t last_id;
};

static const char *nz(const char *s)
{
    return s ? s : "~";
}

/* One line per event: every field, "~" for NULL, so a test compares exact text. */
static int collect_event(void *ctx, const struct hn_store_event *e)
{
    struct lines *l = ctx;
    int n = snprintf(l->text + l->len, sizeof(l->text) - l->len,
                     "%lld %.0f %s %s %s sev=%d gpu=%d %s|%s %s>%s by %s | %s #%llu job=%s "
                     "reason=%s done=%d %s\n",
                     (long long)e->id, e->time, e->kind, e->node, nz(e->rule), e->severity, e->gpu,
                     nz(e->detail), nz(e->evidence), nz(e->from), nz(e->to), nz(e->actor),
                     nz(e->action), (unsigned long long)e->action_id, nz(e->job), nz(e->reason),
                     e->action_done, nz(e->action_result));
    if (n > 0 && (size_t)n < sizeof(l->text) - l->len)
        l->len += (size_t)n;
    l->count++;
    l->last_id = e->id;
    return 0;
}

static struct lines *query(struct hn_store *s, const struct hn_event_filter *f)
{
    static struct lines l;
    memset(&l, 0, sizeof(l));
    assert_int_equal(hn_store_query_events(s, f, collect_event, &l), 0);
    return &l;
}

/* ---- schema ---- */

static void test_schema_and_reopen(void **state)
{
    (void)state;
    char path[PATH_MAX], text[128];
    db_path(path, sizeof(path), "schema");
    struct hn_store *s = open_ok(path);
    raw_query(path, "PRAGMA user_version", text, sizeof(text));
    assert_string_equal(text, "12");
    raw_query(path, "PRAGMA journal_mode", text, sizeof(text));
    assert_string_equal(text, "wal");
    raw_query(path,
              "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master"
              " WHERE name NOT LIKE 'sqlite_%' ORDER BY name)",
              text, sizeof(text));
    assert_string_equal(
        text,
        "actions,actions_pending,events,events_job,events_kind,events_node,events_time,frames,"
        "job_points,jobs,nodes");

    struct hn_node_view v = {.name = "n1", .rack = "r1", .sku = "H100", .gpus_expected = 8};
    assert_int_equal(hn_store_begin(s), 0);
    assert_int_equal(hn_store_put_node(s, &v), 0);
    assert_int_equal(hn_store_commit(s), 0);
    hn_store_close(s);

    /* Reopening keeps the data and does not recreate the schema. */
    s = open_ok(path);
    raw_query(path, "SELECT name || '/' || rack FROM nodes", text, sizeof(text));
    assert_string_equal(text, "n1/r1");
    hn_store_close(s);

    /* A database from a newer houston is refused, with a reason. */
    raw_query(path, "PRAGMA user_version = 99", text, sizeof(text));
    char err[256] = "";
    assert_null(hn_store_open(path, err, sizeof(err)));
    assert_non_null(strstr(err, "schema version 99"));

    /* A folder that does not exist. */
    err[0] = '\0';
    assert_null(hn_store_open("/nonexistent-hn/x.db", err, sizeof(err)));
    assert_true(err[0] != '\0');

    s = open_ok(":memory:");
    assert_string_equal(hn_store_error(s), "");
    hn_store_close(s);
    hn_store_close(NULL);
}

/* ---- the job ledger ---- */

static int load_job(void *ctx, const struct hn_job_ledger *l)
{
    struct hn_job_ledger *out = ctx;
    out[out[0].ranks == 0 ? 0 : 1] = *l;
    return 0;
}

/* Opens the database at path, whose columns were taken back to schema `version`, loads its
 * jobs into got[2] and closes it: it is upgraded in place to this houston's schema. */
static void load_at(const char *path, int version, struct hn_job_ledger got[2])
{
    char text[128], sql[64];
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version);
    raw_query(path, sql, text, sizeof(text));
    struct hn_store *s = open_ok(path);
    memset(got, 0, 2 * sizeof(got[0]));
    assert_int_equal(hn_store_load_jobs(s, 0, load_job, got), 0);
    hn_store_close(s);
    raw_query(path, "PRAGMA user_version", text, sizeof(text));
    assert_string_equal(text, "12");
}

/* Takes a database of schema 12 back to 11 (what a job's restarts took, and when the one it
 * waits for began). */
static void drop_restart_column(const char *path)
{
    char text[64];
    raw_query(path, "ALTER TABLE jobs DROP COLUMN restart_s", text, sizeof(text));
    raw_query(path, "ALTER TABLE jobs DROP COLUMN restart_from", text, sizeof(text));
}

/* Takes a database of schema 12 back to 10 (when a waiting job was requeued, and its size). */
static void drop_requeued_column(const char *path)
{
    char text[64];
    drop_restart_column(path);
    raw_query(path, "ALTER TABLE jobs DROP COLUMN requeued_at", text, sizeof(text));
    raw_query(path, "ALTER TABLE jobs DROP COLUMN charged_ranks", text, sizeof(text));
}

/* Takes a database of schema 12 back to 9 (also a node's last removal). */
static void drop_removal_columns(const char *path)
{
    char text[64];
    drop_requeued_column(path);
    raw_query(path, "ALTER TABLE nodes DROP COLUMN removed_at", text, sizeof(text));
    raw_query(path, "ALTER TABLE nodes DROP COLUMN removed_from", text, sizeof(text));
    raw_query(path, "ALTER TABLE nodes DROP COLUMN removed_cause", text, sizeof(text));
}

/* Takes a database of schema 12 back to 8 (also GPU time lost by cause). */
static void drop_gpu_columns(const char *path)
{
    drop_removal_columns(path);
    static const char *const col[] = {"gpu_failure", "gpu_straggler", "gpu_hang", "gpu_operator",
                                      "gpu_other"};
    char text[64], sql[128];
    for (size_t i = 0; i < sizeof(col) / sizeof(col[0]); i++) {
        snprintf(sql, sizeof(sql), "ALTER TABLE jobs DROP COLUMN %s", col[i]);
        raw_query(path, sql, text, sizeof(text));
    }
    raw_query(path, "ALTER TABLE jobs DROP COLUMN ranks_high", text, sizeof(text));
}

/* Takes a database of schema 12 back to 7 (also a job's work since its checkpoint, the end of
 * the wait of one that ended waiting). */
static void drop_ckpt_columns(const char *path)
{
    char text[64];
    drop_gpu_columns(path);
    raw_query(path, "ALTER TABLE jobs DROP COLUMN since_ckpt_s", text, sizeof(text));
    raw_query(path, "ALTER TABLE jobs DROP COLUMN strag_ckpt_s", text, sizeof(text));
    raw_query(path, "ALTER TABLE jobs DROP COLUMN ended_at", text, sizeof(text));
}

/* Takes a database of schema 12 back to 6 (also when a boot's last frame came). */
static void drop_frame_time(const char *path)
{
    char text[64];
    drop_ckpt_columns(path);
    raw_query(path, "ALTER TABLE frames DROP COLUMN time", text, sizeof(text));
}

/* Takes a database of schema 12 back to 5 (also the columns of a hung job, and of a failed
 * requeue; the index retention uses). */
static void drop_hung_columns(const char *path)
{
    char text[64];
    drop_frame_time(path);
    raw_query(path, "ALTER TABLE jobs DROP COLUMN hung", text, sizeof(text));
    raw_query(path, "ALTER TABLE jobs DROP COLUMN restart_hangs", text, sizeof(text));
    raw_query(path, "ALTER TABLE jobs DROP COLUMN requeue_failed", text, sizeof(text));
    raw_query(path, "DROP INDEX events_time", text, sizeof(text));
}

/* Takes a database of schema 12 back to 4 (also the columns of a job waiting for its next run). */
static void drop_pending_columns(const char *path)
{
    char text[64];
    drop_hung_columns(path);
    raw_query(path, "ALTER TABLE jobs DROP COLUMN pending", text, sizeof(text));
    raw_query(path, "ALTER TABLE jobs DROP COLUMN pending_cause", text, sizeof(text));
    raw_query(path, "ALTER TABLE jobs DROP COLUMN interrupted_at", text, sizeof(text));
}

static void test_jobs(void **state)
{
    (void)state;
    char path[PATH_MAX];
    db_path(path, sizeof(path), "jobs");
    struct hn_store *s = open_ok(path);
    struct hn_job_ledger a = {.id = "4242",
                              .ranks = 512,
                              .first_seen = 100,
                              .last_report = 900,
                              .step = 12345,
                              .checkpoint = 12000,
                              .productive_s = 700,
                              .interruptions = 2,
                              .ended = 0,
                              .pause_s = 412.5};
    a.lost_s[HN_LOSS_FAILURE] = 60;
    a.lost_s[HN_LOSS_STRAGGLER] = 30.5;
    a.lost_s[HN_LOSS_OTHER] = 1;
    a.lost_gpu_s[HN_LOSS_FAILURE] = 60 * 256; /* charged when it had 256 ranks */
    a.lost_gpu_s[HN_LOSS_STRAGGLER] = 30.5 * 512;
    a.lost_gpu_s[HN_LOSS_OTHER] = 512;
    a.ranks_high = 1024; /* it once ran with 1,024 ranks */
    struct hn_job_ledger b = a;
    hn_strlcpy(b.id, "4243", sizeof(b.id));
    b.last_report = 950;
    b.ended = 1;
    a.pending = 1; /* waiting for its next run since a hang at 850 */
    a.pending_cause = HN_LOSS_HANG;
    a.interrupted_at = 850;
    a.hung = 1; /* a hang at start, the third that named no node: left alone */
    a.restart_hangs = 3;
    a.requeue_failed = 1;
    a.requeued_at = 860.5;
    a.charged_ranks = 256;
    a.restart_s = 412.75;    /* its restarts took that (median) */
    a.restart_from = 790.5;  /* the one it waits for began then (requeued again since) */
    b.since_ckpt_s = 120.25; /* it ended: what it did since its last checkpoint */
    b.strag_ckpt_s = 10.5;
    a.ended_at = 0;
    b.ended_at = 940;
    assert_int_equal(hn_store_begin(s), 0);
    assert_int_equal(hn_store_put_job(s, &b), 0);
    assert_int_equal(hn_store_put_job(s, &a), 0);
    a.step = 12346; /* saved again: replaced, not added */
    assert_int_equal(hn_store_put_job(s, &a), 0);
    struct hn_job_ledger none = {.id = ""};
    assert_int_equal(hn_store_put_job(s, &none), -EINVAL);
    /* An event about a job is found by its job. */
    struct hn_out o = {.kind = HN_OUT_FINDING, .time = 5, .node = "n1", .job = "4242"};
    hn_strlcpy(o.finding.rule, "straggler", sizeof(o.finding.rule));
    assert_true(hn_store_append(s, &o) > 0);
    hn_strlcpy(o.job, "", sizeof(o.job));
    assert_true(hn_store_append(s, &o) > 0);
    assert_int_equal(hn_store_commit(s), 0);
    hn_store_close(s);

    s = open_ok(path);
    struct hn_job_ledger got[2];
    memset(got, 0, sizeof(got));
    assert_int_equal(hn_store_load_jobs(s, 0, load_job, got), 0);
    /* Oldest report first. */
    assert_string_equal(got[0].id, "4242");
    assert_string_equal(got[1].id, "4243");
    assert_int_equal(got[0].ranks, 512);
    assert_int_equal((int)got[0].step, 12346);
    assert_int_equal((int)got[0].checkpoint, 12000);
    assert_int_equal(got[0].interruptions, 2);
    assert_true(got[0].lost_s[HN_LOSS_STRAGGLER] == 30.5 && got[0].productive_s == 700);
    assert_int_equal(got[0].ended, 0);
    assert_int_equal(got[1].ended, 1);
    assert_true(got[0].pause_s == 412.5);
    assert_true(got[0].pending == 1 && got[0].pending_cause == HN_LOSS_HANG &&
                got[0].interrupted_at == 850);
    assert_true(got[0].hung == 1 && got[0].restart_hangs == 3 && got[0].requeue_failed == 1);
    assert_int_equal(got[1].pending, 0);
    assert_true(got[1].hung == 0 && got[1].restart_hangs == 0 && got[1].requeue_failed == 0);
    assert_true(got[1].since_ckpt_s == 120.25 && got[1].strag_ckpt_s == 10.5);
    assert_true(got[1].ended_at == 940 && got[0].ended_at == 0 && got[0].since_ckpt_s == 0);
    assert_true(got[0].lost_gpu_s[HN_LOSS_FAILURE] == 60 * 256 &&
                got[0].lost_gpu_s[HN_LOSS_STRAGGLER] == 30.5 * 512 &&
                got[0].lost_gpu_s[HN_LOSS_HANG] == 0);
    assert_int_equal(got[0].ranks_high, 1024);
    assert_true(got[0].requeued_at == 860.5 && got[1].requeued_at == 0);
    assert_true(got[0].charged_ranks == 256 && got[1].charged_ranks == 0);
    assert_true(got[0].restart_s == 412.75 && got[1].restart_s == 0);
    assert_true(got[0].restart_from == 790.5 && got[1].restart_from == 0);
    struct hn_event_filter f = {.job = "4242"};
    struct lines *l = query(s, &f);
    assert_int_equal(l->count, 1);
    assert_non_null(strstr(l->text, "job=4242"));
    hn_store_close(s);

    /* A database of schema 11 (before a job's restarts were measured) keeps its jobs, none
     * measured (the brain takes restart-overhead). */
    char text[128];
    drop_restart_column(path);
    load_at(path, 11, got);
    assert_true(got[0].restart_s == 0 && got[0].restart_from == 0 && got[0].requeued_at == 860.5 &&
                got[0].charged_ranks == 256);

    /* A database of schema 10 (before the requeue's time was saved) keeps its jobs, with none
     * (the brain takes the last report for it). */
    drop_requeued_column(path);
    load_at(path, 10, got);
    assert_true(got[0].pending == 1 && got[0].requeued_at == 0 && got[0].charged_ranks == 0 &&
                got[0].interrupted_at == 850);

    /* A database of schema 8 (before GPU time was kept by charge) keeps its jobs, their GPU
     * time their wall time at their rank count. */
    drop_gpu_columns(path);
    load_at(path, 8, got);
    assert_true(got[0].lost_gpu_s[HN_LOSS_FAILURE] == 60 * 512 &&
                got[0].lost_gpu_s[HN_LOSS_STRAGGLER] == 30.5 * 512 &&
                got[0].lost_gpu_s[HN_LOSS_HANG] == 0);
    assert_true(got[1].since_ckpt_s == 120.25 && got[1].ended == 1);

    /* A database of schema 7 (before the work since a checkpoint was saved) keeps its jobs,
     * with none. */
    drop_ckpt_columns(path);
    load_at(path, 7, got);
    assert_true(got[1].ended == 1 && got[1].since_ckpt_s == 0 && got[1].ended_at == 0);
    assert_true(got[0].pending == 1 && got[0].hung == 1);

    /* A database of schema 5 (before the hung columns) keeps its pending jobs, not hung. */
    drop_hung_columns(path);
    load_at(path, 5, got);
    assert_true(got[0].pending == 1 && got[0].interrupted_at == 850);
    assert_true(got[0].hung == 0 && got[0].restart_hangs == 0 && got[0].requeue_failed == 0);

    /* A database of schema 2 (before the longest pause) keeps its jobs, with no pause. */
    drop_pending_columns(path);
    raw_query(path, "ALTER TABLE jobs DROP COLUMN pause_s", text, sizeof(text));
    raw_query(path, "DROP TABLE job_points", text, sizeof(text));
    raw_query(path, "PRAGMA user_version = 2", text, sizeof(text));
    s = open_ok(path);
    memset(got, 0, sizeof(got));
    got[0].pause_s = -1;
    assert_int_equal(hn_store_load_jobs(s, 0, load_job, got), 0);
    assert_string_equal(got[0].id, "4242");
    assert_int_equal((int)got[0].step, 12346);
    assert_true(got[0].pause_s == 0);
    hn_store_close(s);
    raw_query(path, "PRAGMA user_version", text, sizeof(text));
    assert_string_equal(text, "12");

    /* A database of schema 1 (before the ledger) is upgraded in place, its events kept. */
    drop_frame_time(path);
    raw_query(path, "DROP INDEX events_job", text, sizeof(text));
    raw_query(path, "DROP INDEX events_time", text, sizeof(text));
    raw_query(path, "DROP TABLE jobs", text, sizeof(text));
    raw_query(path, "DROP TABLE job_points", text, sizeof(text));
    raw_query(path, "PRAGMA user_version = 1", text, sizeof(text));
    s = open_ok(path);
    raw_query(path, "SELECT count(*) FROM jobs", text, sizeof(text));
    assert_string_equal(text, "0");
    raw_query(path, "SELECT count(*) FROM events", text, sizeof(text));
    assert_string_equal(text, "2");
    raw_query(path, "PRAGMA user_version", text, sizeof(text));
    assert_string_equal(text, "12");
    hn_store_close(s);
}

/* load_jobs_ids: the ids in the order they come, comma-separated. */
static int load_job_id(void *ctx, const struct hn_job_ledger *l)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 64 - n, "%s%s", n ? "," : "", l->id);
    return 0;
}

/* One job's ledger by its id (a job the controller forgot and that reports again), and the
 * jobs loaded at start limited to the table's size: those not ended first (those waiting for
 * their next run before those running), then the latest; in the order of their last report. */
static void test_job_lookup_and_limit(void **state)
{
    (void)state;
    char path[PATH_MAX];
    db_path(path, sizeof(path), "lookup");
    struct hn_store *s = open_ok(path);
    static const struct {
        const char *id;
        double last;
        int ended;
    } jobs[] = {{"a", 100, 1}, {"b", 50, 0},  {"c", 200, 1},
                {"d", 10, 1},  {"e", 300, 0}, {"p", 5, 0}};
    assert_int_equal(hn_store_begin(s), 0);
    for (size_t i = 0; i < 6; i++) { /* p waits for its next run */
        struct hn_job_ledger l = {.ranks = 8,
                                  .first_seen = 1,
                                  .last_report = jobs[i].last,
                                  .step = 10 * i,
                                  .checkpoint = -1,
                                  .ended = jobs[i].ended,
                                  .restart_hangs = 2,
                                  .pending = jobs[i].id[0] == 'p'};
        hn_strlcpy(l.id, jobs[i].id, sizeof(l.id));
        assert_int_equal(hn_store_put_job(s, &l), 0);
    }
    assert_int_equal(hn_store_commit(s), 0);
    struct hn_job_ledger got;
    assert_int_equal(hn_store_load_job(s, "c", &got), 0);
    assert_string_equal(got.id, "c");
    assert_true(got.last_report == 200 && got.step == 20 && got.ended == 1 &&
                got.restart_hangs == 2 && got.checkpoint == -1);
    assert_int_equal(hn_store_load_job(s, "zz", &got), -ENOENT);
    assert_int_equal(hn_store_load_job(s, "", &got), -ENOENT);
    char ids[64] = "";
    assert_int_equal(hn_store_load_jobs(s, 1, load_job_id, ids), 0);
    assert_string_equal(ids, "p");
    ids[0] = '\0';
    assert_int_equal(hn_store_load_jobs(s, 4, load_job_id, ids), 0);
    assert_string_equal(ids, "p,b,c,e");
    ids[0] = '\0';
    assert_int_equal(hn_store_load_jobs(s, 5, load_job_id, ids), 0);
    assert_string_equal(ids, "p,b,a,c,e");
    ids[0] = '\0';
    assert_int_equal(hn_store_load_jobs(s, 0, load_job_id, ids), 0);
    assert_string_equal(ids, "p,d,b,a,c,e");
    hn_store_close(s);
}

static int load_point(void *ctx, const struct hn_job_point *p)
{
    struct hn_job_point *out = ctx; /* out[0].time counts the points, out[1..] holds them */
    size_t n = (size_t)out[0].time;
    if (n < 8)
        out[1 + n] = *p;
    out[0].time = (double)(n + 1);
    return 0;
}

/* A job's history: points added, a NaN saved as NULL and read back as NaN, a point at a time
 * saved again replaced, all of them replaced at once (the brain thinned them), other jobs'
 * left alone; and a database of schema 3 gains the table. */
static void test_job_points(void **state)
{
    (void)state;
    char path[PATH_MAX], text[128];
    db_path(path, sizeof(path), "points");
    struct hn_store *s = open_ok(path);
    struct hn_job_point p[3] = {
        {100, 0.41, 1.0, 2.5}, {160, NAN, 0.98, 2.6}, {220, 0.43, NAN, NAN}};
    assert_int_equal(hn_store_begin(s), 0);
    assert_int_equal(hn_store_put_points(s, "7", p, 3, 0), 0);
    assert_int_equal(hn_store_put_points(s, "8", p, 1, 0), 0);
    struct hn_job_point again = {160, 0.5, 0.97, 2.7};
    assert_int_equal(hn_store_put_points(s, "7", &again, 1, 0), 0);
    assert_int_equal(hn_store_put_points(s, "", p, 1, 0), -EINVAL);
    assert_int_equal(hn_store_commit(s), 0);
    hn_store_close(s);

    s = open_ok(path);
    struct hn_job_point got[9];
    memset(got, 0, sizeof(got));
    assert_int_equal(hn_store_load_points(s, "7", load_point, got), 0);
    assert_int_equal((int)got[0].time, 3);
    assert_true(got[1].time == 100 && got[1].mfu == 0.41 && got[1].ettr == 1.0);
    assert_true(got[2].time == 160 && got[2].mfu == 0.5 && got[2].step_seconds == 2.7);
    assert_true(got[3].time == 220 && isnan(got[3].ettr) && isnan(got[3].step_seconds));
    /* Replaced by one point: job 8's stays. */
    assert_int_equal(hn_store_begin(s), 0);
    assert_int_equal(hn_store_put_points(s, "7", &p[2], 1, 1), 0);
    assert_int_equal(hn_store_commit(s), 0);
    memset(got, 0, sizeof(got));
    assert_int_equal(hn_store_load_points(s, "7", load_point, got), 0);
    assert_int_equal((int)got[0].time, 1);
    assert_true(got[1].time == 220);
    memset(got, 0, sizeof(got));
    assert_int_equal(hn_store_load_points(s, "8", load_point, got), 0);
    assert_int_equal((int)got[0].time, 1);
    memset(got, 0, sizeof(got));
    assert_int_equal(hn_store_load_points(s, "nope", load_point, got), 0);
    assert_int_equal((int)got[0].time, 0);
    hn_store_close(s);

    drop_pending_columns(path);
    raw_query(path, "DROP TABLE job_points", text, sizeof(text));
    raw_query(path, "PRAGMA user_version = 3", text, sizeof(text));
    s = open_ok(path);
    raw_query(path, "SELECT count(*) FROM job_points", text, sizeof(text));
    assert_string_equal(text, "0");
    raw_query(path, "PRAGMA user_version", text, sizeof(text));
    assert_string_equal(text, "12");
    hn_store_close(s);
}

/* ---- the event log ---- */

/* Appends one output of each kind over three nodes; action 1 ends up done. */
static void fill_log(struct hn_store *s)
{
    struct hn_out o;
    assert_int_equal(hn_store_begin(s), 0);
    finding(&o, HN_OUT_FINDING, 10, "n1", "xid", HN_SEV_FATAL, 3, "xid 79");
    assert_int_equal(append_ok(s, &o), 1);
    finding(&o, HN_OUT_TRANSITION, 10, "n1", "xid", HN_SEV_FATAL, 3, "xid 79");
    o.from = HN_NODE_READY;
    o.to = HN_NODE_DRAINING;
    hn_strlcpy(o.actor, "xid", sizeof(o.actor));
    assert_int_equal(append_ok(s, &o), 2);
    action(&o, 10, "n1", 1, HN_ACT_DRAIN, "", "houston: xid 79");
    assert_int_equal(append_ok(s, &o), 3);
    finding(&o, HN_OUT_HELD, 20, "n2", "dbe_new", HN_SEV_FATAL, -1, "guard");
    assert_int_equal(append_ok(s, &o), 4);
    finding(&o, HN_OUT_FINDING, 20, "n2", "laggard", HN_SEV_SUSPECT, 5, "slow");
    assert_int_equal(append_ok(s, &o), 5);
    action(&o, 30, "n3", 2, HN_ACT_REQUEUE, "j42", "");
    assert_int_equal(append_ok(s, &o), 6);
    assert_int_equal(hn_store_commit(s), 0);
    assert_int_equal(hn_store_action_done(s, 1, 1, "scontrol ok"), 0);
}

/* Whether a job is one the caller still has (hn_store_prune's keep): "run". */
static int keep_run(void *ctx, const char *id)
{
    ++*(int *)ctx;
    return strcmp(id, "run") == 0;
}

/* Retention: events and done actions older than the cut go (an event of an action only with
 * it, and never the newest action, whose id the next ones follow); ended jobs whose last
 * report is older go with their histories, and so do jobs not ended as silent unless the
 * caller still has them; newer rows stay. */
static void test_prune(void **state)
{
    (void)state;
    struct hn_store *s = open_ok(":memory:");
    fill_log(s); /* events 1-3 at 10 (action 1, done), 4-5 at 20, 6 at 30 (action 2, pending) */
    struct hn_store_pruned p;
    assert_int_equal(hn_store_prune(s, 25, 2, NULL, NULL, &p), 0); /* in batches of 2 */
    assert_true(p.events == 2 && p.actions == 1 && p.jobs == 0 && p.points == 0);
    assert_int_equal(hn_store_prune(s, 25, 2, NULL, NULL, &p), 0);
    assert_true(p.events == 2 && p.actions == 0);
    assert_int_equal(hn_store_prune(s, 25, 0, NULL, NULL, &p), 0); /* the rest */
    assert_true(p.events == 1 && p.actions == 0 && p.jobs == 0 && p.points == 0);
    struct lines *l = query(s, NULL);
    assert_int_equal(l->count, 1);
    assert_int_equal(l->last_id, 6);
    assert_int_equal(hn_store_prune(s, 100, 0, NULL, NULL, &p),
                     0); /* action 2 pending: its event stays */
    assert_true(p.events == 0 && p.actions == 0);
    assert_int_equal(hn_store_action_done(s, 2, 1, "requeued"), 0);
    assert_int_equal(hn_store_prune(s, 100, 0, NULL, NULL, &p),
                     0); /* done, but the newest: stays */
    assert_true(p.events == 0 && p.actions == 0);
    assert_int_equal(hn_store_max_action_id(s), 2);

    static const struct {
        const char *id;
        double last;
        int ended;
    } jobs[] = {{"old", 50, 1}, {"run", 50, 0}, {"new", 500, 1}, {"lost", 60, 0}, {"live", 500, 0}};
    struct hn_job_point pts[2] = {{40, 0.4, 1, 2}, {50, 0.41, 1, 2}};
    assert_int_equal(hn_store_begin(s), 0);
    for (size_t i = 0; i < 5; i++) {
        struct hn_job_ledger j = {
            .ranks = 8, .last_report = jobs[i].last, .checkpoint = -1, .ended = jobs[i].ended};
        hn_strlcpy(j.id, jobs[i].id, sizeof(j.id));
        assert_int_equal(hn_store_put_job(s, &j), 0);
        assert_int_equal(hn_store_put_points(s, j.id, pts, 2, 0), 0);
    }
    assert_int_equal(hn_store_commit(s), 0);
    /* "lost", not ended but silent since 60 and not the caller's, goes with "old"; "run" is
     * asked about (only it and "lost" are) and stays. */
    int asked = 0;
    assert_int_equal(hn_store_prune(s, 100, 0, keep_run, &asked, &p), 0);
    assert_true(p.jobs == 2 && p.points == 4);
    assert_int_equal(asked, 2);
    char ids[64] = "";
    assert_int_equal(hn_store_load_jobs(s, 0, load_job_id, ids), 0);
    assert_string_equal(ids, "run,live,new");
    struct hn_job_point got[9];
    memset(got, 0, sizeof(got));
    assert_int_equal(hn_store_load_points(s, "old", load_point, got), 0);
    assert_int_equal((int)got[0].time, 0);
    assert_int_equal(hn_store_load_points(s, "run", load_point, got), 0);
    assert_int_equal((int)got[0].time, 2);
    memset(got, 0, sizeof(got));
    assert_int_equal(hn_store_load_points(s, "lost", load_point, got), 0);
    assert_int_equal((int)got[0].time, 0);
    /* Without keep every silent job goes, in batches too. */
    assert_int_equal(hn_store_prune(s, 100, 1, NULL, NULL, &p), 0);
    assert_true(p.jobs == 1 && p.points == 2);
    ids[0] = '\0';
    assert_int_equal(hn_store_load_jobs(s, 0, load_job_id, ids), 0);
    assert_string_equal(ids, "live,new");
    assert_int_equal(hn_store_prune(s, 100, 0, NULL, NULL, NULL), 0);
    hn_store_close(s);
}

static void test_events(void **state)
{
    (void)state;
    struct hn_store *s = open_ok(":memory:");
    fill_log(s);

    struct lines *l = query(s, NULL);
    assert_int_equal(l->count, 6);
    assert_string_equal(
        l->text,
        "6 30 action n3 ~ sev=0 gpu=-1 ~|~ ~>~ by ~ | requeue #2 job=j42 reason= done=-1 ~\n"
        "5 20 finding n2 laggard sev=2 gpu=5 slow|ev(slow) ~>~ by ~ | ~ #0 job=~ reason=~ "
        "done=-1 ~\n"
        "4 20 held n2 dbe_new sev=3 gpu=-1 guard|ev(guard) ~>~ by ~ | ~ #0 job=~ reason=~ "
        "done=-1 ~\n"
        "3 10 action n1 ~ sev=0 gpu=-1 ~|~ ~>~ by ~ | drain #1 job= reason=houston: xid 79 "
        "done=1 scontrol ok\n"
        "2 10 transition n1 xid sev=3 gpu=3 xid 79|ev(xid 79) ready>draining by xid | ~ #0 "
        "job=~ reason=~ done=-1 ~\n"
        "1 10 finding n1 xid sev=3 gpu=3 xid 79|ev(xid 79) ~>~ by ~ | ~ #0 job=~ reason=~ "
        "done=-1 ~\n");

    struct hn_event_filter f = {.node = "n1"};
    assert_int_equal(query(s, &f)->count, 3);
    f = (struct hn_event_filter){.kind = "action"};
    l = query(s, &f);
    assert_int_equal(l->count, 2);
    assert_int_equal(l->last_id, 3);
    f = (struct hn_event_filter){.rule = "xid"};
    assert_int_equal(query(s, &f)->count, 2);
    f = (struct hn_event_filter){.since = 20};
    l = query(s, &f);
    assert_int_equal(l->count, 3);
    assert_int_equal(l->last_id, 4);
    f = (struct hn_event_filter){.node = "n2", .kind = "held", .rule = "dbe_new"};
    assert_int_equal(query(s, &f)->count, 1);
    f = (struct hn_event_filter){.limit = 1};
    l = query(s, &f);
    assert_int_equal(l->count, 1);
    assert_int_equal(l->last_id, 6);

    /* Paging with before_id: the smallest id seen so far. */
    int64_t before = 0, pages = 0, seen = 0;
    for (;;) {
        f = (struct hn_event_filter){.before_id = before, .limit = 4};
        l = query(s, &f);
        if (l->count == 0)
            break;
        pages++;
        seen += l->count;
        before = l->last_id;
    }
    assert_int_equal(pages, 2);
    assert_int_equal(seen, 6);

    /* Values are bound, never pasted into the SQL. */
    f = (struct hn_event_filter){.node = "n1' OR '1'='1"};
    assert_int_equal(query(s, &f)->count, 0);
    hn_store_close(s);
}

static int stop_at_first(void *ctx, const struct hn_store_event *e)
{
    (void)e;
    (*(int *)ctx)++;
    return 42;
}

static int count_event(void *ctx, const struct hn_store_event *e)
{
    (void)e;
    (*(int *)ctx)++;
    return 0;
}

static void test_event_limits(void **state)
{
    (void)state;
    struct hn_store *s = open_ok(":memory:");
    struct hn_out o;
    assert_int_equal(hn_store_begin(s), 0);
    for (int i = 0; i < 10050; i++) {
        finding(&o, HN_OUT_FINDING, i, "n1", "xid", HN_SEV_WARN, 0, "x");
        append_ok(s, &o);
    }
    assert_int_equal(hn_store_commit(s), 0);

    int n = 0;
    assert_int_equal(hn_store_query_events(s, NULL, count_event, &n), 0);
    assert_int_equal(n, 100);
    n = 0;
    struct hn_event_filter f = {.limit = 20000};
    assert_int_equal(hn_store_query_events(s, &f, count_event, &n), 0);
    assert_int_equal(n, 10000);
    n = 0;
    assert_int_equal(hn_store_query_events(s, NULL, stop_at_first, &n), 42);
    assert_int_equal(n, 1);

    /* Bad outputs are refused before SQLite sees them. */
    out_base(&o, (enum hn_out_kind)9, 1, "n1");
    assert_int_equal(hn_store_append(s, &o), -EINVAL);
    action(&o, 1, "n1", 0, HN_ACT_DRAIN, "", "");
    assert_int_equal(hn_store_append(s, &o), -EINVAL);
    hn_store_close(s);
}

/* ---- nodes ---- */

struct node_list {
    char text[1024];
    size_t len;
    int count;
    int stop_after;
};

static int collect_node(void *ctx, const struct hn_store_node *n)
{
    struct node_list *l = ctx;
    char removed[96] = "";
    if (n->removed_at > 0)
        snprintf(removed, sizeof(removed), " removed=%.1f from=%.1f cause=%d", n->removed_at,
                 n->removed_from, n->removed_cause);
    int w = snprintf(l->text + l->len, sizeof(l->text) - l->len,
                     "%s %s %s %s gpus=%u drained=%d held=%d since=%.1f reason=%s%s\n", n->name,
                     n->rack, n->sku, hn_node_state_name(n->state), n->gpus_expected,
                     n->drained_by_houston, n->held, n->since, n->reason, removed);
    if (w > 0 && (size_t)w < sizeof(l->text) - l->len)
        l->len += (size_t)w;
    l->count++;
    return l->stop_after && l->count >= l->stop_after ? 7 : 0;
}

static void test_nodes(void **state)
{
    (void)state;
    struct hn_store *s = open_ok(":memory:");
    struct hn_node_view v[3] = {
        {.name = "n1", .rack = "r1", .sku = "H100", .state = HN_NODE_READY, .gpus_expected = 8},
        {.name = "n2",
         .rack = "r1",
         .sku = "H100",
         .state = HN_NODE_SUSPECT,
         .gpus_expected = 8,
         .held = 1,
         .since = 12.5},
        {.name = "n3", .rack = "r2", .sku = "GB200", .state = HN_NODE_NEW, .gpus_expected = 4},
    };
    hn_strlcpy(v[1].reason, "guard: 1 of 4", sizeof(v[1].reason));
    assert_int_equal(hn_store_begin(s), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(hn_store_put_node(s, &v[i]), 0);
    /* n1 changes later: the row is updated in place and keeps its position. */
    v[0].state = HN_NODE_DRAINING;
    v[0].drained_by_houston = 1;
    v[0].since = 30;
    v[0].removed_at = 30;
    v[0].removed_from = 19.5;
    v[0].removed_cause = HN_LOSS_OPERATOR;
    hn_strlcpy(v[0].reason, "xid 79", sizeof(v[0].reason));
    assert_int_equal(hn_store_put_node(s, &v[0]), 0);
    assert_int_equal(hn_store_commit(s), 0);

    struct node_list l = {.len = 0};
    assert_int_equal(hn_store_load_nodes(s, collect_node, &l), 0);
    assert_string_equal(
        l.text, "n1 r1 H100 draining gpus=8 drained=1 held=0 since=30.0 reason=xid 79 removed=30.0 "
                "from=19.5 cause=3\n"
                "n2 r1 H100 suspect gpus=8 drained=0 held=1 since=12.5 reason=guard: 1 of 4\n"
                "n3 r2 GB200 new gpus=4 drained=0 held=0 since=0.0 reason=\n");

    struct node_list stop = {.stop_after = 2};
    assert_int_equal(hn_store_load_nodes(s, collect_node, &stop), 7);
    assert_int_equal(stop.count, 2);

    struct hn_node_view bad = {.name = ""};
    assert_int_equal(hn_store_put_node(s, &bad), -EINVAL);
    hn_store_close(s);

    /* A database of schema 9 (before a node's last removal was saved) keeps its nodes, none
     * removed. */
    char path[PATH_MAX], text[64];
    db_path(path, sizeof(path), "nodes");
    s = open_ok(path);
    assert_int_equal(hn_store_begin(s), 0);
    assert_int_equal(hn_store_put_node(s, &v[0]), 0);
    assert_int_equal(hn_store_commit(s), 0);
    hn_store_close(s);
    drop_removal_columns(path);
    raw_query(path, "PRAGMA user_version = 9", text, sizeof(text));
    s = open_ok(path);
    struct node_list old = {.len = 0};
    assert_int_equal(hn_store_load_nodes(s, collect_node, &old), 0);
    assert_string_equal(old.text,
                        "n1 r1 H100 draining gpus=8 drained=1 held=0 since=30.0 reason=xid 79\n");
    hn_store_close(s);
}

/* ---- frames ---- */

/* Retention forgets the records of agent boots whose last frame is older than its bound; a
 * database of schema 6, whose records have no time, counts them from the upgrade. */
static void test_frames_prune(void **state)
{
    (void)state;
    char path[PATH_MAX], text[128];
    db_path(path, sizeof(path), "frames");
    struct hn_store *s = open_ok(path);
    assert_int_equal(hn_store_begin(s), 0);
    assert_int_equal(hn_store_mark_frame(s, "n1", 1, 5, 100), 0);
    assert_int_equal(hn_store_mark_frame(s, "n1", 2, 3, 100), 0);
    assert_int_equal(hn_store_mark_frame(s, "n1", 2, 4, 300), 0); /* its newest frame */
    assert_int_equal(hn_store_mark_frame(s, "n2", 1, 9, 50), 0);
    assert_int_equal(hn_store_commit(s), 0);
    struct hn_store_pruned p;
    assert_int_equal(hn_store_prune(s, 200, 1, NULL, NULL, &p), 0); /* in batches of 1 */
    assert_int_equal(p.frames, 1);
    assert_int_equal(hn_store_prune(s, 200, 0, NULL, NULL, &p), 0);
    assert_int_equal(p.frames, 1);
    assert_int_equal(hn_store_prune(s, 200, 0, NULL, NULL, &p), 0);
    assert_int_equal(p.frames, 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", 2, 4), 1); /* kept */
    assert_int_equal(hn_store_frame_seen(s, "n1", 1, 5), 0); /* forgotten */
    assert_int_equal(hn_store_frame_seen(s, "n2", 1, 9), 0);
    hn_store_close(s);

    drop_frame_time(path);
    raw_query(path, "PRAGMA user_version = 6", text, sizeof(text));
    double before = hn_wall_s();
    s = open_ok(path);
    raw_query(path, "PRAGMA user_version", text, sizeof(text));
    assert_string_equal(text, "12");
    raw_query(path, "SELECT time FROM frames", text, sizeof(text));
    double t = strtod(text, NULL);
    assert_true(t >= floor(before) && t <= hn_wall_s() + 1);
    assert_int_equal(hn_store_frame_seen(s, "n1", 2, 4), 1);
    assert_int_equal(hn_store_prune(s, before - 1, 0, NULL, NULL, &p), 0);
    assert_int_equal(p.frames, 0);
    assert_int_equal(hn_store_prune(s, before + 3600, 0, NULL, NULL, &p), 0);
    assert_int_equal(p.frames, 1);
    hn_store_close(s);
}

static void test_frames(void **state)
{
    (void)state;
    struct hn_store *s = open_ok(":memory:");
    const uint64_t boot = 0xfedcba9876543210ULL; /* above INT64_MAX */
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, 1), 0);
    assert_int_equal(hn_store_mark_frame(s, "n1", boot, 5, 1), 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, 5), 1); /* equal: a resend */
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, 4), 1); /* lower */
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, 6), 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot + 1, 1), 0); /* a new boot */
    assert_int_equal(hn_store_frame_seen(s, "n2", boot, 1), 0);     /* another node */

    /* The stored seq never goes down. */
    assert_int_equal(hn_store_mark_frame(s, "n1", boot, 3, 1), 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, 5), 1);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, 6), 0);

    /* Seqs past INT64_MAX compare as unsigned numbers. */
    const uint64_t big = (1ULL << 63) + 1;
    assert_int_equal(hn_store_mark_frame(s, "n1", boot, big, 1), 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, big - 2), 1);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, big + 1), 0);
    assert_int_equal(hn_store_mark_frame(s, "n1", boot, 7, 1), 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, big), 1);
    assert_int_equal(hn_store_mark_frame(s, "n1", boot, UINT64_MAX, 1), 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, UINT64_MAX), 1);
    assert_int_equal(hn_store_mark_frame(s, "n1", boot, big, 1), 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", boot, UINT64_MAX), 1);
    hn_store_close(s);
}

/* ---- the action journal ---- */

struct action_list {
    char text[512];
    size_t len;
    struct hn_store *mark; /* when set, each listed action is marked done during the walk */
};

static int collect_action(void *ctx, const struct hn_action *a, double time)
{
    static const char *const kinds[] = {"drain", "resume", "requeue"};
    struct action_list *l = ctx;
    int w = snprintf(l->text + l->len, sizeof(l->text) - l->len, "%llu %s %s job=%s %s t=%.0f\n",
                     (unsigned long long)a->id, kinds[a->kind], a->node, a->job, a->reason, time);
    if (w > 0 && (size_t)w < sizeof(l->text) - l->len)
        l->len += (size_t)w;
    if (l->mark)
        assert_int_equal(hn_store_action_done(l->mark, a->id, 0, NULL), 0);
    return 0;
}

static void test_actions(void **state)
{
    (void)state;
    struct hn_store *s = open_ok(":memory:");
    assert_int_equal(hn_store_max_action_id(s), 0);

    struct hn_out o;
    assert_int_equal(hn_store_begin(s), 0);
    action(&o, 1, "n1", 1, HN_ACT_DRAIN, "", "houston: xid 79");
    append_ok(s, &o);
    finding(&o, HN_OUT_FINDING, 2, "n2", "xid", HN_SEV_WARN, 0, "xid 13");
    append_ok(s, &o);
    action(&o, 2, "n2", 2, HN_ACT_REQUEUE, "j7", "");
    append_ok(s, &o);
    action(&o, 3, "n1", 3, HN_ACT_RESUME, "", "");
    append_ok(s, &o);
    assert_int_equal(hn_store_commit(s), 0);

    struct action_list l = {.len = 0};
    assert_int_equal(hn_store_pending_actions(s, collect_action, &l), 0);
    assert_string_equal(l.text, "1 drain n1 job= houston: xid 79 t=1\n"
                                "2 requeue n2 job=j7  t=2\n"
                                "3 resume n1 job=  t=3\n");
    assert_int_equal(hn_store_max_action_id(s), 3);

    assert_int_equal(hn_store_action_done(s, 2, 1, "requeued"), 0);
    l = (struct action_list){.len = 0};
    assert_int_equal(hn_store_pending_actions(s, collect_action, &l), 0);
    assert_string_equal(l.text, "1 drain n1 job= houston: xid 79 t=1\n"
                                "3 resume n1 job=  t=3\n");
    assert_int_equal(hn_store_action_done(s, 99, 1, NULL), -ENOENT);
    assert_non_null(strstr(hn_store_error(s), "no action 99"));

    /* An action id journalled twice is refused; the transaction is rolled back. */
    assert_int_equal(hn_store_begin(s), 0);
    action(&o, 4, "n1", 3, HN_ACT_DRAIN, "", "again");
    assert_int_equal(hn_store_append(s, &o), -EEXIST);
    assert_int_equal(hn_store_rollback(s), 0);

    /* The walk reads the list first, so its callback may mark actions done. */
    l = (struct action_list){.mark = s};
    assert_int_equal(hn_store_pending_actions(s, collect_action, &l), 0);
    l = (struct action_list){.len = 0};
    assert_int_equal(hn_store_pending_actions(s, collect_action, &l), 0);
    assert_string_equal(l.text, "");
    struct hn_event_filter f = {.kind = "action"};
    struct lines *ev = query(s, &f);
    assert_int_equal(ev->count, 3);
    assert_non_null(strstr(ev->text, "#2 job=j7 reason= done=1 requeued\n"));
    assert_non_null(strstr(ev->text, "#3 job= reason= done=0 ~\n"));
    assert_int_equal(hn_store_max_action_id(s), 3);
    hn_store_close(s);
}

/* ---- transactions ---- */

static void test_rollback(void **state)
{
    (void)state;
    char path[PATH_MAX];
    db_path(path, sizeof(path), "rollback");
    struct hn_store *s = open_ok(path);
    struct hn_out o;
    struct hn_node_view v = {.name = "n1", .rack = "r1", .sku = "H100", .gpus_expected = 8};

    assert_int_equal(hn_store_begin(s), 0);
    finding(&o, HN_OUT_FINDING, 1, "n1", "xid", HN_SEV_FATAL, 0, "xid 79");
    append_ok(s, &o);
    action(&o, 1, "n1", 1, HN_ACT_DRAIN, "", "houston: xid 79");
    append_ok(s, &o);
    assert_int_equal(hn_store_put_node(s, &v), 0);
    assert_int_equal(hn_store_mark_frame(s, "n1", 1, 1, 1), 0);
    assert_int_equal(hn_store_rollback(s), 0);

    assert_int_equal(hn_store_max_action_id(s), 0);
    assert_int_equal(query(s, NULL)->count, 0);
    assert_int_equal(hn_store_frame_seen(s, "n1", 1, 1), 0);
    struct node_list nl = {.len = 0};
    assert_int_equal(hn_store_load_nodes(s, collect_node, &nl), 0);
    assert_int_equal(nl.count, 0);

    /* Nested begin and a commit with nothing open are errors with a message. */
    assert_int_equal(hn_store_begin(s), 0);
    assert_true(hn_store_begin(s) < 0);
    assert_true(hn_store_error(s)[0] != '\0');
    assert_int_equal(hn_store_commit(s), 0);
    assert_true(hn_store_commit(s) < 0);

    /* A transaction left open at close is discarded. */
    assert_int_equal(hn_store_begin(s), 0);
    assert_int_equal(hn_store_put_node(s, &v), 0);
    hn_store_close(s);
    s = open_ok(path);
    nl = (struct node_list){.len = 0};
    assert_int_equal(hn_store_load_nodes(s, collect_node, &nl), 0);
    assert_int_equal(nl.count, 0);
    hn_store_close(s);
}

/* ---- crash safety ---- */

/* The child: commits transaction after transaction, each a finding, an action, a node and a
 * frame, and reports each committed number on fd. Never returns. */
static void crash_writer(const char *path, int fd)
{
    char err[256];
    struct hn_store *s = hn_store_open(path, err, sizeof(err));
    if (!s)
        _exit(2);
    struct hn_node_view v = {.name = "n1", .rack = "r1", .sku = "H100", .gpus_expected = 8};
    for (uint32_t i = 1; i < 1000000; i++) {
        struct hn_out o;
        char detail[32];
        snprintf(detail, sizeof(detail), "tx %u", i);
        v.since = i;
        if (hn_store_begin(s) < 0)
            _exit(3);
        finding(&o, HN_OUT_FINDING, i, "n1", "crash", HN_SEV_WARN, 0, detail);
        if (hn_store_append(s, &o) <= 0)
            _exit(4);
        action(&o, i, "n1", i, HN_ACT_DRAIN, "", detail);
        if (hn_store_append(s, &o) <= 0 || hn_store_put_node(s, &v) < 0 ||
            hn_store_mark_frame(s, "n1", 7, i, 1) < 0 || hn_store_commit(s) < 0)
            _exit(5);
        if (write(fd, &i, sizeof(i)) != (ssize_t)sizeof(i))
            _exit(6);
    }
    _exit(0);
}

/* Reads one count; 0 at the end of the pipe. */
static int read_count(int fd, uint32_t *out)
{
    size_t got = 0;
    while (got < sizeof(*out)) {
        ssize_t n = read(fd, (char *)out + got, sizeof(*out) - got);
        if (n == 0)
            return 0;
        assert_true(n > 0 || errno == EINTR);
        if (n > 0)
            got += (size_t)n;
    }
    return 1;
}

static int node_since(void *ctx, const struct hn_store_node *n)
{
    *(double *)ctx = n->since;
    return 0;
}

static void test_crash_safety(void **state)
{
    (void)state;
    char path[PATH_MAX];
    db_path(path, sizeof(path), "crash");
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        crash_writer(path, fds[1]);
    }
    close(fds[1]);

    /* Let it commit a few hundred transactions, kill it mid-stream, then take what it had
     * already reported. */
    uint32_t committed = 0, n;
    while (committed < 300 && read_count(fds[0], &n)) {
        assert_int_equal(n, committed + 1);
        committed = n;
    }
    assert_int_equal(committed, 300);
    assert_int_equal(kill(pid, SIGKILL), 0);
    while (read_count(fds[0], &n)) {
        assert_int_equal(n, committed + 1);
        committed = n;
    }
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    /* Every reported transaction is there, whole; at most one more committed unreported. */
    struct hn_store *s = open_ok(path);
    uint64_t max = hn_store_max_action_id(s);
    assert_true(max == committed || max == committed + 1);
    assert_int_equal(hn_store_frame_seen(s, "n1", 7, max), 1);
    assert_int_equal(hn_store_frame_seen(s, "n1", 7, max + 1), 0);
    double since = 0;
    assert_int_equal(hn_store_load_nodes(s, node_since, &since), 0);
    assert_true(since == (double)max);
    int findings = 0, actions = 0;
    struct hn_event_filter f = {.kind = "finding", .limit = 10000};
    assert_int_equal(hn_store_query_events(s, &f, count_event, &findings), 0);
    f.kind = "action";
    assert_int_equal(hn_store_query_events(s, &f, count_event, &actions), 0);
    assert_int_equal(findings, max);
    assert_int_equal(actions, max);
    f = (struct hn_event_filter){.limit = 1};
    struct lines *l = query(s, &f);
    char want[64];
    snprintf(want, sizeof(want), "tx %llu", (unsigned long long)max);
    assert_non_null(strstr(l->text, want));
    hn_store_close(s);

    char text[64];
    raw_query(path, "PRAGMA integrity_check", text, sizeof(text));
    assert_string_equal(text, "ok");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_and_reopen),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_event_limits),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_frames_prune),
        cmocka_unit_test(test_actions),
        cmocka_unit_test(test_rollback),
        cmocka_unit_test(test_crash_safety),
        cmocka_unit_test(test_jobs),
        cmocka_unit_test(test_job_lookup_and_limit),
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_job_points),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
