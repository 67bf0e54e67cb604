#include "cli/cli.h"

#include "cli/client.h"
#include "common/buf.h"
#include "common/fsroot.h"
#include "common/jobid.h"
#include "common/opts.h"
#include "common/util.h"
#include "verbs.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SERVER     "http://127.0.0.1:8080"
#define DEFAULT_TOKEN_FILE "/etc/houston/operator.token"
#define DEFAULT_TIMEOUT_S  10.0
#define TOKEN_MAX          4096
#define NOTE_MAXW          300
#define DETAIL_MAX         8192 /* bytes of an event's detail line before the table cuts it */
#define STATUS_EVENTS      5
#define HELD_LISTED        20 /* held nodes named in `status` before "+N more" */

/* The lifecycle states and event kinds of docs/api.md, to catch typos in --state / --kind. */
static const char *const node_states[] = {"new",      "burnin",      "ready",  "suspect",
                                          "draining", "quarantined", "repair", "retired"};
static const char *const event_kinds[] = {"finding", "transition", "action", "held"};

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s, list[i]) == 0)
            return 1;
    }
    return 0;
}

/* ---- durations and times ---- */

int hn_cli_parse_duration(const char *s, double *seconds)
{
    char num[64];
    size_t n = hn_strlcpy(num, s, sizeof(num));
    if (n == 0 || n >= sizeof(num))
        return -EINVAL;
    double unit = 1;
    switch (num[n - 1]) {
    case 's':
        unit = 1;
        break;
    case 'm':
        unit = 60;
        break;
    case 'h':
        unit = 3600;
        break;
    case 'd':
        unit = 86400;
        break;
    default:
        n++; /* no unit: seconds, nothing to strip */
        break;
    }
    num[n - 1] = '\0';
    double v;
    /* A digit must come first and last: "m", "-5m", " 5 m", "infm" and "nanh" are refused. */
    if (num[0] < '0' || num[0] > '9' || n < 2 || num[n - 2] < '0' || num[n - 2] > '9')
        return -EINVAL;
    if (hn_parse_double(num, &v) != 0 || !isfinite(v) || v <= 0)
        return -EINVAL;
    v *= unit;
    if (v > 100.0 * 365 * 86400) /* a century: past that it is a typo */
        return -EINVAL;
    *seconds = v;
    return 0;
}

void hn_cli_format_age(double seconds, char *out, size_t size)
{
    if (isnan(seconds)) {
        snprintf(out, size, "-");
        return;
    }
    if (seconds < 0)
        seconds = 0;
    if (seconds < 60)
        snprintf(out, size, "%.0fs", floor(seconds));
    else if (seconds < 3600)
        snprintf(out, size, "%.0fm", floor(seconds / 60));
    else if (seconds < 86400)
        snprintf(out, size, "%.0fh", floor(seconds / 3600));
    else if (seconds < 1e12)
        snprintf(out, size, "%.0fd", floor(seconds / 86400));
    else
        snprintf(out, size, "-");
}

void hn_cli_format_time(double unix_s, char *out, size_t size)
{
    /* Years 1970..5138: outside that the server sent nonsense, and time_t math gets odd. */
    if (!isfinite(unix_s) || unix_s < 0 || unix_s > 1e11) {
        snprintf(out, size, "-");
        return;
    }
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (!localtime_r(&t, &tm) || strftime(out, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(out, size, "-");
}

/* ---- the table ---- */

/* Code points in s (UTF-8): the width a terminal gives it, wide characters aside. */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xC0) != 0x80)
            w++;
    }
    return w;
}

/* A heap copy of s safe to print on a terminal and at most maxw code points wide (0: any). */
static char *cell_dup(const char *s, size_t maxw)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    char *out = xmalloc(n + 4);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        /* U+0080..U+009F (C1 controls, e.g. CSI) arrive as C2 80..C2 9F. */
        if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
            (unsigned char)s[i + 1] <= 0x9F) {
            c = ' ';
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            c = ' ';
        }
        out[o++] = (char)c;
    }
    out[o] = '\0';
    if (maxw == 0 || text_width(out) <= maxw)
        return out;
    size_t keep = maxw > 3 ? maxw - 3 : maxw;
    size_t w = 0;
    size_t cut = 0;
    for (; out[cut]; cut++) {
        if (((unsigned char)out[cut] & 0xC0) != 0x80 && w++ == keep)
            break;
    }
    if (maxw > 3)
        memcpy(out + cut, "...", 4);
    else
        out[cut] = '\0';
    return out;
}

void hn_cli_table_init(struct hn_cli_table *t, size_t ncols, const char *const *headers,
                       const size_t *maxw)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
    t->headers = headers;
    t->maxw = maxw;
}

void hn_cli_table_add(struct hn_cli_table *t, const char *const *cells)
{
    if (t->nrows == t->caprows) {
        t->caprows = t->caprows ? t->caprows * 2 : 16;
        t->cells = xrealloc(t->cells, t->caprows * t->ncols * sizeof(char *));
        t->notes = xrealloc(t->notes, t->caprows * sizeof(char *));
    }
    for (size_t c = 0; c < t->ncols; c++)
        t->cells[t->nrows * t->ncols + c] = cell_dup(cells[c], t->maxw ? t->maxw[c] : 0);
    t->notes[t->nrows] = NULL;
    t->nrows++;
}

void hn_cli_table_note(struct hn_cli_table *t, const char *text)
{
    if (t->nrows == 0)
        return;
    free(t->notes[t->nrows - 1]);
    t->notes[t->nrows - 1] = cell_dup(text, NOTE_MAXW);
}

/* Prints one row: blanks are held back until a non-empty cell follows, so no line ends in one. */
static void print_row(const struct hn_cli_table *t, const char *const *cells, const size_t *w,
                      FILE *out)
{
    size_t pending = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        if (cells[c][0]) {
            fprintf(out, "%*s%s", (int)pending, "", cells[c]);
            pending = 0;
        }
        pending += w[c] - text_width(cells[c]) + 2;
    }
    fputc('\n', out);
}

void hn_cli_table_print(const struct hn_cli_table *t, FILE *out)
{
    size_t *w = xcalloc(t->ncols ? t->ncols : 1, sizeof(*w));
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = text_width(t->headers[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = text_width(t->cells[r * t->ncols + c]);
            if (cw > w[c])
                w[c] = cw;
        }
    }
    print_row(t, t->headers, w, out);
    for (size_t r = 0; r < t->nrows; r++) {
        print_row(t, (const char *const *)&t->cells[r * t->ncols], w, out);
        if (t->notes[r] && t->notes[r][0])
            fprintf(out, "    %s\n", t->notes[r]);
    }
    free(w);
}

void hn_cli_table_fini(struct hn_cli_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    for (size_t r = 0; r < t->nrows; r++)
        free(t->notes[r]);
    free(t->cells);
    free(t->notes);
    memset(t, 0, sizeof(*t));
}

