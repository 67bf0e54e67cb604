/*
 * api.c - the controller's HTTP routes: agents' ingest, the JSON API (docs/api.md) and the
 * controller's own /metrics. Handlers run on libmicrohttpd's thread and take the control
 * lock for as long as they read or change shared state.
 */
#include "agent/expo.h"
#include "common/http.h"
#include "common/stats.h"
#include "common/util.h"
#include "control/control.h"
#include "control/web.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const severity_names[] = {"info", "warn", "suspect", "fatal"};
static const char *const kind_names[] = {"finding", "transition", "action", "held"};

/*
 * A JSON string from text that came from outside (agents' names, kernel-log text, operators'
 * reasons) and may not be valid UTF-8: invalid bytes become '?', so the object is never
 * dropped.
 */
static json_t *jstr(const char *s)
{
    if (!s)
        return json_string("");
    json_t *j = json_string(s);
    if (j)
        return j;
    char buf[1024];
    size_t n = hn_strlcpy(buf, s, sizeof(buf));
    if (n >= sizeof(buf))
        n = sizeof(buf) - 1;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)buf[i] >= 0x80)
            buf[i] = '?';
    }
    j = json_string(buf);
    return j ? j : json_string("");
}

/* A number, or null when unknown (JSON has no NaN). */
static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* A step number: reports carry 64 unsigned bits, which json_int_t does not hold (a client that
 * sends (uint64_t)-1 showed step -1); beyond it, a real. */
static json_t *jstep(uint64_t v)
{
    return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

static void reply_json(struct hn_http_reply *r, int status, json_t *j)
{
    r->status = status;
    r->content_type = "application/json";
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!s || hn_buf_puts(&r->body, s) != 0 || hn_buf_puts(&r->body, "\n") != 0) {
        r->status = 500;
        hn_buf_reset(&r->body);
    }
    free(s);
}

static void reply_error(struct hn_http_reply *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reply_error(struct hn_http_reply *r, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    reply_json(r, status, json_pack("{s:o}", "error", jstr(msg)));
}

/* Constant-time comparison of "Bearer TOKEN" with the expected token. */
static int authorized(const struct hn_http_request *req, const char *token)
{
    const char *h = hn_http_header(req, "Authorization");
    if (!h || strncmp(h, "Bearer ", 7) != 0)
        return 0;
    h += 7;
    size_t a = strlen(h), b = strlen(token);
    unsigned char diff = (unsigned char)(a != b);
    for (size_t i = 0; i < b; i++)
        diff |= (unsigned char)((i < a ? (unsigned char)h[i] : 0) ^ (unsigned char)token[i]);
    return diff == 0;
}

/* ---- ingest ---- */

static void api_ingest(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    const struct hn_http_request *req = r->req;
    (void)url;
    r->content_type = "text/plain; charset=utf-8";
    if (!authorized(req, c->token)) {
        pthread_mutex_lock(&c->lock);
        c->frames_unauthorized++;
        pthread_mutex_unlock(&c->lock);
        r->status = 401;
        hn_buf_puts(&r->body, "missing or wrong token\n");
        return;
    }
    const char *type = hn_http_header(req, "Content-Type");
    if (!type || strncmp(type, "application/x-houston-frame", 27) != 0) {
        r->status = 415;
        hn_buf_puts(&r->body, "Content-Type must be application/x-houston-frame\n");
        return;
    }
    char err[256] = "";
    int status = hn_control_ingest(c, req->body, req->body_len, hn_wall_s(), err, sizeof(err));
    r->status = status == 208 ? 200 : status;
    hn_buf_printf(&r->body, "%s\n", status == 200 ? "accepted" : status == 208 ? "duplicate" : err);
}

/* ---- reads ---- */

static json_t *node_json(struct hn_control *c, int i)
{
    struct hn_node_view v;
    if (hn_brain_node_view(c->brain, i, &v) != 0)
        return NULL;
    double seen = (size_t)i < c->cap_nodes ? c->nodes[i].last_seen : 0;
    return json_pack("{s:o, s:o, s:o, s:s, s:i, s:i, s:b, s:b, s:f, s:o, s:o}", "name",
                     jstr(v.name), "rack", jstr(v.rack), "sku", jstr(v.sku), "state",
                     hn_node_state_name(v.state), "gpus_expected", (int)v.gpus_expected,
                     "gpus_seen", (int)v.gpus_seen, "drained_by_houston", v.drained_by_houston,
                     "held", v.held, "since", v.since, "reason", jstr(v.reason), "last_seen",
                     seen > 0 ? json_real(seen) : json_null());
}

/* The last telemetry of each GPU of node i, null where unknown. */
static json_t *gpus_json(struct hn_control *c, int i)
{
    static const struct {
        const char *name;
        unsigned field;
    } cols[] = {
        {"sm_clock", HN_F_SM_CLOCK}, {"gpu_temp", HN_F_GPU_TEMP},           {"power", HN_F_POWER},
        {"util", HN_F_GPU_UTIL},     {"clock_reasons", HN_F_CLOCK_REASONS}, {"up", HN_F_GPU_UP},
    };
    unsigned fields[HN_ARRAY_LEN(cols)];
    double v[HN_ARRAY_LEN(cols)];
    for (size_t k = 0; k < HN_ARRAY_LEN(cols); k++)
        fields[k] = cols[k].field;
    json_t *arr = json_array();
    int lost;
    for (unsigned g = 0;
         hn_brain_gpu_values(c->brain, i, g, fields, v, HN_ARRAY_LEN(cols), &lost) == 0; g++) {
        json_t *o = json_pack("{s:i, s:b}", "gpu", (int)g, "lost", lost);
        for (size_t k = 0; o && k < HN_ARRAY_LEN(cols); k++)
            json_object_set_new(o, cols[k].name, jnum(v[k]));
        if (o)
            json_array_append_new(arr, o);
    }
    return arr;
}

static void api_nodes(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    (void)url;
    json_t *arr = json_array();
    pthread_mutex_lock(&c->lock);
    size_t n = hn_brain_node_count(c->brain);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, node_json(c, (int)i));
    pthread_mutex_unlock(&c->lock);
    reply_json(r, 200, json_pack("{s:o}", "nodes", arr));
}

