/*
 * test_cli.c - the operator verbs (cli/cli.h) and their HTTP client (cli/client.h): duration
 * parsing and age formatting, the table renderer, the JSON-to-text renderers on the replies
 * of docs/api.md, command-line errors (exit 2), and whole verbs against a real HTTP server
 * (common/http.h) on 127.0.0.1 serving canned replies: tables, --json, the write verbs'
 * token and body, the server's refusals (exit 1), bad and huge replies, a timeout and a
 * closed port (exit 3).
 */
#include "testutil.h"

#include "cli/cli.h"
#include "cli/client.h"
#include "common/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

/* ---- canned replies (docs/api.md, plus nodes and events of each kind) ---- */

#define NOW 1764496300.0

static const char nodes_json[] =
    "{\"nodes\": [{\"name\": \"n1\", \"rack\": \"r1\", \"sku\": \"H100\", \"state\": \"ready\","
    " \"gpus_expected\": 8, \"gpus_seen\": 8, \"drained_by_houston\": false,"
    " \"held\": false, \"since\": 1764496000.0, \"reason\": \"\", \"last_seen\": 1764496123.4},"
    " {\"name\": \"n2\", \"rack\": \"r1\", \"state\": \"draining\", \"gpus_expected\": 8,"
    " \"gpus_seen\": 7, \"held\": false, \"since\": 1764488800.0, \"reason\": \"xid 79"
    " (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS) on GPU 3 and then some more text\"},"
    " {\"name\": \"n10\", \"rack\": \"r2\", \"state\": \"suspect\", \"gpus_expected\": 8,"
    " \"gpus_seen\": 8, \"held\": true, \"since\": 1764300000, \"reason\": \"guard\"}]}";

static const char nodes_table[] =
    "NAME  RACK  STATE           GPUS  SINCE  REASON\n"
    "n1    r1    ready           8/8   5m\n"
    "n2    r1    draining        7/8   2h     xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS) "
    "on GPU...\n"
    "n10   r2    suspect (held)  8/8   2d     guard\n";

static const char events_json[] =
    "{\"events\": [{\"id\": 42, \"time\": 1764496200.1, \"kind\": \"transition\", \"node\": \"n2\","
    " \"rule\": \"xid\", \"severity\": \"fatal\", \"gpu\": 3,"
    " \"detail\": \"xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS) on GPU 3\","
    " \"evidence\": \"xid=79 action=RESTART_BM catalog=yes\","
    " \"from\": \"ready\", \"to\": \"draining\", \"actor\": \"xid\"},"
    " {\"id\": 41, \"time\": 1764496100, \"kind\": \"action\", \"node\": \"n2\", \"rule\": null,"
    " \"action\": \"drain\", \"job\": null, \"reason\": \"houston: xid 79\", \"action_id\": 7,"
    " \"done\": null},"
    " {\"id\": 40, \"time\": 1764496000, \"kind\": \"finding\", \"node\": \"n2\", \"rule\": "
    "\"xid\","
    " \"detail\": \"xid 79 on GPU 3\", \"evidence\": \"not shown for findings\"}]}";

static const char events_table[] =
    "TIME                 NODE  KIND        RULE  DETAIL\n"
    "2025-11-30 09:50:00  n2    transition  xid   ready -> draining by xid: xid 79 "
    "(ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS) on GPU 3\n"
    "    evidence: xid=79 action=RESTART_BM catalog=yes\n"
    "2025-11-30 09:48:20  n2    action      -     drain (pending): houston: xid 79\n"
    "2025-11-30 09:46:40  n2    finding     xid   xid 79 on GPU 3\n";

static const char racks_json[] =
    "{\"racks\": [{\"name\": \"r1\", \"nodes\": 18, \"in_production\": 17, \"degraded\": false},"
    " {\"name\": \"r2\", \"nodes\": 18, \"in_production\": 14, \"degraded\": true}]}";

static const char node_reply[] =
    "{\"node\": {\"name\": \"n2\", \"rack\": \"r1\", \"state\": \"draining\", \"held\": false,"
    " \"since\": 1764496300, \"reason\": \"operator alice: bad fan\"}}";

/* ---- capturing a renderer's or a verb's output ---- */

struct capture {
    FILE *f;
    char *text;
    size_t len;
};

static void cap_open(struct capture *c)
{
    c->text = NULL;
    c->len = 0;
    c->f = open_memstream(&c->text, &c->len);
    assert_non_null(c->f);
}

/* Closes the stream; the text stays in c->text until cap_free. */
static const char *cap_close(struct capture *c)
{
    assert_int_equal(fclose(c->f), 0);
    c->f = NULL;
    return c->text;
}

static void cap_free(struct capture *c)
{
    free(c->text);
    c->text = NULL;
}

struct result {
    int rc;
    char *out;
    char *err;
};

/* Runs verb with the arguments that follow (NULL-terminated), capturing out and err. */
static struct result run_verb(const char *verb, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = xstrdup(verb);
    va_list ap;
    va_start(ap, verb);
    for (const char *a; (a = va_arg(ap, const char *));) {
        assert_true(argc < 31);
        argv[argc++] = xstrdup(a);
    }
    va_end(ap);
    argv[argc] = NULL;
    struct capture out, err;
    cap_open(&out);
    cap_open(&err);
    struct result r;
    r.rc = hn_cli_run(verb, argc, argv, out.f, err.f);
    r.out = (char *)cap_close(&out);
    r.err = (char *)cap_close(&err);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return r;
}

static void result_free(struct result *r)
{
    free(r->out);
    free(r->err);
}

/* ---- durations and times ---- */

static void test_duration(void **unused)
{
    (void)unused;
    double s = -1;
    assert_int_equal(hn_cli_parse_duration("90", &s), 0);
    assert_true(s == 90);
    assert_int_equal(hn_cli_parse_duration("90s", &s), 0);
    assert_true(s == 90);
    assert_int_equal(hn_cli_parse_duration("10m", &s), 0);
    assert_true(s == 600);
    assert_int_equal(hn_cli_parse_duration("2h", &s), 0);
    assert_true(s == 7200);
    assert_int_equal(hn_cli_parse_duration("1.5d", &s), 0);
    assert_true(s == 1.5 * 86400);
    assert_int_equal(hn_cli_parse_duration("0.5m", &s), 0);
    assert_true(s == 30);

    static const char *const bad[] = {"",    "m",    "0",   "0m",     "-5m",  "5x", "5 m", " 5m",
                                      "5m ", "infh", "nan", "1e300d", "10mm", "h2", "5.m"};
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        s = -1;
        if (hn_cli_parse_duration(bad[i], &s) != -EINVAL)
            fail_msg("'%s' was accepted", bad[i]);
        assert_true(s == -1);
    }
    /* Longer than any duration (64 bytes): refused, not cut. */
    char longer[80];
    memset(longer, '9', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_int_equal(hn_cli_parse_duration(longer, &s), -EINVAL);
}