/* ---- reading replies ---- */

/* Parses a reply that must be an object; with key, that member must be an array of objects.
 * NULL with err set otherwise. */
static json_t *load_reply(const char *json, const char *key, char *err, size_t errsize)
{
    json_error_t je;
    json_t *root = json_loads(json ? json : "", 0, &je);
    if (!root) {
        snprintf(err, errsize, "not JSON (line %d: %s)", je.line, je.text);
        return NULL;
    }
    if (!json_is_object(root)) {
        snprintf(err, errsize, "not a JSON object");
        goto out_bad;
    }
    if (key) {
        json_t *arr = json_object_get(root, key);
        if (!json_is_array(arr)) {
            snprintf(err, errsize, "no \"%s\" array", key);
            goto out_bad;
        }
        size_t i;
        json_t *v;
        json_array_foreach(arr, i, v)
        {
            if (!json_is_object(v)) {
                snprintf(err, errsize, "%s[%zu] is not an object", key, i);
                goto out_bad;
            }
        }
    }
    return root;
out_bad:
    json_decref(root);
    return NULL;
}

/* A member's string, or NULL when missing or not a string. */
static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* A member's string, "-" when missing, not a string or empty. */
static const char *jstr_or_dash(const json_t *o, const char *key)
{
    const char *s = jstr(o, key);
    return s && *s ? s : "-";
}

/* A member's number; NaN when missing or not a number. */
static double jnum(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A scalar member (string or number) as text into out; 0 when present, -ENOENT otherwise. */
static int jscalar(const json_t *o, const char *key, char *out, size_t size)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_string(v))
        hn_strlcpy(out, json_string_value(v), size);
    else if (json_is_integer(v))
        snprintf(out, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, size, "%g", json_real_value(v));
    else
        return -ENOENT;
    return 0;
}

/* ---- renderers ---- */

static const char *const node_headers[] = {"NAME", "RACK", "STATE", "GPUS", "SINCE", "REASON"};
static const size_t node_maxw[] = {40, 24, 32, 12, 8, 60};

int hn_cli_nodes_render(const char *json, const char *state, double now, FILE *out, char *err,
                        size_t errsize)
{
    json_t *root = load_reply(json, "nodes", err, errsize);
    if (!root)
        return -EBADMSG;
    struct hn_cli_table t;
    hn_cli_table_init(&t, HN_ARRAY_LEN(node_headers), node_headers, node_maxw);
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(root, "nodes"), i, n)
    {
        const char *st = jstr_or_dash(n, "state");
        if (state && strcmp(state, st) != 0)
            continue;
        char st_held[64], gpus[48], since[16];
        snprintf(st_held, sizeof(st_held), "%s%s", st,
                 json_is_true(json_object_get(n, "held")) ? " (held)" : "");
        double seen = jnum(n, "gpus_seen"), expected = jnum(n, "gpus_expected");
        if (isfinite(seen) && isfinite(expected) && fabs(seen) < 1e6 && fabs(expected) < 1e6)
            snprintf(gpus, sizeof(gpus), "%.0f/%.0f", seen, expected);
        else
            snprintf(gpus, sizeof(gpus), "-");
        double t0 = jnum(n, "since");
        hn_cli_format_age(isfinite(t0) && t0 > 0 ? now - t0 : NAN, since, sizeof(since));
        const char *reason = jstr(n, "reason");
        const char *row[] = {jstr_or_dash(n, "name"), jstr_or_dash(n, "rack"), st_held, gpus, since,
                             reason ? reason : ""};
        hn_cli_table_add(&t, row);
    }
    if (t.nrows == 0 && state)
        fprintf(out, "no nodes in state %s\n", state);
    else if (t.nrows == 0)
        fprintf(out, "no nodes\n");
    else
        hn_cli_table_print(&t, out);
    hn_cli_table_fini(&t);
    json_decref(root);
    return 0;
}

/* What an event says, in one line (the table cuts it to fit). */
static void event_detail(const json_t *ev, struct hn_buf *b)
{
    const char *kind = jstr(ev, "kind");
    const char *detail = jstr(ev, "detail");
    if (kind && strcmp(kind, "transition") == 0) {
        const char *from = jstr(ev, "from"), *to = jstr(ev, "to"), *actor = jstr(ev, "actor");
        (void)hn_buf_printf(b, "%s -> %s", from ? from : "?", to ? to : "?");
        if (actor && *actor)
            (void)hn_buf_printf(b, " by %s", actor);
        if (detail && *detail)
            (void)hn_buf_printf(b, ": %s", detail);
        return;
    }
    if (kind && strcmp(kind, "action") == 0) {
        char job[128];
        const char *action = jstr(ev, "action");
        const char *reason = jstr(ev, "reason");
        const char *result = jstr(ev, "result");
        const json_t *done = json_object_get(ev, "done");
        (void)hn_buf_puts(b, action && *action ? action : "action");
        if (jscalar(ev, "job", job, sizeof(job)) == 0 && job[0])
            (void)hn_buf_printf(b, " job %s", job);
        if (json_is_null(done))
            (void)hn_buf_puts(b, " (pending)");
        else if (json_is_true(done))
            (void)hn_buf_puts(b, " (done)");
        else if (json_is_false(done))
            (void)hn_buf_printf(b, " (failed%s%s)", result && *result ? ": " : "",
                                result ? result : "");
        if (reason && *reason)
            (void)hn_buf_printf(b, ": %s", reason);
        else if (detail && *detail)
            (void)hn_buf_printf(b, ": %s", detail);
        return;
    }
    (void)hn_buf_puts(b, detail ? detail : "");
}

static const char *const event_headers[] = {"TIME", "NODE", "KIND", "RULE", "DETAIL"};
static const size_t event_maxw[] = {19, 40, 12, 24, 100};

/* Prints at most max events of the array (already checked to hold objects). */
static void events_print(const json_t *events, size_t max, FILE *out)
{
    struct hn_cli_table t;
    struct hn_buf detail;
    hn_buf_init(&detail, DETAIL_MAX);
    hn_cli_table_init(&t, HN_ARRAY_LEN(event_headers), event_headers, event_maxw);
    for (size_t i = 0; i < json_array_size(events) && i < max; i++) {
        const json_t *ev = json_array_get(events, i);
        char when[32];
        hn_cli_format_time(jnum(ev, "time"), when, sizeof(when));
        hn_buf_reset(&detail);
        event_detail(ev, &detail);
        const char *row[] = {when, jstr_or_dash(ev, "node"), jstr_or_dash(ev, "kind"),
                             jstr_or_dash(ev, "rule"), detail.data ? detail.data : ""};
        hn_cli_table_add(&t, row);
        const char *kind = jstr(ev, "kind");
        const char *evidence = jstr(ev, "evidence");
        if (kind && strcmp(kind, "transition") == 0 && evidence && *evidence) {
            hn_buf_reset(&detail);
            (void)hn_buf_printf(&detail, "evidence: %s", evidence);
            hn_cli_table_note(&t, detail.data);
        }
    }
    if (t.nrows == 0)
        fprintf(out, "no events\n");
    else
        hn_cli_table_print(&t, out);
    hn_cli_table_fini(&t);
    hn_buf_fini(&detail);
}