static int event_json(void *ctx, const struct hn_store_event *e)
{
    json_t *arr = ctx;
    json_t *o = json_pack(
        "{s:I, s:f, s:o, s:o, s:o, s:s, s:o, s:o}", "id", (json_int_t)e->id, "time", e->time,
        "kind", jstr(e->kind), "node", jstr(e->node), "rule", jstr(e->rule), "severity",
        e->severity >= 0 && e->severity < 4 ? severity_names[e->severity] : "info", "detail",
        jstr(e->detail), "evidence", jstr(e->evidence));
    if (!o)
        return 0;
    int action = strcmp(e->kind, "action") == 0;
    json_object_set_new(o, "gpu", e->gpu >= 0 ? json_integer(e->gpu) : json_null());
    /* An action always names its job ("" for none); other events only when they have one. */
    if (e->job || action)
        json_object_set_new(o, "job", jstr(e->job));
    if (strcmp(e->kind, "transition") == 0) {
        json_object_set_new(o, "from", jstr(e->from));
        json_object_set_new(o, "to", jstr(e->to));
        json_object_set_new(o, "actor", jstr(e->actor));
    }
    if (action) {
        json_object_set_new(o, "action", jstr(e->action));
        json_object_set_new(o, "action_id", json_integer((json_int_t)e->action_id));
        json_object_set_new(o, "reason", jstr(e->reason));
        json_object_set_new(o, "done",
                            e->action_done < 0 ? json_null() : json_boolean(e->action_done));
        json_object_set_new(o, "result", jstr(e->action_result));
    }
    json_array_append_new(arr, o);
    return 0;
}

static int parse_filter(const struct hn_http_request *req, struct hn_event_filter *f, char *err,
                        size_t errsize)
{
    memset(f, 0, sizeof(*f));
    f->node = hn_http_arg(req, "node");
    f->kind = hn_http_arg(req, "kind");
    f->rule = hn_http_arg(req, "rule");
    f->job = hn_http_arg(req, "job");
    const char *since = hn_http_arg(req, "since");
    const char *before = hn_http_arg(req, "before");
    const char *limit = hn_http_arg(req, "limit");
    double d;
    int64_t i;
    if (since && hn_parse_double(since, &d) != 0) {
        snprintf(err, errsize, "since: '%s' is not a Unix time", since);
        return -1;
    }
    f->since = since ? d : 0;
    if (before && (hn_parse_i64(before, 10, &i) != 0 || i < 0)) {
        snprintf(err, errsize, "before: '%s' is not an event id", before);
        return -1;
    }
    f->before_id = before ? i : 0;
    if (limit && (hn_parse_i64(limit, 10, &i) != 0 || i < 1 || i > 10000)) {
        snprintf(err, errsize, "limit: '%s' is not 1..10000", limit);
        return -1;
    }
    f->limit = limit ? (unsigned)i : 100;
    if (f->kind && strcmp(f->kind, "finding") != 0 && strcmp(f->kind, "transition") != 0 &&
        strcmp(f->kind, "action") != 0 && strcmp(f->kind, "held") != 0) {
        snprintf(err, errsize, "kind: '%s' is not finding, transition, action or held", f->kind);
        return -1;
    }
    return 0;
}