static void test_age(void **unused)
{
    (void)unused;
    static const struct {
        double s;
        const char *want;
    } cases[] = {
        {0, "0s"},    {59.9, "59s"}, {60, "1m"},     {300, "5m"},     {3599, "59m"},
        {3600, "1h"}, {7500, "2h"},  {86399, "23h"}, {86400, "1d"},   {196300, "2d"},
        {-30, "0s"},  {NAN, "-"},    {1e20, "-"},    {INFINITY, "-"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        char out[16];
        hn_cli_format_age(cases[i].s, out, sizeof(out));
        assert_string_equal(out, cases[i].want);
    }
    char out[32];
    hn_cli_format_time(1764496200.1, out, sizeof(out));
    assert_string_equal(out, "2025-11-30 09:50:00");
    hn_cli_format_time(NAN, out, sizeof(out));
    assert_string_equal(out, "-");
    hn_cli_format_time(-1, out, sizeof(out));
    assert_string_equal(out, "-");
    hn_cli_format_time(1e300, out, sizeof(out));
    assert_string_equal(out, "-");
}

/* ---- the table ---- */

static void test_table(void **unused)
{
    (void)unused;
    static const char *const headers[] = {"A", "LONGER", "C"};
    static const size_t maxw[] = {0, 8, 6};
    struct hn_cli_table t;
    hn_cli_table_init(&t, 3, headers, maxw);
    hn_cli_table_note(&t, "ignored: no row yet");
    const char *r1[] = {"x", "yy", "zzz"};
    const char *r2[] = {"wide cell", "", ""};
    const char *r3[] = {"tab\there", "0123456789", "\xc3\xa9t\xc3\xa9s"}; /* "étés": 4 wide */
    /* ESC, then a C1 CSI (U+009B, octal so that "2J" is not read as more hex), then a cut. */
    const char *r4[] = {"esc\x1b[31m", "\302\2332J", "abcdefgh"};
    hn_cli_table_add(&t, r1);
    hn_cli_table_note(&t, "a note\nwith a newline");
    hn_cli_table_add(&t, r2);
    hn_cli_table_add(&t, r3);
    hn_cli_table_add(&t, r4);
    struct capture c;
    cap_open(&c);
    hn_cli_table_print(&t, c.f);
    assert_string_equal(cap_close(&c), "A          LONGER    C\n"
                                       "x          yy        zzz\n"
                                       "    a note with a newline\n"
                                       "wide cell\n"
                                       "tab here   01234...  \xc3\xa9t\xc3\xa9s\n"
                                       "esc [31m    2J       abc...\n");
    cap_free(&c);
    hn_cli_table_fini(&t);

    /* Tiny maxima cut without dots; a cut never splits a UTF-8 sequence. */
    static const size_t tiny[] = {2, 3, 4};
    hn_cli_table_init(&t, 3, headers, tiny);
    const char *r5[] = {"abc", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
                        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"};
    hn_cli_table_add(&t, r5);
    cap_open(&c);
    hn_cli_table_print(&t, c.f);
    assert_string_equal(cap_close(&c), "A   LONGER  C\n"
                                       "ab  \xc3\xa9\xc3\xa9\xc3\xa9     \xc3\xa9...\n");
    cap_free(&c);
    hn_cli_table_fini(&t);

    /* An empty table prints its header; many rows grow the arrays. */
    hn_cli_table_init(&t, 3, headers, NULL);
    for (int i = 0; i < 100; i++)
        hn_cli_table_add(&t, r1);
    cap_open(&c);
    hn_cli_table_print(&t, c.f);
    assert_int_equal(tu_count(cap_close(&c), "\n"), 101);
    cap_free(&c);
    hn_cli_table_fini(&t);
}

/* ---- renderers ---- */

static void test_nodes_render(void **unused)
{
    (void)unused;
    char err[256] = "";
    struct capture c;
    cap_open(&c);
    assert_int_equal(hn_cli_nodes_render(nodes_json, NULL, NOW, c.f, err, sizeof(err)), 0);
    assert_string_equal(cap_close(&c), nodes_table);
    cap_free(&c);

    cap_open(&c);
    assert_int_equal(hn_cli_nodes_render(nodes_json, "suspect", NOW, c.f, err, sizeof(err)), 0);
    assert_string_equal(cap_close(&c), "NAME  RACK  STATE           GPUS  SINCE  REASON\n"
                                       "n10   r2    suspect (held)  8/8   2d     guard\n");
    cap_free(&c);

    cap_open(&c);
    assert_int_equal(hn_cli_nodes_render(nodes_json, "retired", NOW, c.f, err, sizeof(err)), 0);
    assert_string_equal(cap_close(&c), "no nodes in state retired\n");
    cap_free(&c);

    cap_open(&c);
    assert_int_equal(hn_cli_nodes_render("{\"nodes\": []}", NULL, NOW, c.f, err, sizeof(err)), 0);
    assert_string_equal(cap_close(&c), "no nodes\n");
    cap_free(&c);

    /* Fields of the wrong type, missing or absurd print as "-"; nothing fails. */
    cap_open(&c);
    assert_int_equal(hn_cli_nodes_render("{\"nodes\": [{\"name\": 5, \"state\": null, \"since\":"
                                         " \"x\", \"gpus_seen\": \"8\", \"reason\": [1]},"
                                         " {\"gpus_seen\": 1e300, \"gpus_expected\": 8,"
                                         " \"since\": -1e300}], \"extra\": {}}",
                                         NULL, NOW, c.f, err, sizeof(err)),
                     0);
    assert_string_equal(cap_close(&c), "NAME  RACK  STATE  GPUS  SINCE  REASON\n"
                                       "-     -     -      -     -\n"
                                       "-     -     -      -     -\n");
    cap_free(&c);
}

static void test_jobs_render(void **unused)
{
    (void)unused;
    char err[256] = "";
    struct capture c;
    cap_open(&c);
    assert_int_equal(
        hn_cli_jobs_render(
            "{\"jobs\": [{\"id\": \"4242\", \"state\": \"running\", \"ranks\": 512,"
            " \"step\": 1200, \"step_seconds\": 2.9, \"mfu\": 0.4061, \"ettr\": 0.93,"
            " \"effective_mfu\": 0.3777, \"lost_gpu_hours\": {\"failure\": 21.3,"
            " \"straggler\": 1.25, \"hang\": 0}, \"straggler\": {\"rank\": 17,"
            " \"node\": \"gpu012\", \"slowdown\": 0.3}},"
            " {\"id\": \"7\", \"state\": \"ended\", \"ranks\": 1, \"step\": 5,"
            " \"step_seconds\": null, \"mfu\": null, \"ettr\": 1, \"effective_mfu\": null,"
            " \"lost_gpu_hours\": {\"failure\": 0}, \"straggler\": null}]}",
            c.f, err, sizeof(err)),
        0);
    assert_string_equal(
        cap_close(&c),
        "JOB   STATE    RANKS  STEP  STEP_S  MFU    ETTR    EMFU   LOST_GPU_H                     "
        "STRAGGLER\n"
        "4242  running  512    1200  2.9     40.6%  93.0%   37.8%  failure 21.30, straggler 1.25  "
        "rank 17 on gpu012, +30%\n"
        "7     ended    1      5     -       -      100.0%  -      0                              "
        "-\n");
    cap_free(&c);
    /* A cause that rounds to 0.00 is left out (it printed "failure 0.00"); one the server
     * does not know (null: not finite) is "-", not left out as if nothing was lost. */
    cap_open(&c);
    assert_int_equal(hn_cli_jobs_render("{\"jobs\": [{\"id\": \"8\", \"lost_gpu_hours\":"
                                        " {\"failure\": 0.0049, \"straggler\": 0.005,"
                                        " \"hang\": null, \"other\": 0}}]}",
                                        c.f, err, sizeof(err)),
                     0);
    assert_non_null(strstr(cap_close(&c), "  straggler 0.01, hang -  "));
    cap_free(&c);
    cap_open(&c);
    assert_int_equal(hn_cli_jobs_render("{\"jobs\": [{\"id\": \"8\", \"lost_gpu_hours\":"
                                        " {\"failure\": 0.0049}}]}",
                                        c.f, err, sizeof(err)),
                     0);
    assert_non_null(strstr(cap_close(&c), "  0  "));
    cap_free(&c);
    /* A step of 1,234.5 s reads as seconds, not "1.23e+03". */
    cap_open(&c);
    assert_int_equal(hn_cli_jobs_render("{\"jobs\": [{\"id\": \"9\", \"step_seconds\": 1234.5}]}",
                                        c.f, err, sizeof(err)),
                     0);
    assert_non_null(strstr(cap_close(&c), "  1234  "));
    cap_free(&c);
    cap_open(&c);
    assert_int_equal(hn_cli_jobs_render("{\"jobs\": []}", c.f, err, sizeof(err)), 0);
    assert_string_equal(cap_close(&c), "no jobs have reported steps\n");
    cap_free(&c);
    assert_int_equal(hn_cli_jobs_render("{\"jobs\": 3}", stdout, err, sizeof(err)), -EBADMSG);
    assert_int_equal(hn_cli_job_render("{\"jobs\": []}", stdout, err, sizeof(err)), -EBADMSG);
    /* One job: its hang limit, and how long it has gone without progress. */
    cap_open(&c);
    assert_int_equal(hn_cli_job_render("{\"job\": {\"id\": \"9\", \"state\": \"running\","
                                       " \"ranks\": 8, \"step\": 40, \"first_seen\": 0,"
                                       " \"last_report\": 80, \"productive_s\": 80,"
                                       " \"wall_s\": 90, \"interruptions\": 0,"
                                       " \"checkpoint\": 30, \"hang_limit_s\": 300,"
                                       " \"longest_pause_s\": 100, \"no_progress_s\": 12.4}}",
                                       c.f, err, sizeof(err)),
                     0);
    const char *text = cap_close(&c);
    assert_non_null(strstr(text, "\nhang after 300 s without progress (longest pause it came back "
                                 "from: 100 s); none for 12 s now\n"));
    assert_non_null(strstr(text, "; last checkpoint step 30\n"));
    assert_null(strstr(text, "history"));
    assert_null(strstr(text, "straggler detector"));
    assert_null(strstr(text, "at start"));
    assert_null(strstr(text, "could not requeue"));
    assert_null(strstr(text, "restarts took")); /* none measured: restart_s absent */
    cap_free(&c);
    /* What its restarts took, once measured (the straggler policy's restart cost). */
    cap_open(&c);
    assert_int_equal(hn_cli_job_render("{\"job\": {\"id\": \"9\", \"state\": \"running\","
                                       " \"ranks\": 8, \"restart_s\": 412.4}}",
                                       c.f, err, sizeof(err)),
                     0);
    assert_non_null(strstr(cap_close(&c), "\nits restarts took 412 s (median of up to its last 5, "
                                          "requeue to first step)\n"));
    cap_free(&c);
    /* Hung at start three times, left alone; a requeue that failed. */
    cap_open(&c);
    assert_int_equal(hn_cli_job_render("{\"job\": {\"id\": \"9\", \"state\": \"hung\","
                                       " \"ranks\": 8, \"hangs_at_start\": 3,"
                                       " \"requeue_failed\": true}}",
                                       c.f, err, sizeof(err)),
                     0);
    text = cap_close(&c);
    assert_non_null(strstr(text, "\nhung at start 3 time(s) in a row since its last step: houston "
                                 "no longer requeues it\nhouston could not requeue it (its events "
                                 "say why): it runs on where it was; cancel or requeue it by "
                                 "hand\n"));
    cap_free(&c);
    cap_open(&c); /* an ended job: nothing to do about it */
    assert_int_equal(hn_cli_job_render("{\"job\": {\"id\": \"9\", \"state\": \"ended\","
                                       " \"ranks\": 8, \"hangs_at_start\": 3,"
                                       " \"requeue_failed\": true}}",
                                       c.f, err, sizeof(err)),
                     0);
    text = cap_close(&c);
    assert_null(strstr(text, "at start"));
    assert_null(strstr(text, "could not requeue"));
    cap_free(&c);
    /* No checkpoint yet; the detector on every 4th step; MFU over time, 12 of 30 points
     * spread over the history, the first and the last included. */
    char job[4096];
    int at = snprintf(job, sizeof(job),
                      "{\"job\": {\"id\": \"9\", \"state\": \"running\", \"ranks\": 8,"
                      " \"checkpoint\": -1, \"straggler_every\": 4, \"late_reports\": 97,"
                      " \"untimed_reports\": 12,"
                      " \"series\": [");
    for (int i = 0; i < 30; i++)
        at += snprintf(job + at, sizeof(job) - (size_t)at,
                       "%s{\"time\": %d, \"mfu\": %.3f, \"ettr\": %s, \"step_seconds\": 2.5}",
                       i ? ", " : "", 1764496000 + 60 * i, 0.4 + 0.001 * i, i ? "0.99" : "null");
    snprintf(job + at, sizeof(job) - (size_t)at, "]}}");
    cap_open(&c);
    assert_int_equal(hn_cli_job_render(job, c.f, err, sizeof(err)), 0);
    text = cap_close(&c);
    assert_non_null(strstr(text, "; no checkpoint reported\n"));
    assert_non_null(strstr(text, "straggler detector: one step in 4 (the job steps faster than "
                                 "its agents forward reports); 97 reports came too late for it\n"
                                 "12 reports had no compute time (comm= at least dur=): left out "
                                 "of the straggler detector\n"));
    assert_non_null(strstr(text, "\nhistory (12 of 30 points):\n"
                                 "TIME                 MFU    ETTR   STEP_S\n"
                                 "2025-11-30 09:46:40  40.0%  -      2.5\n"));
    assert_non_null(strstr(text, "2025-11-30 10:15:40  42.9%  99.0%  2.5\n"));
    const char *hist = strstr(text, "history");
    int lines = 0;
    for (const char *q = hist; q && *q; q++)
        lines += *q == '\n';
    assert_int_equal(lines, 14); /* the title, the header, 12 points */
    cap_free(&c);
    assert_non_null(strstr(err, "\"job\""));
}

static void test_events_render(void **unused)
{
    (void)unused;
    char err[256] = "";
    struct capture c;
    cap_open(&c);
    assert_int_equal(hn_cli_events_render(events_json, c.f, err, sizeof(err)), 0);
    assert_string_equal(cap_close(&c), events_table);
    cap_free(&c);

    /* Each action outcome, a numeric job, a held event; an empty list. */
    cap_open(&c);
    assert_int_equal(
        hn_cli_events_render(
            "{\"events\": [{\"time\": 1764496000, \"kind\": \"action\", \"node\": \"n3\","
            " \"action\": \"requeue\", \"job\": 1234, \"done\": false, \"result\": \"scontrol"
            " exit 1\", \"reason\": \"houston: ib down\"},"
            " {\"time\": 1764496000, \"kind\": \"action\", \"node\": \"n3\", \"action\":"
            " \"resume\", \"job\": \"77_1\", \"done\": true, \"detail\": \"back\"},"
            " {\"time\": 1764496000, \"kind\": \"held\", \"node\": \"n4\", \"rule\": \"guard\","
            " \"detail\": \"rack r2 would fall to 15 of 18\"}]}",
            c.f, err, sizeof(err)),
        0);
    assert_string_equal(cap_close(&c),
                        "TIME                 NODE  KIND    RULE   DETAIL\n"
                        "2025-11-30 09:46:40  n3    action  -      requeue job 1234 (failed:"
                        " scontrol exit 1): houston: ib down\n"
                        "2025-11-30 09:46:40  n3    action  -      resume job 77_1 (done): back\n"
                        "2025-11-30 09:46:40  n4    held    guard  rack r2 would fall to 15 of"
                        " 18\n");
    cap_free(&c);

    cap_open(&c);
    assert_int_equal(hn_cli_events_render("{\"events\": []}", c.f, err, sizeof(err)), 0);
    assert_string_equal(cap_close(&c), "no events\n");
    cap_free(&c);
}

static void test_status_render(void **unused)
{
    (void)unused;
    char err[256] = "";
    struct capture c;
    cap_open(&c);
    assert_int_equal(
        hn_cli_status_render(nodes_json, racks_json, events_json, c.f, err, sizeof(err)), 0);
    const char *text = cap_close(&c);
    static const char head[] = "nodes     3\n"
                               "  ready             1\n"
                               "  suspect           1\n"
                               "  draining          1\n"
                               "held      1 waiting for `houston approve`: n10\n"
                               "racks     2, 1 degraded\n"
                               "  r2           14 of 18 nodes in production\n"
                               "\n"
                               "last events\n";
    assert_int_equal(strncmp(text, head, strlen(head)), 0);
    assert_string_equal(text + strlen(head), events_table);
    cap_free(&c);

    /* Only the newest five events; unknown states counted apart; many held nodes cut short. */
    struct hn_buf nodes, events;
    hn_buf_init(&nodes, 1 << 20);
    hn_buf_init(&events, 1 << 20);
    (void)hn_buf_puts(&nodes, "{\"nodes\": [{\"name\": \"x\", \"state\": \"martian\"}");
    for (int i = 0; i < 25; i++)
        (void)hn_buf_printf(&nodes, ", {\"name\": \"h%d\", \"state\": \"suspect\", \"held\": true}",
                            i);
    (void)hn_buf_puts(&nodes, "]}");
    (void)hn_buf_puts(&events, "{\"events\": [");
    for (int i = 0; i < 7; i++)
        (void)hn_buf_printf(&events,
                            "%s{\"time\": 1764496000, \"kind\": \"finding\", \"node\":"
                            " \"e%d\"}",
                            i ? ", " : "", i);
    (void)hn_buf_puts(&events, "]}");
    cap_open(&c);
    assert_int_equal(
        hn_cli_status_render(nodes.data, "{\"racks\": []}", events.data, c.f, err, sizeof(err)), 0);
    text = cap_close(&c);
    assert_non_null(strstr(text, "nodes     26\n  suspect          25\n  (other)           1\n"));
    assert_non_null(strstr(text, "held      25 waiting for `houston approve`: h0, h1, "));
    assert_non_null(strstr(text, ", h19 +5 more\nracks     0, 0 degraded\n"));
    assert_non_null(strstr(text, " e4 "));
    assert_null(strstr(text, " e5 "));
    cap_free(&c);
    hn_buf_fini(&nodes);
    hn_buf_fini(&events);

    /* Each of the three replies is checked and named when bad. */
    cap_open(&c);
    assert_int_equal(
        hn_cli_status_render(nodes_json, "{\"racks\": 1}", events_json, c.f, err, sizeof(err)),
        -EBADMSG);
    assert_string_equal(err, "/v1/racks: no \"racks\" array");
    assert_string_equal(cap_close(&c), "");
    cap_free(&c);
}

static void test_node_render(void **unused)
{
    (void)unused;
    char err[256] = "";
    struct capture c;
    cap_open(&c);
    assert_int_equal(hn_cli_node_render(node_reply, c.f, err, sizeof(err)), 0);
    assert_int_equal(hn_cli_node_render("{\"node\": {\"name\": \"n5\", \"state\": \"suspect\","
                                        " \"held\": true, \"reason\": \"\"}}",
                                        c.f, err, sizeof(err)),
                     0);
    assert_string_equal(cap_close(&c), "n2: draining (operator alice: bad fan)\n"
                                       "n5: suspect, removal held for approval\n");
    cap_free(&c);
    cap_open(&c);
    assert_int_equal(hn_cli_node_render("{\"name\": \"n5\"}", c.f, err, sizeof(err)), -EBADMSG);
    assert_string_equal(err, "no \"node\" object");
    assert_string_equal(cap_close(&c), "");
    cap_free(&c);
}

/* Malformed replies of every shape are refused with a reason and print nothing. */
static void test_bad_replies(void **unused)
{
    (void)unused;
    static const char *const bad[] = {
        "",
        "null",
        "[]",
        "\"nodes\"",
        "{\"nodes\": 5}",
        "{\"nodes\": {}}",
        "{\"nodes\": [1]}",
        "{\"nodes\": [{}, null]}",
        "{\"nodes\": [{\"name\": \"n1\"",
        "{\"nodes\": []} trailing",
        "{\"nodes\": [{\"name\": \"\xff\xfe\"}]}",
        "{\"nodes\": [{\"name\": \"a\\u0000b\"}]}",
        "<html>502 Bad Gateway</html>",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        char err[256] = "";
        struct capture c;
        cap_open(&c);
        assert_int_equal(hn_cli_nodes_render(bad[i], NULL, NOW, c.f, err, sizeof(err)), -EBADMSG);
        assert_int_equal(hn_cli_events_render(bad[i], c.f, err, sizeof(err)), -EBADMSG);
        assert_int_equal(hn_cli_node_render(bad[i], c.f, err, sizeof(err)), -EBADMSG);
        assert_true(err[0] != '\0');
        assert_string_equal(cap_close(&c), "");
        cap_free(&c);
    }
    assert_int_equal(hn_cli_nodes_render(NULL, NULL, NOW, stdout, (char[64]){0}, 64), -EBADMSG);

    /* Nesting far deeper than any reply: refused by the parser, no stack overflow. */
    struct hn_buf deep;
    hn_buf_init(&deep, 1 << 20);
    assert_int_equal(hn_buf_puts(&deep, "{\"nodes\": "), 0);
    for (int i = 0; i < 100000; i++)
        assert_int_equal(hn_buf_puts(&deep, "["), 0);
    for (int i = 0; i < 100000; i++)
        assert_int_equal(hn_buf_puts(&deep, "]"), 0);
    assert_int_equal(hn_buf_puts(&deep, "}"), 0);
    char err[256];
    assert_int_equal(hn_cli_nodes_render(deep.data, NULL, NOW, stdout, err, sizeof(err)), -EBADMSG);
    hn_buf_fini(&deep);
}

/* ---- command lines ---- */

/* Runs a verb that must fail with exit 2 before any request, saying want on stderr. */
static void expect_usage(const char *want, const char *verb, ...)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = xstrdup(verb);
    va_list ap;
    va_start(ap, verb);
    for (const char *a; (a = va_arg(ap, const char *));)
        argv[argc++] = xstrdup(a);
    va_end(ap);
    argv[argc] = NULL;
    struct capture out, err;
    cap_open(&out);
    cap_open(&err);
    int rc = hn_cli_run(verb, argc, argv, out.f, err.f);
    const char *o = cap_close(&out), *e = cap_close(&err);
    if (rc != 2 || !strstr(e, want) || o[0] != '\0')
        fail_msg("houston %s %s: rc %d, stderr '%s' (want '%s')", verb, argc > 1 ? argv[1] : "", rc,
                 e, want);
    cap_free(&out);
    cap_free(&err);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
}

static void test_args(void **unused)
{
    (void)unused;
    int port_fd;
    /* Requests would go to a closed port: a usage error must stop before any (exit 2, not 3). */
    char server[64];
    snprintf(server, sizeof(server), "http://127.0.0.1:%u", tu_closed_port(&port_fd));
    assert_int_equal(setenv("HOUSTON_SERVER", server, 1), 0);
    char tok[PATH_MAX];
    tu_write_in(tok, sizeof(tok), tu_tmpdir(), "token", "secret\n");

    expect_usage("unknown option '--bogus'", "nodes", "--bogus", NULL);
    expect_usage("unknown option '-x'", "status", "-x", NULL);
    /* A short option in a cluster is named by its letter, not by the argument before the
     * cluster (glibc's optind stays on a cluster until its last letter). */
    expect_usage("houston status: unknown option '-x' (try", "status", "-xh", NULL);
    expect_usage("houston nodes: unknown option '-x' (try", "nodes", "--json", "-xh", NULL);
    expect_usage("houston nodes: unknown option '-x' (try", "nodes", "--state=ready", "-x", NULL);
    expect_usage("unexpected argument 'extra'", "status", "extra", NULL);
    expect_usage("unexpected argument 'n2'", "drain", "n1", "n2", "--reason", "r", NULL);
    expect_usage("--state needs a value", "nodes", "--state", NULL);
    expect_usage("--state needs a value (the next argument is the option --json)", "nodes",
                 "--state", "--json", NULL);
    expect_usage("--json takes no value", "nodes", "--json=1", NULL);
    /* Only the verb's own options count: --since and --reason are other verbs'. */
    expect_usage("ambiguous option '--s' (--server, --state)\n", "nodes", "--s", "x", NULL);
    expect_usage("ambiguous option '--s' (--server, --since)\n", "events", "--s", "x", NULL);
    expect_usage("--kind: 'oops' is not one of", "events", "--r=x", "--kind", "oops", NULL);
    expect_usage("unknown option '--since'", "nodes", "--since", "1h", NULL);
    expect_usage("--state given twice ('ready', then 'new')\n", "nodes", "--state", "ready",
                 "--state=new", NULL);
    expect_usage("--state: 'redy'", "nodes", "--json", "--json", "--state", "redy", NULL);
    expect_usage("--state: 'redy' is not one of", "nodes", "--state", "redy", NULL);
    expect_usage("unknown option '--state'", "events", "--state", "ready", NULL);
    expect_usage("unknown option '--reason'", "nodes", "--reason", "x", NULL);
    expect_usage("unknown option '--node'", "drain", "n1", "--reason", "x", "--node", "n", NULL);
    expect_usage("--since: '10x' is not a duration", "events", "--since", "10x", NULL);
    expect_usage("--since: '-1h' is not a duration", "events", "--since=-1h", NULL);
    expect_usage("--limit: '0' is not 1..10000", "events", "--limit", "0", NULL);
    expect_usage("--limit: '10001' is not 1..10000", "events", "--limit", "10001", NULL);
    expect_usage("--limit: '5x' is not 1..10000", "events", "--limit", "5x", NULL);
    expect_usage("--kind: 'oops' is not one of", "events", "--kind", "oops", NULL);
    expect_usage("--node: must not be empty", "events", "--node", "", NULL);
    expect_usage("--timeout: 'soon' is not", "nodes", "--timeout", "soon", NULL);
    expect_usage("--timeout: '0' is not", "nodes", "--timeout", "0", NULL);
    expect_usage("--timeout: 'inf' is not", "nodes", "--timeout", "inf", NULL);
    expect_usage("bad server URL 'ftp://x'", "nodes", "--server", "ftp://x", NULL);
    expect_usage("bad server URL 'localhost:8080'", "nodes", "--server", "localhost:8080", NULL);
    expect_usage("bad server URL 'http://'", "nodes", "--server", "http://", NULL);
    expect_usage("bad server URL 'http://a/?x=1'", "nodes", "--server", "http://a/?x=1", NULL);
    expect_usage("which node?", "drain", "--reason", "r", NULL);
    expect_usage("which node?", "resume", NULL);
    expect_usage("--reason TEXT is required", "drain", "n1", NULL);
    expect_usage("cannot read the operator token file /nonexistent/token", "approve", "n1",
                 "--token-file", "/nonexistent/token", NULL);
    char empty[PATH_MAX], twoline[PATH_MAX];
    tu_write_in(empty, sizeof(empty), tu_tmpdir(), "empty", " \n");
    tu_write_in(twoline, sizeof(twoline), tu_tmpdir(), "twoline", "abc\ndef\n");
    expect_usage("is empty", "resume", "n1", "--token-file", empty, NULL);
    expect_usage("is not one line", "resume", "n1", "--token-file", twoline, NULL);
    assert_int_equal(setenv("HOUSTON_OPERATOR_TOKEN_FILE", empty, 1), 0);
    expect_usage("is empty", "resume", "n1", NULL);
    assert_int_equal(unsetenv("HOUSTON_OPERATOR_TOKEN_FILE"), 0);
    expect_usage("--user and --reason must be UTF-8", "drain", "n1", "--reason", "bad \xff",
                 "--token-file", tok, NULL);
    char big[2000];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    expect_usage("--reason: too long", "drain", "n1", "--reason", big, NULL);
    expect_usage("NODE: too long", "resume", big, NULL);
    expect_usage("unknown verb", "frobnicate", NULL);

    /* --help prints the verb's usage on out and exits 0, whatever else is on the line. */
    static const char *const verbs[] = {"status", "nodes", "events", "drain", "resume", "approve"};
    for (size_t i = 0; i < HN_ARRAY_LEN(verbs); i++) {
        struct result r = run_verb(verbs[i], "--bogus-later-ignored", NULL);
        assert_int_equal(r.rc, 2);
        result_free(&r);
        r = run_verb(verbs[i], "-h", "--bogus", NULL);
        assert_int_equal(r.rc, 0);
        char want[64];
        snprintf(want, sizeof(want), "usage: houston %s", verbs[i]);
        assert_non_null(strstr(r.out, want));
        assert_non_null(strstr(r.out, "--server URL"));
        assert_string_equal(r.err, "");
        result_free(&r);
    }
    assert_int_equal(unsetenv("HOUSTON_SERVER"), 0);
    close(port_fd);
}

/* ---- against a live server ---- */

struct srv {
    pthread_mutex_t lock;
    char last_query[512]; /* events: node|kind|rule|since|limit as received */
    char last_auth[256];
    char last_body[2048];
    char last_path[256];
};

static void reply_json(struct hn_http_reply *reply, int status, const char *json)
{
    reply->status = status;
    reply->content_type = "application/json";
    (void)hn_buf_puts(&reply->body, json);
}

static void h_nodes(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    reply_json(reply, 200, nodes_json);
}

static void h_racks(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    reply_json(reply, 200, racks_json);
}

static void h_events(void *ctx, const char *url, struct hn_http_reply *reply)
{
    struct srv *s = ctx;
    (void)url;
    const char *node = hn_http_arg(reply->req, "node"), *kind = hn_http_arg(reply->req, "kind");
    const char *rule = hn_http_arg(reply->req, "rule"), *since = hn_http_arg(reply->req, "since");
    const char *limit = hn_http_arg(reply->req, "limit");
    pthread_mutex_lock(&s->lock);
    snprintf(s->last_query, sizeof(s->last_query), "%s|%s|%s|%s|%s", node ? node : "",
             kind ? kind : "", rule ? rule : "", since ? since : "", limit ? limit : "");
    pthread_mutex_unlock(&s->lock);
    reply_json(reply, 200, events_json);
}

/* The write verbs: records what came, answers like the controller would. */
static void h_write(void *ctx, const char *url, struct hn_http_reply *reply)
{
    struct srv *s = ctx;
    const char *auth = hn_http_header(reply->req, "Authorization");
    pthread_mutex_lock(&s->lock);
    hn_strlcpy(s->last_auth, auth ? auth : "", sizeof(s->last_auth));
    hn_strlcpy(s->last_body, reply->req->body, sizeof(s->last_body));
    hn_strlcpy(s->last_path, url, sizeof(s->last_path));
    pthread_mutex_unlock(&s->lock);
    if (!auth || strcmp(auth, "Bearer secret") != 0)
        reply_json(reply, 401, "{\"error\": \"operator token required\"}");
    else if (strstr(url, "/approve"))
        reply_json(reply, 409, "{\"error\": \"nothing is held for n2\"}");
    else
        reply_json(reply, 200, node_reply);
}

static void h_malformed(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    reply_json(reply, 200, "{\"nodes\": [{\"name\": \"n1\", ");
}

static void h_huge(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    reply->status = 200;
    reply->content_type = "application/json";
    size_t n = HN_CLIENT_MAX_REPLY + 4096;
    assert_int_equal(hn_buf_reserve(&reply->body, n), 0);
    memset(reply->body.data, ' ', n);
    reply->body.len = n;
    reply->body.data[n] = '\0';
}

static void h_gateway(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    reply->status = 502;
    (void)hn_buf_puts(&reply->body, "Bad Gateway \x1b[2J from the proxy\nsecond line\n");
}

/* One job as GET /v1/jobs/ID gives it: the ranks' array, their count, no checkpoint yet. */
static const char job9_json[] =
    "{\"job\": {\"id\": \"9\", \"state\": \"running\", \"rank_count\": 128, \"step\": 40,"
    " \"checkpoint\": null, \"ranks\": [{\"rank\": 0, \"node\": \"n1\", \"gpu\": 0,"
    " \"seconds\": 1.1, \"ratio\": 1.0}]}}";

static void h_job9(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    reply_json(reply, 200, job9_json);
}

/* Answers once the test has seen the client give up (slow_release), or after 10 s. */
static atomic_int slow_release;

static void h_slow(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    for (int i = 0; i < 1000 && !atomic_load(&slow_release); i++)
        tu_sleep_ms(10);
    reply_json(reply, 200, nodes_json);
}

static const struct hn_http_route routes[] = {
    {"GET", "/v1/nodes", h_nodes, 0},
    {"GET", "/v1/racks", h_racks, 0},
    {"GET", "/v1/events", h_events, 0},
    {"POST", "/v1/nodes/n2/drain", h_write, 0},
    {"POST", "/v1/nodes/n2/resume", h_write, 0},
    {"POST", "/v1/nodes/n2/approve", h_write, 0},
    {"POST", "/v1/nodes/a/b c/resume", h_write, 0}, /* libmicrohttpd unescapes the path */
    {"GET", "/malformed/v1/nodes", h_malformed, 0},
    {"GET", "/huge/v1/nodes", h_huge, 0},
    {"GET", "/gateway/v1/nodes", h_gateway, 0},
    {"GET", "/slow/v1/nodes", h_slow, 0},
    {"GET", "/v1/jobs/9", h_job9, 0},
    {"GET", "/v1/jobs/llama/7b?#2%&x", h_job9, 0}, /* unescaped by libmicrohttpd */
};

static void test_live(void **unused)
{
    (void)unused;
    struct srv s;
    memset(&s, 0, sizeof(s));
    pthread_mutex_init(&s.lock, NULL);
    char err[256];
    struct hn_http *h =
        hn_http_start("127.0.0.1:0", routes, HN_ARRAY_LEN(routes), &s, err, sizeof(err));
    if (!h)
        fail_msg("%s", err);
    char url[64], bad[96];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/", hn_http_port(h)); /* '/' is dropped */
    char tok[PATH_MAX];
    tu_write_in(tok, sizeof(tok), tu_tmpdir(), "token", "  secret \n");

    /* nodes: the table (ages from the wall clock: only the fixed columns are compared). */
    struct result r = run_verb("nodes", "--server", url, NULL);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_int_equal(strncmp(r.out, "NAME  RACK  STATE           GPUS  SINCE", 38), 0);
    assert_non_null(strstr(r.out, "\nn10   r2    suspect (held)  8/8   "));
    assert_int_equal(tu_count(r.out, "\n"), 4);
    result_free(&r);

    /* The server from $HOUSTON_SERVER, --state, --json filtered and pretty-printed. */
    assert_int_equal(setenv("HOUSTON_SERVER", url, 1), 0);
    r = run_verb("nodes", "--state", "draining", "--json", NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "{\n  \"nodes\": [\n    {\n      \"name\": \"n2\",\n"));
    assert_null(strstr(r.out, "\"n1\""));
    assert_null(strstr(r.out, "\"n10\""));
    result_free(&r);
    assert_int_equal(unsetenv("HOUSTON_SERVER"), 0);

    /* One job: --json prints the server's document (before, it asked for a "job" array and
     * failed); the table counts its ranks from rank_count, not the ranks' array. */
    r = run_verb("jobs", "9", "--server", url, "--json", NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "\"rank_count\": 128"));
    result_free(&r);
    r = run_verb("jobs", "9", "--server", url, NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "\n9    running  128    40 "));
    assert_non_null(strstr(r.out, "; no checkpoint reported\n"));
    result_free(&r);
    /* A job id outside Slurm (HOUSTON_JOB_ID) may hold any printable ASCII but '=': it is
     * escaped in the path, where one with '/', '?', '#', '%' or '&' was refused as no job id. */
    r = run_verb("jobs", "llama/7b?#2%&x", "--server", url, NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "\n9    running  128    40 "));
    result_free(&r);

    /* events: the query as sent, the table as printed. */
    double before = hn_wall_s();
    r = run_verb("events", "--server", url, "--node", "n2", "--kind", "transition", "--rule",
                 "a&b=c d", "--since", "10m", "--limit", "50", NULL);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, events_table);
    pthread_mutex_lock(&s.lock);
    char *bar = strrchr(s.last_query, '|');
    assert_non_null(bar);
    assert_string_equal(bar, "|50");
    *bar = '\0';
    bar = strrchr(s.last_query, '|');
    double since = 0;
    assert_int_equal(hn_parse_double(bar + 1, &since), 0);
    assert_true(since >= before - 600 - 1 && since <= hn_wall_s() - 600 + 1);
    *bar = '\0';
    assert_string_equal(s.last_query, "n2|transition|a&b=c d");
    pthread_mutex_unlock(&s.lock);
    result_free(&r);

    r = run_verb("events", "--server", url, "--json", NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "\"evidence\": \"xid=79 action=RESTART_BM catalog=yes\""));
    result_free(&r);

    /* status: three requests, one summary; --json merges the three documents. */
    r = run_verb("status", "--server", url, NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "held      1 waiting for `houston approve`: n10\n"));
    assert_non_null(strstr(r.out, "  r2           14 of 18 nodes in production\n"));
    assert_non_null(strstr(r.out, "\nlast events\nTIME "));
    result_free(&r);
    r = run_verb("status", "--server", url, "--json", NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "\n  \"nodes\": ["));
    assert_non_null(strstr(r.out, "\n  \"racks\": ["));
    assert_non_null(strstr(r.out, "\n  \"events\": ["));
    result_free(&r);

    /* drain: the token, the body, the new state. */
    r = run_verb("drain", "n2", "--server", url, "--reason", "bad fan \"2\"", "--user", "alice",
                 "--token-file", tok, NULL);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "n2: draining (operator alice: bad fan)\n");
    pthread_mutex_lock(&s.lock);
    assert_string_equal(s.last_auth, "Bearer secret");
    assert_string_equal(s.last_path, "/v1/nodes/n2/drain");
    assert_non_null(strstr(s.last_body, "\"reason\":\"bad fan \\\"2\\\"\""));
    assert_non_null(strstr(s.last_body, "\"user\":\"alice\""));
    pthread_mutex_unlock(&s.lock);
    result_free(&r);

    /* resume: the user from $USER, the token file from the environment, the name escaped. */
    assert_int_equal(setenv("USER", "bob", 1), 0);
    assert_int_equal(setenv("HOUSTON_OPERATOR_TOKEN_FILE", tok, 1), 0);
    r = run_verb("resume", "a/b c", "--server", url, NULL);
    assert_int_equal(r.rc, 0);
    pthread_mutex_lock(&s.lock);
    assert_string_equal(s.last_body, "{\"user\":\"bob\"}");
    assert_string_equal(s.last_path, "/v1/nodes/a/b c/resume");
    pthread_mutex_unlock(&s.lock);
    result_free(&r);
    r = run_verb("resume", "n2", "--server", url, "--json", NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "{\n  \"node\": {\n    \"name\": \"n2\","));
    result_free(&r);
    assert_int_equal(unsetenv("HOUSTON_OPERATOR_TOKEN_FILE"), 0);

    /* The server says no: its message, exit 1. */
    r = run_verb("approve", "n2", "--server", url, "--token-file", tok, NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "/v1/nodes/n2/approve answered 409: nothing is held for n2\n"));
    result_free(&r);
    char wrong[PATH_MAX];
    tu_write_in(wrong, sizeof(wrong), tu_tmpdir(), "wrong", "guess\n");
    r = run_verb("drain", "n2", "--server", url, "--reason", "x", "--token-file", wrong, NULL);
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "answered 401: operator token required\n"));
    result_free(&r);
    r = run_verb("resume", "n9", "--server", url, "--token-file", tok, NULL);
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "/v1/nodes/n9/resume answered 404: not found\n"));
    result_free(&r);
    snprintf(bad, sizeof(bad), "%sgateway", url);
    r = run_verb("nodes", "--server", bad, NULL);
    assert_int_equal(r.rc, 1);
    assert_non_null(strstr(r.err, "answered 502: Bad Gateway  [2J from the proxy\n"));
    result_free(&r);

    /* Bad replies: exit 1, "bad response from". */
    snprintf(bad, sizeof(bad), "%smalformed", url);
    r = run_verb("nodes", "--server", bad, NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "houston nodes: bad response from http://127.0.0.1:"));
    assert_non_null(strstr(r.err, "/malformed/v1/nodes: not JSON"));
    result_free(&r);
    r = run_verb("nodes", "--server", bad, "--json", NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "bad response from"));
    result_free(&r);
    snprintf(bad, sizeof(bad), "%shuge", url);
    r = run_verb("nodes", "--server", bad, NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "/huge/v1/nodes: larger than 16 MiB\n"));
    result_free(&r);

    /* Too slow: exit 3 after --timeout, long before the server would answer (10 s). */
    snprintf(bad, sizeof(bad), "%sslow", url);
    uint64_t t0 = hn_mono_ns();
    r = run_verb("nodes", "--server", bad, "--timeout", "0.3", NULL);
    assert_int_equal(r.rc, 3);
    assert_true(hn_mono_ns() - t0 < 5000 * 1000000ull);
    atomic_store(&slow_release, 1);
    assert_non_null(strstr(r.err, "cannot reach http://127.0.0.1:"));
    assert_non_null(strstr(r.err, "/slow/v1/nodes: "));
    result_free(&r);

    hn_http_stop(h);
    pthread_mutex_destroy(&s.lock);
}