int hn_cli_events_render(const char *json, FILE *out, char *err, size_t errsize)
{
    json_t *root = load_reply(json, "events", err, errsize);
    if (!root)
        return -EBADMSG;
    events_print(json_object_get(root, "events"), SIZE_MAX, out);
    json_decref(root);
    return 0;
}

/* Prints a list of names on one line, the first `max` of them and "+N more". */
static void print_names(FILE *out, char **names, size_t n, size_t max)
{
    for (size_t i = 0; i < n && i < max; i++)
        fprintf(out, "%s%s", i ? ", " : "", names[i]);
    if (n > max)
        fprintf(out, " +%zu more", n - max);
}

static void status_nodes(const json_t *nodes, FILE *out)
{
    size_t counts[HN_ARRAY_LEN(node_states)] = {0};
    size_t other = 0, nheld = 0;
    char **held = xcalloc(HELD_LISTED, sizeof(char *));
    size_t i;
    const json_t *n;
    json_array_foreach(nodes, i, n)
    {
        const char *st = jstr_or_dash(n, "state");
        size_t s = 0;
        while (s < HN_ARRAY_LEN(node_states) && strcmp(st, node_states[s]) != 0)
            s++;
        if (s < HN_ARRAY_LEN(node_states))
            counts[s]++;
        else
            other++;
        if (json_is_true(json_object_get(n, "held"))) {
            if (nheld < HELD_LISTED)
                held[nheld] = cell_dup(jstr_or_dash(n, "name"), 40);
            nheld++;
        }
    }
    fprintf(out, "nodes     %zu\n", json_array_size(nodes));
    for (size_t s = 0; s < HN_ARRAY_LEN(node_states); s++) {
        if (counts[s])
            fprintf(out, "  %-12s %6zu\n", node_states[s], counts[s]);
    }
    if (other)
        fprintf(out, "  %-12s %6zu\n", "(other)", other);
    fprintf(out, "held      %zu", nheld);
    if (nheld) {
        fprintf(out, " waiting for `houston approve`: ");
        print_names(out, held, nheld, HELD_LISTED);
    }
    fputc('\n', out);
    for (size_t h = 0; h < nheld && h < HELD_LISTED; h++)
        free(held[h]);
    free(held);
}

static void status_racks(const json_t *racks, FILE *out)
{
    size_t ndegraded = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(racks, i, r)
    {
        if (json_is_true(json_object_get(r, "degraded")))
            ndegraded++;
    }
    fprintf(out, "racks     %zu, %zu degraded\n", json_array_size(racks), ndegraded);
    json_array_foreach(racks, i, r)
    {
        if (!json_is_true(json_object_get(r, "degraded")))
            continue;
        char *name = cell_dup(jstr_or_dash(r, "name"), 40);
        double prod = jnum(r, "in_production"), total = jnum(r, "nodes");
        if (isfinite(prod) && isfinite(total) && fabs(prod) < 1e9 && fabs(total) < 1e9)
            fprintf(out, "  %-12s %.0f of %.0f nodes in production\n", name, prod, total);
        else
            fprintf(out, "  %s\n", name);
        free(name);
    }
}

int hn_cli_status_render(const char *nodes_json, const char *racks_json, const char *events_json,
                         FILE *out, char *err, size_t errsize)
{
    int rc = -EBADMSG;
    json_t *nodes = NULL, *racks = NULL, *events = NULL;
    char why[256];
    if (!(nodes = load_reply(nodes_json, "nodes", why, sizeof(why)))) {
        snprintf(err, errsize, "/v1/nodes: %s", why);
        goto out;
    }
    if (!(racks = load_reply(racks_json, "racks", why, sizeof(why)))) {
        snprintf(err, errsize, "/v1/racks: %s", why);
        goto out;
    }
    if (!(events = load_reply(events_json, "events", why, sizeof(why)))) {
        snprintf(err, errsize, "/v1/events: %s", why);
        goto out;
    }
    status_nodes(json_object_get(nodes, "nodes"), out);
    status_racks(json_object_get(racks, "racks"), out);
    fprintf(out, "\nlast events\n");
    events_print(json_object_get(events, "events"), STATUS_EVENTS, out);
    rc = 0;
out:
    json_decref(events);
    json_decref(racks);
    json_decref(nodes);
    return rc;
}

int hn_cli_node_render(const char *json, FILE *out, char *err, size_t errsize)
{
    json_t *root = load_reply(json, NULL, err, errsize);
    if (!root)
        return -EBADMSG;
    const json_t *n = json_object_get(root, "node");
    if (!json_is_object(n)) {
        snprintf(err, errsize, "no \"node\" object");
        json_decref(root);
        return -EBADMSG;
    }
    char *name = cell_dup(jstr_or_dash(n, "name"), 80);
    char *state = cell_dup(jstr_or_dash(n, "state"), 40);
    const char *r = jstr(n, "reason");
    char *reason = r && *r ? cell_dup(r, 200) : NULL;
    fprintf(out, "%s: %s%s", name, state,
            json_is_true(json_object_get(n, "held")) ? ", removal held for approval" : "");
    if (reason)
        fprintf(out, " (%s)", reason);
    fputc('\n', out);
    free(reason);
    free(state);
    free(name);
    json_decref(root);
    return 0;
}

/* ---- command lines ---- */

enum {
    O_STATE = 1 << 0,
    O_NODE = 1 << 1,
    O_KIND = 1 << 2,
    O_RULE = 1 << 3,
    O_SINCE = 1 << 4,
    O_LIMIT = 1 << 5,
    O_REASON = 1 << 6,
    O_USER = 1 << 7,
    O_TOKEN = 1 << 8,
    O_TARGET = 1 << 9,  /* one positional NODE */
    O_OPTARG = 1 << 10, /* at most one positional argument (a job id) */
};

struct opts {
    char server[2048];
    double timeout_s;
    int json;
    const char *state, *node, *kind, *rule, *reason, *user, *token_file, *target;
    double since_s; /* 0: not given */
    long limit;     /* 0: the server's default */
};

struct cli {
    const char *verb;
    struct opts o;
    struct hn_client client;
    FILE *out, *err;
};

struct cli_verb {
    const char *name;
    unsigned opts; /* O_* the verb takes beyond the common ones */
    int (*run)(struct cli *c);
    void (*usage)(FILE *out);
};