static void api_events(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    (void)url;
    struct hn_event_filter f;
    char err[256];
    if (parse_filter(r->req, &f, err, sizeof(err)) != 0) {
        reply_error(r, 400, "%s", err);
        return;
    }
    json_t *arr = json_array();
    pthread_mutex_lock(&c->lock);
    int rc = hn_store_query_events(c->store, &f, event_json, arr);
    pthread_mutex_unlock(&c->lock);
    if (rc != 0) {
        json_decref(arr);
        reply_error(r, 500, "store: query failed");
        return;
    }
    reply_json(r, 200, json_pack("{s:o}", "events", arr));
}

static void api_racks(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    (void)url;
    json_t *racks = json_object();
    pthread_mutex_lock(&c->lock);
    size_t n = hn_brain_node_count(c->brain);
    for (size_t i = 0; i < n; i++) {
        struct hn_node_view v;
        hn_brain_node_view(c->brain, (int)i, &v);
        json_t *rk = json_object_get(racks, v.rack);
        if (!rk) {
            rk = json_pack("{s:o, s:i, s:i}", "name", jstr(v.rack), "nodes", 0, "in_production", 0);
            json_object_set_new(racks, v.rack, rk);
        }
        json_object_set_new(rk, "nodes",
                            json_integer(json_integer_value(json_object_get(rk, "nodes")) + 1));
        if (v.state == HN_NODE_READY || v.state == HN_NODE_SUSPECT)
            json_object_set_new(
                rk, "in_production",
                json_integer(json_integer_value(json_object_get(rk, "in_production")) + 1));
    }
    pthread_mutex_unlock(&c->lock);
    json_t *arr = json_array();
    const char *key;
    json_t *rk;
    json_object_foreach(racks, key, rk)
    {
        json_int_t nodes = json_integer_value(json_object_get(rk, "nodes"));
        json_int_t prod = json_integer_value(json_object_get(rk, "in_production"));
        /* An NVL72 rack is 18 compute trays; below 16 in production it is degraded. Racks of
         * other sizes are degraded below 16/18 of their nodes too. */
        json_object_set_new(rk, "degraded", json_boolean(prod * 18 < nodes * 16));
        json_array_append(arr, rk);
    }
    json_decref(racks);
    reply_json(r, 200, json_pack("{s:o}", "racks", arr));
}

/* /v1/nodes/NAME, /v1/nodes/NAME/drain|resume|approve|state */
static void api_node(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    const struct hn_http_request *req = r->req;
    const char *rest = url + strlen("/v1/nodes/");
    char name[HN_NAME_MAX];
    const char *slash = strchr(rest, '/');
    size_t len = slash ? (size_t)(slash - rest) : strlen(rest);
    if (len == 0 || len >= sizeof(name)) {
        reply_error(r, 404, "no such node");
        return;
    }
    memcpy(name, rest, len);
    name[len] = '\0';
    const char *verb = slash ? slash + 1 : "";
    int is_post = strcmp(req->method, "POST") == 0;
    if (is_post != (verb[0] != '\0')) {
        reply_error(r, 405, "use GET /v1/nodes/NAME or POST /v1/nodes/NAME/ACTION");
        return;
    }
    if (!is_post) {
        pthread_mutex_lock(&c->lock);
        int i = hn_brain_find_node(c->brain, name);
        json_t *node = i >= 0 ? node_json(c, i) : NULL;
        if (node) {
            json_t *hist = json_array();
            struct hn_event_filter f = {.node = name, .limit = 100};
            hn_store_query_events(c->store, &f, event_json, hist);
            json_object_set_new(node, "history", hist);
            json_object_set_new(node, "gpus", gpus_json(c, i));
        }
        pthread_mutex_unlock(&c->lock);
        if (!node) {
            reply_error(r, 404, "no such node: %s", name);
            return;
        }
        reply_json(r, 200, node);
        return;
    }
    if (!authorized(req, c->operator_token)) {
        reply_error(r, 401, "operator token required");
        return;
    }
    json_error_t jerr;
    json_t *body = req->body_len ? json_loadb(req->body, req->body_len, 0, &jerr) : json_object();
    if (!body || !json_is_object(body)) {
        json_decref(body);
        reply_error(r, 400, "body must be a JSON object");
        return;
    }
    static const char *const keys[] = {"user", "reason", "state"};
    for (size_t k = 0; k < HN_ARRAY_LEN(keys); k++) {
        json_t *v = json_object_get(body, keys[k]);
        if (v && !json_is_string(v)) {
            json_decref(body);
            reply_error(r, 400, "%s must be a string", keys[k]);
            return;
        }
    }
    const char *user = json_string_value(json_object_get(body, "user"));
    const char *reason = json_string_value(json_object_get(body, "reason"));
    const char *state = json_string_value(json_object_get(body, "state"));
    if (!user || !user[0])
        user = "unknown";
    pthread_mutex_lock(&c->lock);
    int i = hn_brain_find_node(c->brain, name);
    double now = hn_wall_s();
    int rc;
    struct hn_node_view before;
    enum hn_node_state state_before =
        i >= 0 && hn_brain_node_view(c->brain, i, &before) == 0 ? before.state : HN_NODE_NEW;
    if (i < 0) {
        rc = -ENOENT;
    } else if (strcmp(verb, "drain") == 0) {
        rc = hn_brain_drain(c->brain, now, i, reason && reason[0] ? reason : "drain", user);
    } else if (strcmp(verb, "resume") == 0) {
        rc = hn_brain_resume(c->brain, now, i, user);
    } else if (strcmp(verb, "approve") == 0) {
        rc = hn_brain_approve(c->brain, now, i, user) == 0 ? 0 : -EBUSY;
    } else if (strcmp(verb, "state") == 0) {
        enum hn_node_state to;
        rc = state && hn_node_state_parse(state, &to) == 0
                 ? hn_brain_set_state(c->brain, now, i, to, user)
                 : -EINVAL;
    } else {
        rc = -ENOSYS;
    }
    int saved = hn_control_save(c, "saving an operator action") == 0;
    json_t *node = i >= 0 ? node_json(c, i) : NULL;
    pthread_mutex_unlock(&c->lock);
    json_decref(body);
    if (rc == -ENOENT)
        reply_error(r, 404, "no such node: %s", name);
    else if (rc == -ENOSYS)
        reply_error(r, 404, "unknown action '%s'", verb);
    else if (rc == -EBUSY)
        reply_error(r, 409, "%s: nothing is held for approval", name);
    else if (rc != 0 && state_before == HN_NODE_RETIRED)
        reply_error(r, 409, "%s is retired", name);
    else if (rc != 0)
        reply_error(r, 400, "%s: not allowed in this state or bad request", verb);
    else if (!saved)
        reply_error(r, 500, "the change was made but could not be saved");
    if (rc != 0 || !saved) {
        json_decref(node);
        return;
    }
    reply_json(r, 200, json_pack("{s:o}", "node", node));
}