/* Nothing listens: exit 3, with the URL and libcurl's reason. */
static void test_unreachable(void **unused)
{
    (void)unused;
    int port_fd;
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", tu_closed_port(&port_fd));
    static const char *const verbs[] = {"status", "nodes", "events"};
    for (size_t i = 0; i < HN_ARRAY_LEN(verbs); i++) {
        struct result r = run_verb(verbs[i], "--server", url, NULL);
        assert_int_equal(r.rc, 3);
        assert_string_equal(r.out, "");
        char want[128];
        snprintf(want, sizeof(want), "houston %s: cannot reach %s/v1/", verbs[i], url);
        assert_non_null(strstr(r.err, want));
        assert_non_null(strstr(r.err, "onnect"));
        result_free(&r);
    }
    char tok[PATH_MAX];
    tu_write_in(tok, sizeof(tok), tu_tmpdir(), "token", "secret\n");
    struct result r =
        run_verb("drain", "n1", "--reason", "x", "--server", url, "--token-file", tok, NULL);
    assert_int_equal(r.rc, 3);
    result_free(&r);

    /* The client on its own: -EHOSTUNREACH, and the reply stays empty. */
    struct hn_client c = {url, 5, NULL};
    struct hn_client_reply reply;
    hn_client_reply_init(&reply);
    char err[512];
    assert_int_equal(hn_client_request(&c, "GET", "/v1/nodes", NULL, &reply, err, sizeof(err)),
                     -EHOSTUNREACH);
    assert_int_equal(reply.status, 0);
    assert_int_equal(hn_client_request(&c, "PUT", "/v1/nodes", NULL, &reply, err, sizeof(err)),
                     -EINVAL);
    assert_int_equal(hn_client_request(&c, "GET", "v1/nodes", NULL, &reply, err, sizeof(err)),
                     -EINVAL);
    c.token = "two\nlines";
    assert_int_equal(hn_client_request(&c, "GET", "/v1/nodes", NULL, &reply, err, sizeof(err)),
                     -EINVAL);
    hn_client_reply_fini(&reply);
    close(port_fd);
}