static const struct option long_opts[] = {
    {"server", required_argument, NULL, 'S'},     {"json", no_argument, NULL, 'j'},
    {"timeout", required_argument, NULL, 't'},    {"help", no_argument, NULL, 'h'},
    {"state", required_argument, NULL, 's'},      {"node", required_argument, NULL, 'n'},
    {"kind", required_argument, NULL, 'k'},       {"rule", required_argument, NULL, 'r'},
    {"since", required_argument, NULL, 'i'},      {"limit", required_argument, NULL, 'l'},
    {"reason", required_argument, NULL, 'R'},     {"user", required_argument, NULL, 'u'},
    {"token-file", required_argument, NULL, 'T'}, {NULL, 0, NULL, 0},
};

/* Which O_* bit a verb-specific option letter needs; 0 for the common ones. */
static unsigned opt_bit(int ch)
{
    switch (ch) {
    case 's':
        return O_STATE;
    case 'n':
        return O_NODE;
    case 'k':
        return O_KIND;
    case 'r':
        return O_RULE;
    case 'i':
        return O_SINCE;
    case 'l':
        return O_LIMIT;
    case 'R':
        return O_REASON;
    case 'u':
        return O_USER;
    case 'T':
        return O_TOKEN;
    default:
        return 0;
    }
}

/* Refuses a string option longer than max bytes (it ends up in a URL or a request body). */
static int check_len(struct cli *c, const char *flag, const char *v, size_t max)
{
    if (strlen(v) <= max && v[0] != '\0')
        return 0;
    fprintf(c->err, "houston %s: %s: %s\n", c->verb, flag, v[0] ? "too long" : "must not be empty");
    return -1;
}

/* Handles one parsed option; 0 or -1 after printing why. */
static int take_opt(struct cli *c, int ch, const char *arg)
{
    struct opts *o = &c->o;
    int64_t n;
    switch (ch) {
    case 'S':
        if (hn_strlcpy(o->server, arg, sizeof(o->server)) >= sizeof(o->server))
            o->server[0] = '\0'; /* refused below with the env's value alike */
        break;
    case 'j':
        o->json = 1;
        break;
    case 't':
        if (hn_parse_double(arg, &o->timeout_s) != 0 || !(o->timeout_s > 0) ||
            o->timeout_s > 3600) {
            fprintf(c->err, "houston %s: --timeout: '%s' is not a number of seconds in (0, 3600]\n",
                    c->verb, arg);
            return -1;
        }
        break;
    case 's':
        if (!in_list(arg, node_states, HN_ARRAY_LEN(node_states))) {
            fprintf(c->err,
                    "houston %s: --state: '%s' is not one of new, burnin, ready, suspect, "
                    "draining, quarantined, repair, retired\n",
                    c->verb, arg);
            return -1;
        }
        o->state = arg;
        break;
    case 'n':
        o->node = arg;
        return check_len(c, "--node", arg, 256);
    case 'k':
        if (!in_list(arg, event_kinds, HN_ARRAY_LEN(event_kinds))) {
            fprintf(c->err,
                    "houston %s: --kind: '%s' is not one of finding, transition, action, held\n",
                    c->verb, arg);
            return -1;
        }
        o->kind = arg;
        break;
    case 'r':
        o->rule = arg;
        return check_len(c, "--rule", arg, 128);
    case 'i':
        if (hn_cli_parse_duration(arg, &o->since_s) != 0) {
            fprintf(c->err, "houston %s: --since: '%s' is not a duration like 90s, 10m, 2h, 1d\n",
                    c->verb, arg);
            return -1;
        }
        break;
    case 'l':
        if (hn_parse_i64(arg, 10, &n) != 0 || n < 1 || n > 10000) {
            fprintf(c->err, "houston %s: --limit: '%s' is not 1..10000\n", c->verb, arg);
            return -1;
        }
        o->limit = (long)n;
        break;
    case 'R':
        o->reason = arg;
        return check_len(c, "--reason", arg, 1024);
    case 'u':
        o->user = arg;
        return check_len(c, "--user", arg, 128);
    case 'T':
        o->token_file = arg;
        return check_len(c, "--token-file", arg, 4095);
    default:
        return -1;
    }
    return 0;
}

/* Parses argv for verb v. Returns 0 to run, 1 after printing help, -1 after a usage error. */
static int parse(struct cli *c, const struct cli_verb *v, int argc, char **argv)
{
    struct opts *o = &c->o;
    memset(o, 0, sizeof(*o));
    const char *env = getenv("HOUSTON_SERVER");
    hn_strlcpy(o->server, env && *env ? env : DEFAULT_SERVER, sizeof(o->server));
    o->timeout_s = DEFAULT_TIMEOUT_S;
    /* Only the verb's own options: a prefix is then matched, and an ambiguity named, among
     * them alone ("houston nodes --s" is --state or --server, not --since). */
    struct option mine[HN_ARRAY_LEN(long_opts)];
    size_t n = 0;
    for (size_t i = 0; i < HN_ARRAY_LEN(long_opts); i++) {
        if (!long_opts[i].name || (opt_bit(long_opts[i].val) & ~v->opts) == 0)
            mine[n++] = long_opts[i];
    }
    int ret = 0, ch;
    struct hn_opts g;
    hn_opts_begin(&g, c->verb, mine, c->err);
    while (ret == 0 && (ch = hn_opts_next(&g, argc, argv)) != -1) {
        if (ch == 'h') {
            v->usage(c->out);
            ret = 1;
        } else if (ch == '?') {
            ret = -1;
        } else if (take_opt(c, ch, optarg) != 0) {
            ret = -1;
        }
    }
    hn_opts_end(&g);
    if (ret != 0)
        return ret;
    if ((v->opts & (O_TARGET | O_OPTARG)) && optind < argc) {
        o->target = argv[optind++];
        if (check_len(c, "NODE", o->target, 256) != 0)
            return -1;
    }
    if (optind < argc) {
        fprintf(c->err, "houston %s: unexpected argument '%s'\n", c->verb, argv[optind]);
        return -1;
    }
    if ((v->opts & O_TARGET) && !o->target) {
        fprintf(c->err, "houston %s: which node? (usage: houston %s NODE ...)\n", c->verb, c->verb);
        return -1;
    }
    if ((v->opts & O_REASON) && !o->reason) {
        fprintf(c->err, "houston %s: --reason TEXT is required (it is shown in Slurm)\n", c->verb);
        return -1;
    }
    if (hn_client_check_server(o->server) != 0) {
        fprintf(c->err, "houston %s: bad server URL '%s' (want http://HOST:PORT)\n", c->verb,
                o->server);
        return -1;
    }
    return 0;
}

/* ---- requests ---- */

/* Says what went wrong with a 4xx/5xx reply: its {"error"} message, else its first line. */
static void server_refused(struct cli *c, const struct hn_client_reply *r)
{
    json_t *root = r->body.data ? json_loads(r->body.data, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(root, "error"));
    char line[256] = "";
    if (!msg && r->body.data) {
        size_t n = strcspn(r->body.data, "\r\n");
        if (n >= sizeof(line))
            n = sizeof(line) - 1;
        memcpy(line, r->body.data, n);
        line[n] = '\0';
        msg = line;
    }
    char *safe = cell_dup(msg && *msg ? msg : "(no message)", 300);
    fprintf(c->err, "houston %s: %s answered %ld: %s\n", c->verb, r->url, r->status, safe);
    free(safe);
    json_decref(root);
}