/* ---- /metrics ---- */

/* What /metrics shows of a job that has not ended. */
struct job_metrics {
    char id[sizeof(((struct hn_job_ledger *)0)->id)];
    double gauge[9]; /* render_jobs' gauges, in order */
    double lost_gpu_h[HN_LOSS_NCAUSES];
    int straggler_rank, straggler_gpu; /* -1: no straggler now; GPU unknown */
    char straggler_node[HN_NAME_MAX];
    double straggler_slowdown;
};

/* Per job that has not ended: MFU, ETTR, effective MFU, step, lost GPU-hours by cause, and its
 * straggler now. Each job's view is taken once; the families are then written one after the
 * other, jobs in the brain's order. */
static void render_jobs(struct hn_control *c, struct hn_expo *e)
{
    static const struct {
        const char *name, *help;
    } gauges[] = {
        {"houston_job_mfu", "Model FLOPs utilisation of the job (0-1; docs/jobs.md)."},
        {"houston_job_ettr", "Effective training time ratio: productive / wall time (0-1)."},
        {"houston_job_effective_mfu", "MFU times ETTR: the share of peak turned into training."},
        {"houston_job_step", "Highest step the job reported."},
        {"houston_job_step_seconds", "Typical (median recent) step time of the job."},
        {"houston_job_no_progress_seconds", "Seconds since the job's step last advanced."},
        {"houston_job_hang_limit_seconds",
         "No progress for longer than this is a hang (docs/jobs.md, Hangs)."},
        {"houston_job_pause_seconds",
         "Seconds since the job announced the pause it is in (a checkpoint save); absent when "
         "none."},
        {"houston_job_restart_seconds",
         "What the job's restarts took, requeue to the next run's first step (median of the "
         "last 5); absent until one was measured."},
    };
    _Static_assert(sizeof(gauges) / sizeof(gauges[0]) ==
                       sizeof(((struct job_metrics *)0)->gauge) / sizeof(double),
                   "one value per gauge");
    size_t n = hn_brain_job_count(c->brain), live = 0;
    struct job_metrics *jobs = xcalloc(n ? n : 1, sizeof(*jobs));
    for (size_t i = 0; i < n; i++) {
        struct hn_job_view v;
        if (hn_brain_job_view(c->brain, i, &v) != 0 || v.l.ended)
            continue;
        struct job_metrics *m = &jobs[live++];
        hn_strlcpy(m->id, v.l.id, sizeof(m->id));
        /* A job down (waiting for its next run, hung, suspended) does no model FLOPs: no MFU
         * for that time, as in its history (the API's job keeps the last run's figure). */
        int down = strcmp(v.state, "running") != 0;
        m->gauge[0] = down ? NAN : v.mfu;
        m->gauge[1] = v.ettr;
        m->gauge[2] = down ? NAN : v.effective_mfu;
        m->gauge[3] = (double)v.l.step;
        m->gauge[4] = v.step_seconds;
        m->gauge[5] = v.no_progress_s;
        m->gauge[6] = v.hang_limit_s;
        m->gauge[7] = v.pause_s;
        m->gauge[8] = v.l.restart_s > 0 ? v.l.restart_s : NAN;
        memcpy(m->lost_gpu_h, v.lost_gpu_h, sizeof(m->lost_gpu_h));
        m->straggler_rank = v.straggler_rank;
        m->straggler_gpu = -1;
        if (v.straggler_rank >= 0) {
            const char *node;
            double sec;
            hn_strlcpy(m->straggler_node, v.straggler_node, sizeof(m->straggler_node));
            m->straggler_slowdown = v.straggler_slowdown;
            if (hn_brain_job_rank(c->brain, i, (unsigned)v.straggler_rank, &node, &m->straggler_gpu,
                                  &sec) != 0)
                m->straggler_gpu = -1;
        }
    }
    char labels[512]; /* the job id escaped (at most 126 bytes), rank, node and GPU */
    size_t len;
    for (size_t g = 0; g < HN_ARRAY_LEN(gauges); g++) {
        hn_expo_family(e, gauges[g].name, gauges[g].help, HN_GAUGE);
        for (size_t i = 0; i < live; i++) {
            double x = jobs[i].gauge[g];
            if (!isfinite(x))
                continue;
            len = 0;
            labels[0] = '\0';
            hn_expo_label(labels, sizeof(labels), &len, "job", jobs[i].id);
            hn_expo_sample(e, gauges[g].name, labels, x);
        }
    }
    hn_expo_family(e, "houston_job_straggler_slowdown",
                   "How much slower than its peers the job's straggler is now (0.3 = 30%), "
                   "labelled with its rank, node and GPU; absent when none.",
                   HN_GAUGE);
    for (size_t i = 0; i < live; i++) {
        const struct job_metrics *m = &jobs[i];
        if (m->straggler_rank < 0 || !isfinite(m->straggler_slowdown))
            continue;
        char num[16];
        len = 0;
        labels[0] = '\0';
        hn_expo_label(labels, sizeof(labels), &len, "job", m->id);
        snprintf(num, sizeof(num), "%d", m->straggler_rank);
        hn_expo_label(labels, sizeof(labels), &len, "rank", num);
        if (m->straggler_node[0])
            hn_expo_label(labels, sizeof(labels), &len, "node", m->straggler_node);
        if (m->straggler_gpu >= 0) {
            snprintf(num, sizeof(num), "%d", m->straggler_gpu);
            hn_expo_label(labels, sizeof(labels), &len, "gpu", num);
        }
        hn_expo_sample(e, "houston_job_straggler_slowdown", labels, m->straggler_slowdown);
    }
    /* In GPU-seconds, Prometheus' base unit (promtool refuses hours); the API and `houston
     * jobs` give GPU-hours. A gauge: houston revises a charge when the next run shows less
     * work was lost than the interruption assumed (docs/jobs.md), so it can go down. */
    hn_expo_family(e, "houston_job_lost_gpu_seconds",
                   "GPU-seconds the job lost so far, by cause (failure, straggler, hang, "
                   "operator, other), as houston's ledger has it now; / 3600 for GPU-hours.",
                   HN_GAUGE);
    for (size_t i = 0; i < live; i++) {
        for (int k = 0; k < HN_LOSS_NCAUSES; k++) {
            len = 0;
            labels[0] = '\0';
            hn_expo_label(labels, sizeof(labels), &len, "job", jobs[i].id);
            hn_expo_label(labels, sizeof(labels), &len, "cause", hn_loss_cause_name(k));
            hn_expo_sample(e, "houston_job_lost_gpu_seconds", labels, jobs[i].lost_gpu_h[k] * 3600);
        }
    }
    free(jobs);
}