static void test_client_helpers(void **unused)
{
    (void)unused;
    struct hn_buf b;
    hn_buf_init(&b, 64);
    assert_int_equal(hn_client_escape(&b, "Az09-._~ /?&=%\xc3\xa9"), 0);
    assert_string_equal(b.data, "Az09-._~%20%2F%3F%26%3D%25%C3%A9");
    hn_buf_reset(&b);
    assert_int_equal(hn_client_escape(&b, "////////////////////////////"), -ENOSPC);
    hn_buf_fini(&b);

    char ok1[] = "http://h:1//", ok2[] = "HTTPS://h.example/houston/", ok3[] = "http://[::1]:80";
    assert_int_equal(hn_client_check_server(ok1), 0);
    assert_string_equal(ok1, "http://h:1");
    assert_int_equal(hn_client_check_server(ok2), 0);
    assert_string_equal(ok2, "HTTPS://h.example/houston");
    assert_int_equal(hn_client_check_server(ok3), 0);
    char bad1[] = "http:///x", bad2[] = "file:///etc/passwd", bad3[] = "http://a b",
         bad4[] = "http://a#f", bad5[] = "http://a\r\nHost: b", bad6[] = "";
    char *bad[] = {bad1, bad2, bad3, bad4, bad5, bad6};
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++)
        assert_int_equal(hn_client_check_server(bad[i]), -EINVAL);
}

int main(void)
{
    /* Ages and times are compared in UTC; requests to 127.0.0.1 must not go to a proxy. */
    setenv("TZ", "UTC", 1);
    tzset();
    static const char *const proxies[] = {"http_proxy",  "HTTP_PROXY", "https_proxy",
                                          "HTTPS_PROXY", "all_proxy",  "ALL_PROXY"};
    for (size_t i = 0; i < HN_ARRAY_LEN(proxies); i++)
        unsetenv(proxies[i]);
    unsetenv("HOUSTON_SERVER");
    unsetenv("HOUSTON_OPERATOR_TOKEN_FILE");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),      cmocka_unit_test(test_age),
        cmocka_unit_test(test_table),         cmocka_unit_test(test_nodes_render),
        cmocka_unit_test(test_events_render), cmocka_unit_test(test_status_render),
        cmocka_unit_test(test_node_render),   cmocka_unit_test(test_bad_replies),
        cmocka_unit_test(test_args),          cmocka_unit_test(test_live),
        cmocka_unit_test(test_unreachable),   cmocka_unit_test(test_client_helpers),
        cmocka_unit_test(test_jobs_render),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