/* One request. 0 with a 2xx reply in r; otherwise the exit code, the reason printed. */
static int call(struct cli *c, const char *method, const char *path, const char *body,
                struct hn_client_reply *r)
{
    char msg[1024];
    int rc = hn_client_request(&c->client, method, path, body, r, msg, sizeof(msg));
    if (rc == -EHOSTUNREACH) {
        fprintf(c->err, "houston %s: %s\n", c->verb, msg);
        return HN_CLI_UNREACHABLE;
    }
    if (rc == -EFBIG) {
        fprintf(c->err, "houston %s: bad response from %s: larger than %zu MiB\n", c->verb, r->url,
                HN_CLIENT_MAX_REPLY >> 20);
        return HN_CLI_SERVER;
    }
    if (rc != 0) {
        fprintf(c->err, "houston %s: %s\n", c->verb, msg);
        return HN_CLI_USAGE;
    }
    if (r->status >= 400) {
        server_refused(c, r);
        return HN_CLI_SERVER;
    }
    if (r->status < 200 || r->status >= 300) {
        fprintf(c->err, "houston %s: bad response from %s: HTTP status %ld\n", c->verb, r->url,
                r->status);
        return HN_CLI_SERVER;
    }
    return 0;
}

static int bad_response(struct cli *c, const char *url, const char *why)
{
    fprintf(c->err, "houston %s: bad response from %s: %s\n", c->verb, url, why);
    return HN_CLI_SERVER;
}

/* Pretty-prints a JSON document to out. */
static void dump(struct cli *c, const json_t *root)
{
    json_dumpf(root, c->out, JSON_INDENT(2));
    fputc('\n', c->out);
}

/* --json: the reply as received (checked to be JSON of the expected shape), pretty-printed. */
static int print_json(struct cli *c, const struct hn_client_reply *r, const char *key)
{
    char why[256];
    json_t *root = load_reply(r->body.data, key, why, sizeof(why));
    if (!root)
        return bad_response(c, r->url, why);
    if (key && strcmp(key, "nodes") == 0 && c->o.state) {
        /* --state filters the JSON too: dropping nodes keeps the document's shape. */
        json_t *nodes = json_object_get(root, "nodes");
        for (size_t i = json_array_size(nodes); i-- > 0;) {
            const char *st = jstr(json_array_get(nodes, i), "state");
            if (!st || strcmp(st, c->o.state) != 0)
                json_array_remove(nodes, i);
        }
    }
    dump(c, root);
    json_decref(root);
    return HN_CLI_OK;
}

static int run_nodes(struct cli *c)
{
    struct hn_client_reply r;
    hn_client_reply_init(&r);
    int rc = call(c, "GET", "/v1/nodes", NULL, &r);
    if (rc == 0 && c->o.json) {
        rc = print_json(c, &r, "nodes");
    } else if (rc == 0) {
        char why[256];
        if (hn_cli_nodes_render(r.body.data, c->o.state, hn_wall_s(), c->out, why, sizeof(why)) !=
            0)
            rc = bad_response(c, r.url, why);
    }
    hn_client_reply_fini(&r);
    return rc;
}

/* Adds "&key=value" (escaped) to the query in b. */
static void query_add(struct hn_buf *b, const char *key, const char *value)
{
    (void)hn_buf_printf(b, "%s%s=", strchr(b->data, '?') ? "&" : "?", key);
    (void)hn_client_escape(b, value);
}

static int run_events(struct cli *c)
{
    struct hn_buf path;
    hn_buf_init(&path, 4096); /* the options are capped far below this */
    (void)hn_buf_puts(&path, "/v1/events");
    if (c->o.node)
        query_add(&path, "node", c->o.node);
    if (c->o.kind)
        query_add(&path, "kind", c->o.kind);
    if (c->o.rule)
        query_add(&path, "rule", c->o.rule);
    if (c->o.since_s > 0) {
        char t[64];
        snprintf(t, sizeof(t), "%.3f", hn_wall_s() - c->o.since_s);
        query_add(&path, "since", t);
    }
    if (c->o.limit > 0) {
        char l[32];
        snprintf(l, sizeof(l), "%ld", c->o.limit);
        query_add(&path, "limit", l);
    }
    struct hn_client_reply r;
    hn_client_reply_init(&r);
    int rc = call(c, "GET", path.data, NULL, &r);
    if (rc == 0 && c->o.json) {
        rc = print_json(c, &r, "events");
    } else if (rc == 0) {
        char why[256];
        if (hn_cli_events_render(r.body.data, c->out, why, sizeof(why)) != 0)
            rc = bad_response(c, r.url, why);
    }
    hn_client_reply_fini(&r);
    hn_buf_fini(&path);
    return rc;
}

static int run_status(struct cli *c)
{
    static const char *const paths[] = {"/v1/nodes", "/v1/racks", "/v1/events?limit=5"};
    static const char *const keys[] = {"nodes", "racks", "events"};
    struct hn_client_reply r[3];
    int rc = 0;
    size_t got = 0;
    for (; got < 3 && rc == 0; got++) {
        hn_client_reply_init(&r[got]);
        rc = call(c, "GET", paths[got], NULL, &r[got]);
    }
    if (rc == 0 && c->o.json) {
        /* One document: the three replies' members side by side. */
        json_t *all = json_object();
        for (size_t i = 0; i < 3 && rc == 0; i++) {
            char why[256];
            json_t *doc = load_reply(r[i].body.data, keys[i], why, sizeof(why));
            if (!doc) {
                rc = bad_response(c, r[i].url, why);
                break;
            }
            json_object_update(all, doc);
            json_decref(doc);
        }
        if (rc == 0)
            dump(c, all);
        json_decref(all);
    } else if (rc == 0) {
        char why[300];
        if (hn_cli_status_render(r[0].body.data, r[1].body.data, r[2].body.data, c->out, why,
                                 sizeof(why)) != 0)
            rc = bad_response(c, c->o.server, why);
    }
    for (size_t i = 0; i < got; i++)
        hn_client_reply_fini(&r[i]);
    return rc;
}

/* Reads the operator token (trimmed, one line, under 4 KiB) into token. 0 or -1 after
 * printing why. */