/* One family of n samples labelled key=names[k] with values v[k]. */
static void family_by(struct hn_expo *e, const char *name, const char *help,
                      enum hn_metric_type type, const char *key, const char *const *names,
                      const double *v, size_t n)
{
    char labels[128];
    hn_expo_family(e, name, help, type);
    for (size_t k = 0; k < n; k++) {
        size_t len = 0;
        labels[0] = '\0';
        hn_expo_label(labels, sizeof(labels), &len, key, names[k]);
        hn_expo_sample(e, name, labels, v[k]);
    }
}

static void api_metrics(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    (void)url;
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    struct hn_expo e;
    hn_expo_init(&e, &r->body);
    pthread_mutex_lock(&c->lock);
    double counts[HN_NODE_NSTATES] = {0};
    const char *states[HN_NODE_NSTATES];
    size_t held = 0, n = hn_brain_node_count(c->brain);
    for (size_t i = 0; i < n; i++) {
        struct hn_node_view v;
        hn_brain_node_view(c->brain, (int)i, &v);
        counts[v.state]++;
        held += (size_t)v.held;
    }
    for (int s = 0; s < HN_NODE_NSTATES; s++)
        states[s] = hn_node_state_name(s);
    family_by(&e, "houston_control_nodes", "Nodes by lifecycle state.", HN_GAUGE, "state", states,
              counts, HN_NODE_NSTATES);
    hn_expo_one(&e, "houston_control_nodes_held",
                "Nodes whose removal waits for an operator (blast-radius guard).", HN_GAUGE,
                (double)held);
    const double decisions[] = {(double)c->outputs[0], (double)c->outputs[1], (double)c->outputs[2],
                                (double)c->outputs[3]};
    family_by(&e, "houston_control_decisions_total",
              "Brain outputs by kind: findings, transitions, actions, guard holds.", HN_COUNTER,
              "kind", kind_names, decisions, 4);
    static const char *const results[] = {"accepted", "duplicate", "malformed", "unauthorized",
                                          "unknown_node"};
    const double frames[] = {(double)c->frames_accepted, (double)c->frames_duplicate,
                             (double)c->frames_malformed, (double)c->frames_unauthorized,
                             (double)c->frames_unknown};
    family_by(&e, "houston_control_frames_total", "Agent frames by outcome.", HN_COUNTER, "result",
              results, frames, 5);
    static const char *const step_results[] = {"accepted", "refused", "not_owner"};
    const double steps[] = {(double)c->steps_accepted, (double)c->steps_refused,
                            (double)c->steps_not_owner};
    family_by(&e, "houston_control_step_reports_total",
              "Step reports in accepted frames, by result (refused: no job id, bad values, rank "
              "beyond the cap; not_owner: sent by a user other than the job's owner or root).",
              HN_COUNTER, "result", step_results, steps, 3);
    hn_expo_one(&e, "houston_control_step_reports_without_uid_total",
                "Accepted step reports that carried no sender uid (from an agent older than the "
                "uid field): the owner rule could not check them (docs/steps.md).",
                HN_COUNTER, (double)c->steps_no_uid);
    hn_expo_one(&e, "houston_control_job_store_reads_total",
                "Store reads for a job the controller did not have in memory but had saved.",
                HN_COUNTER, (double)c->job_reads);
    hn_expo_one(&e, "houston_control_jobs_reloaded_total",
                "Job ledgers reloaded from the store when a job the controller had forgotten "
                "(more jobs than jobs-max) reported again.",
                HN_COUNTER, (double)c->jobs_reloaded);
    hn_expo_one(&e, "houston_control_sched_owners_overflow_total",
                "Jobs a scheduler poll listed whose owner was not kept (more than 6,144 running "
                "jobs); their step reports are not checked against an owner.",
                HN_COUNTER, (double)c->owners_dropped);
    static const char *const presults[] = {"ok", "failed"};
    const double polls[] = {(double)c->polls_ok, (double)c->polls_failed};
    family_by(&e, "houston_control_scheduler_polls_total",
              "Scheduler polls (squeue) by result; a failed one keeps the job and node lists of "
              "the last that worked (docs/operations.md).",
              HN_COUNTER, "result", presults, polls, 2);
    hn_expo_one(&e, "houston_control_samples_total", "Samples applied to the brain.", HN_COUNTER,
                (double)c->samples);
    hn_expo_one(&e, "houston_control_ingest_seconds_total",
                "Time spent applying frames (decode, brain, store).", HN_COUNTER,
                c->ingest_seconds);
    static const char *const aresults[] = {"ok", "skipped", "failed"};
    const double acts[] = {(double)c->actions_ok, (double)c->actions_skipped,
                           (double)c->actions_failed};
    family_by(&e, "houston_control_actions_total",
              "Scheduler actions run: ok, skipped (already done), failed (retried).", HN_COUNTER,
              "result", aresults, acts, 3);
    hn_expo_one(&e, "houston_control_store_errors_total", "Store writes that failed.", HN_COUNTER,
                (double)c->store_errors);
    static const char *const tables[] = {"events", "actions", "jobs", "job_points", "frames"};
    const double pruned[] = {(double)c->pruned[0], (double)c->pruned[1], (double)c->pruned[2],
                             (double)c->pruned[3], (double)c->pruned[4]};
    family_by(&e, "houston_control_store_pruned_total",
              "Rows the store's retention (store-retention) deleted, by table: events and done "
              "actions older than it, ended jobs (and jobs forgotten before they ended) whose "
              "last report is, their histories, and "
              "the frame records of agent boots whose last frame is.",
              HN_COUNTER, "table", tables, pruned, 5);
    hn_expo_one(&e, "houston_control_store_prune_errors_total",
                "Retention runs that failed (logged; tried again an hour later).", HN_COUNTER,
                (double)c->prune_errors);
    render_jobs(c, &e);
    pthread_mutex_unlock(&c->lock);
}