static int read_token(struct cli *c, char *token, size_t size)
{
    const char *path = c->o.token_file;
    if (!path) {
        const char *env = getenv("HOUSTON_OPERATOR_TOKEN_FILE");
        path = env && *env ? env : DEFAULT_TOKEN_FILE;
    }
    long n = hn_read_file(path, token, size);
    if (n < 0) {
        fprintf(c->err, "houston %s: cannot read the operator token file %s: %s\n", c->verb, path,
                strerror((int)-n));
        return -1;
    }
    if ((size_t)n >= size - 1) {
        fprintf(c->err, "houston %s: the operator token file %s is too large\n", c->verb, path);
        return -1;
    }
    hn_trim(token);
    for (const char *p = token; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            fprintf(c->err, "houston %s: the operator token in %s is not one line\n", c->verb,
                    path);
            return -1;
        }
    }
    if (token[0] == '\0') {
        fprintf(c->err, "houston %s: the operator token file %s is empty\n", c->verb, path);
        return -1;
    }
    return 0;
}

/* Who acts: --user, else $USER, $LOGNAME, then the account's name. */
static const char *acting_user(struct cli *c)
{
    if (c->o.user)
        return c->o.user;
    const char *u = getenv("USER");
    if (!u || !*u)
        u = getenv("LOGNAME");
    if (!u || !*u) {
        const struct passwd *pw = getpwuid(getuid());
        u = pw ? pw->pw_name : NULL;
    }
    if (!u || !*u || strlen(u) > 128)
        return NULL;
    return u;
}

/* drain, resume and approve: POST /v1/nodes/NODE/<verb> with the operator token. */
static int run_write(struct cli *c)
{
    int rc = HN_CLI_USAGE;
    char *token = xmalloc(TOKEN_MAX + 2);
    char *body = NULL;
    json_t *req = NULL;
    struct hn_buf path;
    hn_buf_init(&path, 4096);
    struct hn_client_reply r;
    hn_client_reply_init(&r);
    if (read_token(c, token, TOKEN_MAX + 2) != 0)
        goto out;
    c->client.token = token;
    const char *user = acting_user(c);
    if (!user) {
        fprintf(c->err, "houston %s: who are you? (say --user NAME)\n", c->verb);
        goto out;
    }
    req = json_object();
    if (json_object_set_new(req, "user", json_string(user)) != 0 ||
        (c->o.reason && json_object_set_new(req, "reason", json_string(c->o.reason)) != 0)) {
        fprintf(c->err, "houston %s: --user and --reason must be UTF-8 text\n", c->verb);
        goto out;
    }
    body = json_dumps(req, JSON_COMPACT);
    if (!body) {
        fprintf(c->err, "houston %s: cannot build the request\n", c->verb);
        goto out;
    }
    (void)hn_buf_puts(&path, "/v1/nodes/");
    (void)hn_client_escape(&path, c->o.target);
    (void)hn_buf_printf(&path, "/%s", c->verb);
    rc = call(c, "POST", path.data, body, &r);
    if (rc == 0 && c->o.json) {
        rc = print_json(c, &r, NULL);
    } else if (rc == 0) {
        char why[256];
        if (hn_cli_node_render(r.body.data, c->out, why, sizeof(why)) != 0)
            rc = bad_response(c, r.url, why);
    }
out:
    hn_client_reply_fini(&r);
    hn_buf_fini(&path);
    free(body);
    json_decref(req);
    explicit_bzero(token, TOKEN_MAX + 2);
    free(token);
    return rc;
}

/* ---- usage ---- */

static void usage_common(FILE *out)
{
    fprintf(out,
            "  --server URL        the controller (default $HOUSTON_SERVER, else\n"
            "                      %s)\n"
            "  --json              print the server's JSON, pretty-printed, instead of text\n"
            "  --timeout SECONDS   give up on the server after this long (default 10)\n"
            "  -h, --help          show this help\n\n"
            "exit: 0 done, 1 the server refused or answered badly, 2 usage error, 3 the server\n"
            "cannot be reached\n",
            DEFAULT_SERVER);
}

static void usage_write(FILE *out)
{
    fprintf(out,
            "  --user NAME         who acts, recorded with the change (default $USER)\n"
            "  --token-file FILE   the operator token (default $HOUSTON_OPERATOR_TOKEN_FILE,\n"
            "                      else %s)\n",
            DEFAULT_TOKEN_FILE);
}

void hn_usage_status(FILE *out)
{
    fprintf(out, "usage: houston status [options]\n\n"
                 "The fleet at a glance: nodes by state, nodes whose removal waits for an\n"
                 "operator, degraded racks and the last 5 events.\n\noptions:\n");
    usage_common(out);
}

void hn_usage_nodes(FILE *out)
{
    fprintf(out, "usage: houston nodes [--state STATE] [options]\n\n"
                 "Lists the nodes: NAME RACK STATE GPUS (seen/expected) SINCE (time in this\n"
                 "state) REASON. \"(held)\" marks a removal waiting for `houston approve`.\n\n"
                 "options:\n"
                 "  --state STATE       only nodes in STATE (new, burnin, ready, suspect,\n"
                 "                      draining, quarantined, repair, retired); also filters\n"
                 "                      --json\n");
    usage_common(out);
}

void hn_usage_events(FILE *out)
{
    fprintf(out, "usage: houston events [--node N] [--kind K] [--rule R] [--since D] [--limit L]\n"
                 "                      [options]\n\n"
                 "Lists events, newest first: TIME NODE KIND RULE DETAIL, with each transition's\n"
                 "evidence indented under it.\n\noptions:\n"
                 "  --node NAME         only this node's events\n"
                 "  --kind KIND         finding, transition, action or held\n"
                 "  --rule RULE         only events of this rule (xid, ...)\n"
                 "  --since DURATION    only the last DURATION: 90s, 10m, 2h, 1d\n"
                 "  --limit N           at most N events (1..10000; the server's default 100)\n");
    usage_common(out);
}

void hn_usage_drain(FILE *out)
{
    fprintf(out, "usage: houston drain NODE --reason TEXT [--user NAME] [options]\n\n"
                 "Drains NODE now (an operator's drain bypasses the blast-radius guard) and\n"
                 "prints its new state.\n\noptions:\n"
                 "  --reason TEXT       why (required; shown as the Slurm drain reason)\n");
    usage_write(out);
    usage_common(out);
}

void hn_usage_resume(FILE *out)
{
    fprintf(out, "usage: houston resume NODE [--user NAME] [options]\n\n"
                 "Puts NODE back to ready (in Slurm too, if houston drained it) and prints its\n"
                 "new state.\n\noptions:\n");
    usage_write(out);
    usage_common(out);
}

void hn_usage_approve(FILE *out)
{
    fprintf(out, "usage: houston approve NODE [--user NAME] [options]\n\n"
                 "Carries out the removal of NODE that the blast-radius guard holds, and prints\n"
                 "its new state.\n\noptions:\n");
    usage_write(out);
    usage_common(out);
}

/* ---- verbs ---- */

/* ---- jobs ---- */

/* A fraction as a percentage, "-" when unknown. */
static void pct(double v, char *out, size_t size)
{
    if (isfinite(v) && fabs(v) < 1e6)
        snprintf(out, size, "%.1f%%", v * 100);
    else
        snprintf(out, size, "-");
}