static void api_web(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    hn_web_serve(c->cfg.web_root, url, r);
}

static void api_health(void *ctx, const char *url, struct hn_http_reply *r)
{
    (void)ctx;
    (void)url;
    hn_buf_puts(&r->body, "ok\n");
}

/* JSON bodies are small; frames get the configured cap (set in hn_control_routes). */
#define JSON_BODY_MAX (64u << 10)

/* ---- jobs ---- */

static json_t *job_json(const struct hn_job_view *v, int with_series)
{
    json_t *lost = json_object();
    json_t *lost_s = json_object();
    for (int k = 0; k < HN_LOSS_NCAUSES; k++) {
        json_object_set_new(lost, hn_loss_cause_name(k), jnum(v->lost_gpu_h[k]));
        json_object_set_new(lost_s, hn_loss_cause_name(k), jnum(v->l.lost_s[k]));
    }
    /* Every real through jnum: json_pack's "f" fails on a NaN or an infinity (a step time
     * taken up to DBL_MAX makes lost GPU time overflow), and the job would vanish from the
     * list, or a cause from its losses. */
    json_t *o = json_pack(
        "{s:o, s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
        "s:o, s:i}",
        "id", jstr(v->l.id), "state", v->state, "ranks", (int)v->l.ranks, "nodes", (int)v->nodes,
        "first_seen", jnum(v->l.first_seen), "last_report", jnum(v->l.last_report), "step",
        jstep(v->l.step), "checkpoint",
        v->l.checkpoint >= 0 ? json_integer(v->l.checkpoint) : json_null(), "step_seconds",
        jnum(v->step_seconds), "tokens_per_s", jnum(v->tokens_per_s), "tflops_per_gpu",
        jnum(v->tflops_per_gpu), "mfu", jnum(v->mfu), "ettr", jnum(v->ettr), "effective_mfu",
        jnum(v->effective_mfu), "productive_s", jnum(v->l.productive_s), "wall_s", jnum(v->wall_s),
        "lost_gpu_hours", lost, "lost_seconds", lost_s, "interruptions", (int)v->l.interruptions);
    if (!o)
        return NULL;
    json_t *st = json_null();
    if (v->straggler_rank >= 0) {
        json_t *phase = json_null();
        if (v->straggler_phase)
            phase = json_pack("{s:s, s:o}", "name", v->straggler_phase, "excess",
                              jnum(v->straggler_phase_excess));
        st = json_pack("{s:i, s:o, s:o, s:o, s:o}", "rank", v->straggler_rank, "node",
                       jstr(v->straggler_node), "slowdown", jnum(v->straggler_slowdown),
                       "onset_step", jstep(v->straggler_onset), "phase",
                       phase ? phase : json_null());
    }
    json_object_set_new(o, "straggler", st ? st : json_null());
    json_object_set_new(o, "plan", jstr(v->plan));
    json_object_set_new(o, "straggler_every", json_integer((json_int_t)v->straggler_every));
    json_object_set_new(o, "late_reports", json_integer((json_int_t)v->late_reports));
    json_object_set_new(o, "untimed_reports", json_integer((json_int_t)v->untimed_reports));
    json_object_set_new(o, "hangs_at_start", json_integer((json_int_t)v->l.restart_hangs));
    json_object_set_new(o, "requeue_failed", json_boolean(v->l.requeue_failed));
    json_object_set_new(o, "longest_pause_s", jnum(v->l.pause_s));
    json_object_set_new(o, "restart_s", jnum(v->l.restart_s > 0 ? v->l.restart_s : NAN));
    json_object_set_new(o, "hang_limit_s", jnum(v->hang_limit_s));
    json_object_set_new(o, "no_progress_s", jnum(v->no_progress_s));
    json_t *pause = json_null();
    if (v->pause)
        pause = json_pack("{s:s, s:o, s:o}", "kind", v->pause, "after_step", jstep(v->pause_step),
                          "for_s", jnum(v->pause_s));
    json_object_set_new(o, "pause", pause ? pause : json_null());
    if (with_series) {
        json_t *arr = json_array();
        for (size_t i = 0; i < v->nseries; i++) {
            const struct hn_job_point *p = &v->series[i];
            json_array_append_new(arr, json_pack("{s:o, s:o, s:o, s:o}", "time", jnum(p->time),
                                                 "mfu", jnum(p->mfu), "ettr", jnum(p->ettr),
                                                 "step_seconds", jnum(p->step_seconds)));
        }
        json_object_set_new(o, "series", arr);
    }
    return o;
}

/* Each rank of job i with its last compute time and its ratio to the median of all ranks'
 * (the dashboard's heat map). At most 65,536 ranks are listed. */
static json_t *ranks_json(struct hn_control *c, size_t i, unsigned ranks)
{
    struct rank_row {
        const char *node; /* borrowed from the brain: the caller holds the lock */
        int gpu;
        double secs;
    };
    unsigned n = ranks < 65536 ? ranks : 65536;
    struct rank_row *rows = xcalloc(n ? n : 1, sizeof(*rows));
    double *times = xcalloc(n ? n : 1, sizeof(double)); /* the known ones, for the median */
    size_t k = 0;
    for (unsigned r = 0; r < n; r++) {
        struct rank_row *w = &rows[r];
        hn_brain_job_rank(c->brain, i, r, &w->node, &w->gpu, &w->secs);
        if (isfinite(w->secs) && w->secs > 0)
            times[k++] = w->secs;
    }
    double med = k ? hn_median(times, k) : NAN;
    json_t *arr = json_array();
    for (unsigned r = 0; r < n; r++) {
        const struct rank_row *w = &rows[r];
        json_t *o = json_pack("{s:i, s:o, s:o, s:o, s:o}", "rank", (int)r, "node",
                              w->node ? jstr(w->node) : json_null(), "gpu",
                              w->gpu >= 0 ? json_integer(w->gpu) : json_null(), "seconds",
                              jnum(w->secs), "ratio", jnum(med > 0 ? w->secs / med : NAN));
        if (o)
            json_array_append_new(arr, o);
    }
    free(rows);
    free(times);
    return arr;
}