/* A step time in seconds: three digits, but whole seconds from 1,000 s on (not "1.23e+03"). */
static void step_text(double v, char *out, size_t size)
{
    if (!isfinite(v))
        snprintf(out, size, "-");
    else
        snprintf(out, size, v < 999.5 ? "%.3g" : "%.0f", v);
}

static const char *const job_headers[] = {"JOB", "STATE", "RANKS", "STEP",       "STEP_S",
                                          "MFU", "ETTR",  "EMFU",  "LOST_GPU_H", "STRAGGLER"};

/* Lost GPU-hours by cause, as "failure 1.20, hang 0.30": causes that round to 0.00 left out
 * (one that showed "0.00" looked lost and was not), one the server does not know (null) as
 * "-". */
static void lost_text(const json_t *lost, char *out, size_t size)
{
    size_t len = 0;
    const char *key;
    json_t *v;
    out[0] = '\0';
    json_object_foreach((json_t *)lost, key, v)
    {
        double h = json_number_value(v);
        int known = json_is_number(v);
        if ((known && !(h >= 0.005)) || len >= size)
            continue;
        len +=
            (size_t)(known ? snprintf(out + len, size - len, "%s%s %.2f", len ? ", " : "", key, h)
                           : snprintf(out + len, size - len, "%s%s -", len ? ", " : "", key));
    }
    if (!out[0])
        snprintf(out, size, "0");
}

static void job_row(struct hn_cli_table *t, const json_t *j)
{
    char ranks[24], step[24], st[24], mfu[16], ettr[16], emfu[16], lost[160], strag[128];
    /* One job's view (GET /v1/jobs/ID) has the ranks' array under "ranks" and their count
     * under "rank_count"; the list has the count under "ranks". */
    double v =
        json_is_array(json_object_get(j, "ranks")) ? jnum(j, "rank_count") : jnum(j, "ranks");
    snprintf(ranks, sizeof(ranks), isfinite(v) ? "%.0f" : "-", v);
    v = jnum(j, "step");
    snprintf(step, sizeof(step), isfinite(v) ? "%.0f" : "-", v);
    step_text(jnum(j, "step_seconds"), st, sizeof(st));
    pct(jnum(j, "mfu"), mfu, sizeof(mfu));
    pct(jnum(j, "ettr"), ettr, sizeof(ettr));
    pct(jnum(j, "effective_mfu"), emfu, sizeof(emfu));
    const json_t *l = json_object_get(j, "lost_gpu_hours");
    if (json_is_object(l))
        lost_text(l, lost, sizeof(lost));
    else
        snprintf(lost, sizeof(lost), "-");
    const json_t *s = json_object_get(j, "straggler");
    if (json_is_object(s))
        snprintf(strag, sizeof(strag), "rank %.0f on %s, +%.0f%%", jnum(s, "rank"),
                 jstr_or_dash(s, "node"), jnum(s, "slowdown") * 100);
    else
        snprintf(strag, sizeof(strag), "-");
    const char *row[] = {jstr_or_dash(j, "id"),
                         jstr_or_dash(j, "state"),
                         ranks,
                         step,
                         st,
                         mfu,
                         ettr,
                         emfu,
                         lost,
                         strag};
    hn_cli_table_add(t, row);
}

int hn_cli_jobs_render(const char *json, FILE *out, char *err, size_t errsize)
{
    json_t *root = load_reply(json, "jobs", err, errsize);
    if (!root)
        return -EBADMSG;
    struct hn_cli_table t;
    hn_cli_table_init(&t, HN_ARRAY_LEN(job_headers), job_headers, NULL);
    size_t i;
    json_t *j;
    const json_t *jobs = json_object_get(root, "jobs");
    for (i = 0; i < json_array_size(jobs); i++) {
        j = json_array_get(jobs, i);
        job_row(&t, j);
    }
    if (t.nrows == 0)
        fprintf(out, "no jobs have reported steps\n");
    else
        hn_cli_table_print(&t, out);
    hn_cli_table_fini(&t);
    json_decref(root);
    return 0;
}

/* A job's history (the API's "series": time, MFU, ETTR, step time), at most HISTORY_ROWS
 * points spread evenly over it, the first and the latest included. */
#define HISTORY_ROWS 12
static void history_print(const json_t *series, FILE *out)
{
    size_t n = json_is_array(series) ? json_array_size(series) : 0;
    if (n == 0)
        return;
    static const char *const headers[] = {"TIME", "MFU", "ETTR", "STEP_S"};
    struct hn_cli_table t;
    hn_cli_table_init(&t, HN_ARRAY_LEN(headers), headers, NULL);
    size_t rows = n < HISTORY_ROWS ? n : HISTORY_ROWS;
    for (size_t k = 0; k < rows; k++) {
        size_t i = rows == 1 ? n - 1 : k * (n - 1) / (rows - 1);
        const json_t *p = json_array_get(series, i);
        char when[32], mfu[16], ettr[16], step[24];
        hn_cli_format_time(jnum(p, "time"), when, sizeof(when));
        pct(jnum(p, "mfu"), mfu, sizeof(mfu));
        pct(jnum(p, "ettr"), ettr, sizeof(ettr));
        step_text(jnum(p, "step_seconds"), step, sizeof(step));
        const char *row[] = {when, mfu, ettr, step};
        hn_cli_table_add(&t, row);
    }
    fprintf(out, "\nhistory (%zu of %zu points):\n", rows, n);
    hn_cli_table_print(&t, out);
    hn_cli_table_fini(&t);
}

int hn_cli_job_render(const char *json, FILE *out, char *err, size_t errsize)
{
    json_t *root = json_loads(json, 0, NULL);
    json_t *j = root ? json_object_get(root, "job") : NULL;
    if (!json_is_object(j)) {
        snprintf(err, errsize, "reply has no \"job\" object");
        json_decref(root);
        return -EBADMSG;
    }
    struct hn_cli_table t;
    hn_cli_table_init(&t, HN_ARRAY_LEN(job_headers), job_headers, NULL);
    job_row(&t, j);
    hn_cli_table_print(&t, out);
    hn_cli_table_fini(&t);
    const char *plan = jstr(j, "plan");
    if (plan && plan[0])
        fprintf(out, "\nstraggler policy: %s\n", plan);
    char first[32], last[32];
    hn_cli_format_time(jnum(j, "first_seen"), first, sizeof(first));
    hn_cli_format_time(jnum(j, "last_report"), last, sizeof(last));
    double ckpt = jnum(j, "checkpoint");
    char ckpt_text[48] = "no checkpoint reported";
    if (ckpt >= 0)
        snprintf(ckpt_text, sizeof(ckpt_text), "last checkpoint step %.0f", ckpt);
    fprintf(out,
            "\nfirst report %s, last %s; productive %.0f s of %.0f s wall; %.0f "
            "interruption(s); %s\n",
            first, last, jnum(j, "productive_s"), jnum(j, "wall_s"), jnum(j, "interruptions"),
            ckpt_text);
    double every = jnum(j, "straggler_every"), late = jnum(j, "late_reports");
    if (every > 1)
        fprintf(out,
                "straggler detector: one step in %.0f (the job steps faster than its agents "
                "forward reports); %.0f reports came too late for it\n",
                every, isnan(late) ? 0 : late);
    double untimed = jnum(j, "untimed_reports");
    if (untimed > 0)
        fprintf(out,
                "%.0f reports had no compute time (comm= at least dur=): left out of the "
                "straggler detector\n",
                untimed);
    double took = jnum(j, "restart_s");
    if (!isnan(took))
        fprintf(out,
                "its restarts took %.0f s (median of up to its last 5, requeue to first step)\n",
                took);
    const char *state = jstr(j, "state");
    int over = state && strcmp(state, "ended") == 0;
    double starts = over ? 0 : jnum(j, "hangs_at_start");
    if (starts > 0)
        fprintf(out, "hung at start %.0f time(s) in a row since its last step%s\n", starts,
                starts > 2 ? ": houston no longer requeues it" : "");
    if (!over && json_is_true(json_object_get(j, "requeue_failed")))
        fprintf(out, "houston could not requeue it (its events say why): it runs on where it "
                     "was; cancel or requeue it by hand\n");
    double limit = jnum(j, "hang_limit_s"), idle = jnum(j, "no_progress_s");
    if (!isnan(limit)) {
        fprintf(out, "hang after %.0f s without progress (longest pause it came back from: %.0f s)",
                limit, jnum(j, "longest_pause_s"));
        if (!isnan(idle))
            fprintf(out, "; none for %.0f s now", idle);
        fputc('\n', out);
    }
    const json_t *pause = json_object_get(j, "pause");
    if (json_is_object(pause))
        fprintf(out, "paused on purpose (%s) after step %.0f, for %.0f s now\n",
                jstr(pause, "kind") ? jstr(pause, "kind") : "?", jnum(pause, "after_step"),
                jnum(pause, "for_s"));
    history_print(json_object_get(j, "series"), out);
    const json_t *ev = json_object_get(j, "events");
    if (json_is_array(ev) && json_array_size(ev) > 0) {
        fprintf(out, "\nevents:\n");
        events_print(ev, SIZE_MAX, out);
    }
    json_decref(root);
    return 0;
}

static int run_jobs(struct cli *c)
{
    struct hn_client_reply r;
    hn_client_reply_init(&r);
    if (c->o.target && check_len(c, "JOB", c->o.target, HN_JOB_ID_SIZE - 1) != 0) {
        hn_client_reply_fini(&r);
        return HN_CLI_USAGE;
    }
    /* A job id is any printable ASCII but '=' (HOUSTON_JOB_ID outside Slurm: "llama/7b#2"),
     * escaped as the server unescapes it; ids with '/', '?', '#', '%' or '&' were refused. */
    struct hn_buf path;
    hn_buf_init(&path, 1024);
    (void)hn_buf_puts(&path, "/v1/jobs");
    if (c->o.target) {
        (void)hn_buf_puts(&path, "/");
        (void)hn_client_escape(&path, c->o.target);
    }
    int rc = call(c, "GET", path.data, NULL, &r);
    hn_buf_fini(&path);
    if (rc == 0 && c->o.json) {
        rc = print_json(c, &r, c->o.target ? NULL : "jobs"); /* one job: {"job": {...}} */
    } else if (rc == 0) {
        char why[256];
        int bad = c->o.target ? hn_cli_job_render(r.body.data, c->out, why, sizeof(why))
                              : hn_cli_jobs_render(r.body.data, c->out, why, sizeof(why));
        if (bad)
            rc = bad_response(c, r.url, why);
    }
    hn_client_reply_fini(&r);
    return rc;
}

void hn_usage_jobs(FILE *out)
{
    fprintf(out,
            "usage: houston jobs [JOB] [options]\n\n"
            "Lists the training jobs that report steps (docs/jobs.md): JOB STATE RANKS STEP\n"
            "STEP_S (typical step time) MFU ETTR EMFU (effective MFU = MFU x ETTR) LOST_GPU_H\n"
            "(GPU-hours lost, by cause: failure, straggler, hang, operator, other) STRAGGLER.\n"
            "With JOB: that job, its straggler policy and its events.\n\noptions:\n");
    usage_common(out);
}

static const struct cli_verb cli_verbs[] = {
    {"jobs", O_OPTARG, run_jobs, hn_usage_jobs},
    {"status", 0, run_status, hn_usage_status},
    {"nodes", O_STATE, run_nodes, hn_usage_nodes},
    {"events", O_NODE | O_KIND | O_RULE | O_SINCE | O_LIMIT, run_events, hn_usage_events},
    {"drain", O_TARGET | O_REASON | O_USER | O_TOKEN, run_write, hn_usage_drain},
    {"resume", O_TARGET | O_USER | O_TOKEN, run_write, hn_usage_resume},
    {"approve", O_TARGET | O_USER | O_TOKEN, run_write, hn_usage_approve},
};

int hn_cli_run(const char *verb, int argc, char **argv, FILE *out, FILE *err)
{
    const struct cli_verb *v = NULL;
    for (size_t i = 0; i < HN_ARRAY_LEN(cli_verbs); i++) {
        if (strcmp(cli_verbs[i].name, verb) == 0)
            v = &cli_verbs[i];
    }
    if (!v) {
        fprintf(err, "houston: unknown verb '%s'\n", verb);
        return HN_CLI_USAGE;
    }
    struct cli *c = xcalloc(1, sizeof(*c));
    c->verb = v->name;
    c->out = out;
    c->err = err;
    int pr = parse(c, v, argc, argv);
    int rc = pr > 0 ? HN_CLI_OK : HN_CLI_USAGE;
    if (pr == 0) {
        c->client.server = c->o.server;
        c->client.timeout_s = c->o.timeout_s;
        rc = v->run(c);
    }
    fflush(out);
    free(c);
    return rc;
}

int hn_cmd_status(int argc, char **argv)
{
    return hn_cli_run("status", argc, argv, stdout, stderr);
}

int hn_cmd_nodes(int argc, char **argv)
{
    return hn_cli_run("nodes", argc, argv, stdout, stderr);
}

int hn_cmd_events(int argc, char **argv)
{
    return hn_cli_run("events", argc, argv, stdout, stderr);
}

int hn_cmd_drain(int argc, char **argv)
{
    return hn_cli_run("drain", argc, argv, stdout, stderr);
}

int hn_cmd_resume(int argc, char **argv)
{
    return hn_cli_run("resume", argc, argv, stdout, stderr);
}

int hn_cmd_jobs(int argc, char **argv)
{
    return hn_cli_run("jobs", argc, argv, stdout, stderr);
}

int hn_cmd_approve(int argc, char **argv)
{
    return hn_cli_run("approve", argc, argv, stdout, stderr);
}