static void api_jobs(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    (void)url;
    json_t *arr = json_array();
    pthread_mutex_lock(&c->lock);
    size_t n = hn_brain_job_count(c->brain);
    for (size_t i = 0; i < n; i++) {
        struct hn_job_view v;
        if (hn_brain_job_view(c->brain, i, &v) == 0) {
            json_t *o = job_json(&v, 0);
            if (o)
                json_array_append_new(arr, o);
        }
    }
    pthread_mutex_unlock(&c->lock);
    reply_json(r, 200, json_pack("{s:o}", "jobs", arr));
}

static void api_job(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct hn_control *c = ctx;
    /* The rest of the path, unescaped by libmicrohttpd: a job id may hold a '/' (HOUSTON_JOB_ID
     * outside Slurm), and there is nothing below a job to route to. */
    const char *id = url + strlen("/v1/jobs/");
    if (!*id) {
        reply_error(r, 404, "no such job");
        return;
    }
    pthread_mutex_lock(&c->lock);
    int i = hn_brain_find_job(c->brain, id);
    struct hn_job_view v;
    json_t *o = i >= 0 && hn_brain_job_view(c->brain, (size_t)i, &v) == 0 ? job_json(&v, 1) : NULL;
    if (o) {
        json_object_set_new(o, "rank_count", json_integer(v.l.ranks));
        json_object_set_new(o, "ranks", ranks_json(c, (size_t)i, v.l.ranks));
    }
    pthread_mutex_unlock(&c->lock);
    if (!o) {
        reply_error(r, 404, "no such job: %s", id);
        return;
    }
    struct hn_event_filter f = {.job = id, .limit = 100};
    json_t *events = json_array();
    pthread_mutex_lock(&c->lock);
    hn_store_query_events(c->store, &f, event_json, events);
    pthread_mutex_unlock(&c->lock);
    json_object_set_new(o, "events", events);
    reply_json(r, 200, json_pack("{s:o}", "job", o));
}

static struct hn_http_route routes[] = {
    {"POST", "/v1/ingest", api_ingest, 0},
    {"GET", "/v1/nodes", api_nodes, JSON_BODY_MAX},
    {"GET", "/v1/nodes/*", api_node, JSON_BODY_MAX},
    {"POST", "/v1/nodes/*", api_node, JSON_BODY_MAX},
    {"GET", "/v1/events", api_events, JSON_BODY_MAX},
    {"GET", "/v1/racks", api_racks, JSON_BODY_MAX},
    {"GET", "/v1/jobs", api_jobs, JSON_BODY_MAX},
    {"GET", "/v1/jobs/*", api_job, JSON_BODY_MAX},
    {"GET", "/metrics", api_metrics, JSON_BODY_MAX},
    {"GET", "/healthz", api_health, JSON_BODY_MAX},
    {"GET", "/", api_web, JSON_BODY_MAX},
    {"GET", "/ui/*", api_web, JSON_BODY_MAX},
};

const struct hn_http_route *hn_control_routes(const struct hn_control *c, size_t *n)
{
    routes[0].max_body = c->cfg.max_frame; /* one controller per process */
    *n = HN_ARRAY_LEN(routes);
    return routes;
}
