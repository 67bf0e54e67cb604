/*
 * test_slurm.c - the scheduler backends: parsing real `scontrol show node` outputs (fixtures in
 * tests/fixtures/slurm, expected parses in show-node-expected.tsv) and squeue's job listings
 * (squeue-*.txt), the Slurm backend against a fake scontrol and a fake squeue written into a
 * temporary folder (argv, errors, hangs, floods, missing program), name and reason checks, the
 * backend table and the dry-run backend, its job listing included.
 */
#include "testutil.h"

#include "common/spawn.h"
#include "sched/sched.h"

#include <errno.h>
#include <stdarg.h>

static const char *fixture(const char *name)
{
    static char path[PATH_MAX];
    return tu_fixture(path, sizeof(path), "slurm/%s", name);
}

static int num(const char *s)
{
    int64_t v = -1;
    assert_int_equal(hn_parse_i64(s, 10, &v), 0);
    return (int)v;
}

static const char *dash(const char *s)
{
    return s[0] ? s : "-";
}

/* ---- parser ---- */

/* Every row of show-node-expected.tsv: parse FILE for NODE and compare each field. */
static void test_parse_expected(void **state)
{
    (void)state;
    char *table = tu_slurp(fixture("show-node-expected.tsv"), NULL);
    int rows = 0;
    char *next = NULL;

    for (char *line = table; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *f[10];
        int n = 0;
        for (char *p = line; p && n < 10; n++) {
            f[n] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = '\0';
        }
        if (n != 10) {
            fail_msg("%d fields in a row of show-node-expected.tsv, want 10", n);
            break;
        }

        char *text = tu_slurp(fixture(f[0]), NULL);
        struct hn_sched_node node;
        int rc = hn_slurm_parse_node(text, f[1], &node);
        printf("parse %-32s %-8s -> rc=%d state=%s drain=%d responding=%d reason='%s' "
               "user=%s time=%s\n",
               f[0], f[1], rc, dash(node.state), node.drain, node.responding, node.reason,
               dash(node.reason_user), dash(node.reason_time));
        if (strcmp(f[2], "ENOENT") == 0) {
            assert_int_equal(rc, -ENOENT);
        } else {
            assert_int_equal(rc, 0);
            assert_string_equal(node.name, f[1]);
            assert_string_equal(dash(node.state), f[3]);
            assert_int_equal(node.drain, num(f[4]));
            assert_int_equal(node.responding, num(f[5]));
            assert_string_equal(dash(node.reason), f[6]);
            assert_string_equal(dash(node.reason_user), f[7]);
            assert_string_equal(dash(node.reason_time), f[8]);
            assert_int_equal(hn_sched_drained_by_houston(&node), num(f[9]));
        }
        free(text);
        rows++;
    }
    assert_true(rows >= 16);
    free(table);
}

static void test_parse_edge_cases(void **state)
{
    (void)state;
    struct hn_sched_node n;

    /* No [user@time] suffix; brackets that are not one; trailing blanks and CRLF. */
    assert_int_equal(hn_slurm_parse_node("NodeName=a State=IDLE+DRAIN\r\n"
                                         "   Reason=houston: gpu [3] lost  \r\n",
                                         "a", &n),
                     0);
    assert_string_equal(n.state, "IDLE+DRAIN");
    assert_string_equal(n.reason, "houston: gpu [3] lost");
    assert_string_equal(n.reason_user, "");
    assert_int_equal(hn_sched_drained_by_houston(&n), 1);

    /* The asked name must match whole: n1 is not n10. */
    const char *two = "NodeName=n10 State=IDLE\n\nNodeName=n1 State=MIXED+DRAIN\n"
                      "   Reason=houston: x [slurm@2024-01-02T03:04:05]\n";
    assert_int_equal(hn_slurm_parse_node(two, "n1", &n), 0);
    assert_string_equal(n.state, "MIXED+DRAIN");
    assert_string_equal(n.reason, "houston: x");
    assert_string_equal(n.reason_user, "slurm");
    assert_string_equal(n.reason_time, "2024-01-02T03:04:05");
    assert_int_equal(hn_slurm_parse_node(two, "n10", &n), 0);
    assert_string_equal(n.state, "IDLE");
    assert_int_equal(n.drain, 0);
    assert_string_equal(n.reason, "");

    /* Older spellings: a '*' marks a node that does not respond; DRAINING/DRAINED. */
    assert_int_equal(hn_slurm_parse_node("NodeName=b State=IDLE*+DRAIN\n", "b", &n), 0);
    assert_int_equal(n.responding, 0);
    assert_int_equal(n.drain, 1);
    assert_int_equal(hn_slurm_parse_node("NodeName=b State=DRAINING\n", "b", &n), 0);
    assert_int_equal(n.drain, 1);
    /* Drained, but not by houston: the reason is "Houston" not "houston:". */
    assert_int_equal(
        hn_slurm_parse_node("NodeName=b State=IDLE+DRAIN Reason=Houston down\n", "b", &n), 0);
    assert_int_equal(hn_sched_drained_by_houston(&n), 0);
    /* houston's prefix on a node that is not drained (down only) is not a houston drain. */
    assert_int_equal(hn_slurm_parse_node("NodeName=b State=DOWN\n Reason=houston: x\n", "b", &n),
                     0);
    assert_int_equal(hn_sched_drained_by_houston(&n), 0);

    /* Only the first State= counts; later free text cannot change it. */
    assert_int_equal(
        hn_slurm_parse_node("NodeName=c State=IDLE\n   Comment=State=DOWN+DRAIN\n", "c", &n), 0);
    assert_string_equal(n.state, "IDLE");

    /* A record without State= is an error, no record is -ENOENT. */
    assert_int_equal(hn_slurm_parse_node("NodeName=d Arch=x86_64\n", "d", &n), -EINVAL);
    assert_int_equal(hn_slurm_parse_node("", "d", &n), -ENOENT);
    assert_int_equal(hn_slurm_parse_node("NodeName=\n", "d", &n), -ENOENT);

    /* A reason longer than the field is cut, still terminated. */
    char big[2048];
    int o = snprintf(big, sizeof(big), "NodeName=e State=IDLE+DRAIN\n   Reason=houston: ");
    memset(big + o, 'x', 1500);
    snprintf(big + o + 1500, sizeof(big) - (size_t)o - 1500, " [root@2024-01-01T00:00:00]\n");
    assert_int_equal(hn_slurm_parse_node(big, "e", &n), 0);
    assert_int_equal(strlen(n.reason), sizeof(n.reason) - 1);
    assert_int_equal(hn_sched_drained_by_houston(&n), 1);
}

/* Whether jobs still hold a node, from Slurm's state words. */
static void test_parse_allocated(void **state)
{
    (void)state;
    static const struct {
        const char *file, *node;
        int allocated;
    } files[] = {
        {"show-node-draining-houston.txt", "n3", 1}, /* ALLOCATED+DRAIN */
        {"show-node-resumed.txt", "n3", 1},          /* ALLOCATED+NOT_RESPONDING */
        {"show-node-drained-houston.txt", "n2", 0},  /* IDLE+DRAIN */
        {"show-node-down.txt", "n1", 0},             /* DOWN */
    };
    struct hn_sched_node n;
    for (size_t i = 0; i < HN_ARRAY_LEN(files); i++) {
        char *text = tu_slurp(fixture(files[i].file), NULL);
        assert_int_equal(hn_slurm_parse_node(text, files[i].node, &n), 0);
        if (n.allocated != files[i].allocated)
            fail_msg("%s: %s allocated %d", files[i].file, n.state, n.allocated);
        free(text);
    }
    static const struct {
        const char *state;
        int allocated;
    } states[] = {
        {"MIXED+DRAIN", 1},   {"IDLE+COMPLETING+DRAIN", 1},
        {"ALLOCATED", 1},     {"IDLE+DRAIN", 0},
        {"DOWN*+DRAIN", 0},   {"IDLE", 0},
        {"PLANNED+DRAIN", 0}, {"DRAINING", 0},
        {"DRAINED", 0},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(states); i++) {
        char text[128];
        snprintf(text, sizeof(text), "NodeName=a State=%s\n", states[i].state);
        assert_int_equal(hn_slurm_parse_node(text, "a", &n), 0);
        if (n.allocated != states[i].allocated)
            fail_msg("%s: allocated %d", states[i].state, n.allocated);
    }
}

/* ---- squeue's job listing ---- */

/* A sink that writes what it is given, one job a line: "ID UID STATE TIME_LEFT[ NODE...]",
 * and "begin" for begin; it fails a call out of order (a node outside a job). */
struct recorder {
    char text[4096];
    size_t len;
    int in_job, begins;
};

static void rec_printf(struct recorder *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void rec_printf(struct recorder *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->text + r->len, sizeof(r->text) - r->len, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof(r->text) - r->len);
    r->len += (size_t)n;
}

static const char *const state_names[] = {"running", "suspended", "queued", "ending"};

static void rec_begin(void *ctx)
{
    struct recorder *r = ctx;
    assert_int_equal(r->len, 0);
    r->begins++;
    rec_printf(r, "begin\n");
}

static void rec_job(void *ctx, const struct hn_sched_job *job)
{
    struct recorder *r = ctx;
    assert_false(r->in_job);
    r->in_job = 1;
    assert_true(job->state <= HN_SCHED_JOB_ENDING);
    rec_printf(r, "%s %lld %s %.0f", job->id, (long long)job->uid, state_names[job->state],
               job->time_left);
}

static void rec_node(void *ctx, const struct hn_sched_job *job, const char *node)
{
    struct recorder *r = ctx;
    assert_true(r->in_job);
    assert_int_equal(job->state, HN_SCHED_JOB_RUNNING);
    rec_printf(r, " %s", node);
}

static void rec_job_end(void *ctx, const struct hn_sched_job *job)
{
    struct recorder *r = ctx;
    (void)job;
    assert_true(r->in_job);
    r->in_job = 0;
    rec_printf(r, "\n");
}

static const struct hn_sched_job_sink recorder_sink = {
    .begin = rec_begin,
    .job = rec_job,
    .node = rec_node,
    .job_end = rec_job_end,
};

/* What hn_slurm_parse_jobs hands on of text (a copy is parsed). */
static const char *parse_jobs(struct recorder *r, const char *text)
{
    memset(r, 0, sizeof(*r));
    char *copy = strdup(text);
    assert_non_null(copy);
    hn_slurm_parse_jobs(copy, &recorder_sink, r);
    free(copy);
    return r->text;
}

/* Real listings: het components under their leader's id (1, twice, one node each), an array
 * task under its own id (6, not 4_1), waiting jobs without nodes, time left in seconds. */
static void test_parse_jobs_fixtures(void **state)
{
    (void)state;
    struct recorder r;
    char *text = tu_slurp(fixture("squeue-jobs.txt"), NULL);
    assert_string_equal(parse_jobs(&r, text), "4 65534 queued 3540\n"
                                              "5 0 queued 1800\n"
                                              "1 0 running -1 n3\n"
                                              "1 0 running -1 n4\n"
                                              "3 0 running 172798 n1\n"
                                              "6 65534 running 3538 n2\n");
    free(text);
    /* Suspended: waiting, its node not given though squeue lists it. */
    text = tu_slurp(fixture("squeue-jobs-suspended.txt"), NULL);
    assert_string_equal(parse_jobs(&r, text), "4 65534 queued 3540\n"
                                              "5 0 queued 1800\n"
                                              "1 0 running -1 n3\n"
                                              "1 0 running -1 n4\n"
                                              "6 65534 running 3537 n2\n"
                                              "3 0 suspended 172798\n");
    free(text);
    assert_int_equal(r.begins, 0); /* begin is list_jobs's */
}

/* Every state code squeue(1) lists, lines that are not squeue's, owners and host lists. */
static void test_parse_jobs_lines(void **state)
{
    (void)state;
    static const struct {
        const char *code, *as; /* as: NULL when over */
    } codes[] = {
        {"R", "running"}, {"S", "suspended"}, {"ST", "suspended"}, {"RS", "suspended"},
        {"PD", "queued"}, {"CF", "queued"},   {"RQ", "queued"},    {"RH", "queued"},
        {"RF", "queued"}, {"SE", "queued"},   {"CG", "ending"},    {"SI", "ending"},
        {"SO", "ending"}, {"CD", NULL},       {"CA", NULL},        {"F", NULL},
        {"TO", NULL},     {"NF", NULL},       {"PR", NULL},        {"OOM", NULL},
        {"BF", NULL},     {"DL", NULL},       {"RV", NULL},        {"r", NULL},
    };
    struct recorder r;
    for (size_t i = 0; i < HN_ARRAY_LEN(codes); i++) {
        char line[64], want[64] = "";
        snprintf(line, sizeof(line), "7 7 1000 %s 1:00 n1\n", codes[i].code);
        if (codes[i].as)
            snprintf(want, sizeof(want), "7 1000 %s 60%s\n", codes[i].as,
                     strcmp(codes[i].as, "running") == 0 ? " n1" : "");
        if (strcmp(parse_jobs(&r, line), want) != 0)
            fail_msg("%s: got '%s', want '%s'", codes[i].code, r.text, want);
    }
    /* Fields missing: no TIME_LEFT, or a running job without its NODELIST field. An empty
     * NODELIST (a trailing space) is a running job on no node. */
    assert_string_equal(parse_jobs(&r, "\n7\n7 7 0\n7 7 0 R\n7 7 0 R 1:00\n8 8 0 PD 1:00\n"
                                       "9 9 0 R 1:00 \n"),
                        "8 0 queued 60\n9 0 running 60\n");
    /* Owners: not a number or past 32 bits is unknown (-1). */
    assert_string_equal(parse_jobs(&r, "1 1 x R 5 a\n2 2 4294967296 R 5 a\n"
                                       "3 3 4294967295 R 5 a\n4 4 -1 R 5 a\n"),
                        "1 -1 running 300 a\n2 -1 running 300 a\n"
                        "3 4294967295 running 300 a\n4 -1 running 300 a\n");
    /* A het component as its leader; host lists expanded with their padding; a malformed
     * list gives the names before the fault, and the job still ends. */
    assert_string_equal(parse_jobs(&r, "12 10+2 0 R 2-0 gpu[09-11],login1\n"
                                       "21 20_1 0 R UNLIMITED n[1-2]\n"
                                       "22 22 0 R NOT_SET a,b[1-\n"),
                        "10 0 running 172800 gpu09 gpu10 gpu11 login1\n"
                        "21 0 running -1 n1 n2\n"
                        "22 0 running -1 a\n");
    /* No text at all. */
    assert_string_equal(parse_jobs(&r, ""), "");
}

/* `squeue -j JOB -o "%T %N"`: running or being set up on the node. */
static void test_parse_job_on_node(void **state)
{
    (void)state;
    char *het = tu_slurp(fixture("squeue-j-het.txt"), NULL);
    static const struct {
        const char *text, *node;
        int want;
    } cases[] = {
        {NULL, "n3", 1},
        {NULL, "n4", 1},
        {NULL, "n1", 0},
        {"CONFIGURING n[1-2]\n", "n2", 1},
        {"PENDING \n", "n1", 0},
        {"COMPLETING n1\n", "n1", 0},
        {"SUSPENDED n1\n", "n1", 0},
        {"RUNNING\n", "n1", 0},
        {"RUNNING n1", "n1", 1},
        {"RUNNING n1\nRUNNING n2\n", "n2", 1},
        {"slurm_load_jobs error: Invalid job id specified\n", "n1", 0},
        {"", "n1", 0},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        char *copy = strdup(cases[i].text ? cases[i].text : het);
        assert_non_null(copy);
        int got = hn_slurm_parse_job_on_node(copy, cases[i].node);
        if (got != cases[i].want)
            fail_msg("'%s' on %s: %d, want %d", cases[i].text ? cases[i].text : "(het)",
                     cases[i].node, got, cases[i].want);
        free(copy);
    }
    free(het);
}

/* ---- names, reasons, table ---- */

static void test_names(void **state)
{
    (void)state;
    const char *good_nodes[] = {"n1", "gpu-017", "node0201", "a.b_c", "x"};
    const char *bad_nodes[] = {"",     "n[1-4]", "n1,n2", "n1 State=DOWN", "-n",  "n1=x",
                               "n\n1", "gpu;rm", "n/1",   "ALL",           "all", NULL};
    for (size_t i = 0; i < HN_ARRAY_LEN(good_nodes); i++)
        assert_int_equal(hn_sched_valid_node(good_nodes[i]), 1);
    for (size_t i = 0; i < HN_ARRAY_LEN(bad_nodes); i++)
        assert_int_equal(hn_sched_valid_node(bad_nodes[i]), 0);
    char long_name[80];
    memset(long_name, 'n', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_int_equal(hn_sched_valid_node(long_name), 0);

    const char *good_jobs[] = {"1", "1234", "1234_7", "99+1"};
    const char *bad_jobs[] = {"", "abc", "12a", "1234_", "_7", "1,2", "-1", "1 2", NULL};
    for (size_t i = 0; i < HN_ARRAY_LEN(good_jobs); i++)
        assert_int_equal(hn_sched_valid_jobid(good_jobs[i]), 1);
    for (size_t i = 0; i < HN_ARRAY_LEN(bad_jobs); i++)
        assert_int_equal(hn_sched_valid_jobid(bad_jobs[i]), 0);
}

static void test_reason_format(void **state)
{
    (void)state;
    char out[64];

    assert_int_equal(hn_sched_reason_format(out, sizeof(out), "xid 79 on GPU 3"), 0);
    assert_string_equal(out, "houston: xid 79 on GPU 3");
    assert_int_equal(hn_sched_reason_format(out, sizeof(out), "houston: already"), 0);
    assert_string_equal(out, "houston: already");
    assert_int_equal(hn_sched_reason_format(out, sizeof(out), "houston:tight"), 0);
    assert_string_equal(out, "houston: tight");
    assert_int_equal(hn_sched_reason_format(out, sizeof(out), "  two\nlines\t "), 0);
    assert_string_equal(out, "houston: two lines");
    assert_int_equal(hn_sched_reason_format(out, sizeof(out), ""), -EINVAL);
    assert_int_equal(hn_sched_reason_format(out, sizeof(out), " houston: "), -EINVAL);
    char small[12];
    assert_int_equal(hn_sched_reason_format(small, sizeof(small), "a long reason"), 0);
    assert_string_equal(small, "houston: a ");
}

static void test_table(void **state)
{
    (void)state;
    struct hn_sched s;

    assert_ptr_equal(hn_sched_lookup("slurm"), &hn_sched_slurm_ops);
    assert_ptr_equal(hn_sched_lookup("dry-run"), &hn_sched_dryrun_ops);
    assert_null(hn_sched_lookup("pbs"));
    assert_null(hn_sched_lookup(NULL));
    assert_non_null(strstr(hn_sched_names(), "slurm"));
    assert_int_equal(hn_sched_init(&s, "pbs", NULL), -ENOENT);
    assert_null(s.ops);

    struct hn_sched_settings set;
    hn_sched_settings_default(&set);
    assert_string_equal(set.scontrol, "scontrol");
    assert_string_equal(set.squeue, "squeue");
    assert_int_equal(set.timeout_ms, 10000);
    assert_int_equal(set.output_max, 64 * 1024);
    set.timeout_ms = 0;
    assert_int_equal(hn_sched_init(&s, "slurm", &set), -EINVAL);
    assert_int_equal(hn_sched_init(&s, "slurm", NULL), 0);
    assert_string_equal(s.ops->last_error(s.ctx), "");
    hn_sched_fini(&s);
    hn_sched_fini(&s); /* twice is harmless */

    /* Every backend provides every operation. */
    const struct hn_sched_ops *all[] = {hn_sched_lookup("slurm"), hn_sched_lookup("dry-run")};
    for (size_t i = 0; i < HN_ARRAY_LEN(all); i++) {
        const struct hn_sched_ops *o = all[i];
        assert_true(o->init && o->fini && o->drain && o->resume && o->node_info && o->requeue &&
                    o->list_jobs && o->job_on_node && o->last_error);
    }
}

static void test_dryrun(void **state)
{
    (void)state;
    struct hn_sched s;
    struct hn_sched_node n;

    assert_int_equal(hn_sched_init(&s, "dry-run", NULL), 0);
    assert_int_equal(s.ops->node_info(s.ctx, "n2", &n), 0);
    assert_string_equal(n.state, "IDLE");
    assert_int_equal(hn_sched_drained_by_houston(&n), 0);

    assert_int_equal(s.ops->drain(s.ctx, "n2", "xid 79"), 0);
    assert_int_equal(s.ops->node_info(s.ctx, "n2", &n), 0);
    assert_string_equal(n.state, "IDLE+DRAIN");
    assert_string_equal(n.reason, "houston: xid 79");
    assert_int_equal(hn_sched_drained_by_houston(&n), 1);
    assert_int_equal(s.ops->requeue(s.ctx, "77"), 0);
    assert_int_equal(s.ops->resume(s.ctx, "n2"), 0);
    assert_int_equal(s.ops->node_info(s.ctx, "n2", &n), 0);
    assert_int_equal(n.drain, 0);

    assert_int_equal(s.ops->drain(s.ctx, "n[1-2]", "x"), -EINVAL);
    assert_non_null(strstr(s.ops->last_error(s.ctx), "n[1-2]"));
    assert_int_equal(s.ops->drain(s.ctx, "n1", ""), -EINVAL);
    assert_int_equal(s.ops->requeue(s.ctx, "x1"), -EINVAL);

    const char *want[][3] = {
        {"node_info", "n2", ""}, {"drain", "n2", "houston: xid 79"},
        {"node_info", "n2", ""}, {"requeue", "77", ""},
        {"resume", "n2", ""},    {"node_info", "n2", ""},
    };
    assert_int_equal(hn_sched_dryrun_ncalls(s.ctx), HN_ARRAY_LEN(want));
    for (size_t i = 0; i < HN_ARRAY_LEN(want); i++) {
        const struct hn_sched_call *c = hn_sched_dryrun_call(s.ctx, i);
        assert_non_null(c);
        assert_string_equal(c->op, want[i][0]);
        assert_string_equal(c->target, want[i][1]);
        assert_string_equal(c->arg, want[i][2]);
    }
    assert_null(hn_sched_dryrun_call(s.ctx, HN_ARRAY_LEN(want)));
    hn_sched_fini(&s);
}

/* The dry-run backend lists no jobs until a test gives it some, then answers from them. */
static void test_dryrun_jobs(void **state)
{
    (void)state;
    struct hn_sched s;
    struct hn_sched_node n;
    struct recorder r = {.len = 0};

    assert_int_equal(hn_sched_init(&s, "dry-run", NULL), 0);
    assert_int_equal(s.ops->list_jobs(s.ctx, &recorder_sink, &r), -ENOTSUP);
    assert_int_equal(r.len, 0);
    assert_int_equal(s.ops->job_on_node(s.ctx, "j", "n1"), -ENOTSUP);
    assert_non_null(strstr(s.ops->last_error(s.ctx), "lists no jobs"));

    const struct hn_sched_dryrun_job jobs[] = {
        {"j", 1000, HN_SCHED_JOB_RUNNING, 60, "n1,n2"},
        {"k", -1, HN_SCHED_JOB_QUEUED, -1, ""},
        {"m", 0, HN_SCHED_JOB_ENDING, 5, "n3"},
    };
    assert_int_equal(hn_sched_dryrun_set_jobs(s.ctx, jobs, HN_ARRAY_LEN(jobs)), 0);
    assert_int_equal(s.ops->list_jobs(s.ctx, &recorder_sink, &r), 0);
    assert_string_equal(r.text, "begin\nj 1000 running 60 n1 n2\nk -1 queued -1\nm 0 ending 5\n");
    assert_int_equal(s.ops->job_on_node(s.ctx, "j", "n2"), 1);
    assert_int_equal(s.ops->job_on_node(s.ctx, "j", "n3"), 0);
    assert_int_equal(s.ops->job_on_node(s.ctx, "m", "n3"), 0);
    assert_int_equal(s.ops->job_on_node(s.ctx, "x", "n1"), 0);

    /* A node a running job lists is allocated; a drained one stays so. */
    assert_int_equal(s.ops->node_info(s.ctx, "n1", &n), 0);
    assert_int_equal(n.allocated, 1);
    assert_string_equal(n.state, "ALLOCATED");
    assert_int_equal(s.ops->drain(s.ctx, "n1", "x"), 0);
    assert_int_equal(s.ops->node_info(s.ctx, "n1", &n), 0);
    assert_string_equal(n.state, "ALLOCATED+DRAIN");
    assert_int_equal(s.ops->node_info(s.ctx, "n3", &n), 0);
    assert_int_equal(n.allocated, 0);

    /* An empty listing lists nothing; NULL says it cannot list again. */
    memset(&r, 0, sizeof(r));
    assert_int_equal(hn_sched_dryrun_set_jobs(s.ctx, jobs, 0), 0);
    assert_int_equal(s.ops->list_jobs(s.ctx, &recorder_sink, &r), 0);
    assert_string_equal(r.text, "begin\n");
    assert_int_equal(s.ops->job_on_node(s.ctx, "j", "n1"), 0);
    assert_int_equal(hn_sched_dryrun_set_jobs(s.ctx, NULL, 0), 0);
    assert_int_equal(s.ops->job_on_node(s.ctx, "j", "n1"), -ENOTSUP);
    struct hn_sched_dryrun_job many[65];
    memset(many, 0, sizeof(many));
    assert_int_equal(hn_sched_dryrun_set_jobs(s.ctx, many, 65), -E2BIG);
    hn_sched_fini(&s);
}

/* ---- the Slurm backend against a fake scontrol ---- */

/* The fake logs its argv (joined with '|') to $FAKE_LOG, then acts on $FAKE_MODE. */
static const char fake_script[] =
    "#!/bin/sh\n"
    "sep=''\n"
    "for a in \"$@\"; do printf '%s%s' \"$sep\" \"$a\"; sep='|'; done >>\"$FAKE_LOG\"\n"
    "echo >>\"$FAKE_LOG\"\n"
    "case \"$FAKE_MODE\" in\n"
    "ok) [ \"$1\" = show ] && cat \"$FAKE_SHOW\"; exit 0 ;;\n"
    "notfound) echo 'slurm_update error: Invalid node name specified' >&2; exit 1 ;;\n"
    "down) echo 'slurm_load_node error: Unable to contact slurm controller "
    "(connect failure)' >&2; exit 1 ;;\n"
    "hang) sleep 30 ;;\n"
    "stubborn) trap '' TERM; echo 'starting'; sleep 30 ;;\n"
    "bigshow) cat \"$FAKE_SHOW\"; yes filler | head -c 1000000; exit 0 ;;\n"
    "flood) yes flood ;;\n"
    "esac\n"
    "exit 0\n";

/* The fake squeue logs its argv the same way, then acts on $FAKE_SQUEUE, printing $FAKE_LIST. */
static const char fake_squeue[] =
    "#!/bin/sh\n"
    "sep=''\n"
    "for a in \"$@\"; do printf '%s%s' \"$sep\" \"$a\"; sep='|'; done >>\"$FAKE_LOG\"\n"
    "echo >>\"$FAKE_LOG\"\n"
    "case \"$FAKE_SQUEUE\" in\n"
    "ok) cat \"$FAKE_LIST\"; exit 0 ;;\n"
    "fail) cat \"$FAKE_LIST\" >&2; exit 1 ;;\n"
    "hang) sleep 30 ;;\n"
    "flood) yes flood | head -c 17000000; exit 0 ;;\n"
    "esac\n"
    "exit 0\n";

struct fake {
    char dir[PATH_MAX];
    char script[PATH_MAX + 16];
    char squeue[PATH_MAX + 16];
    char log[PATH_MAX + 16];
};

static int fake_setup(void **state)
{
    struct fake *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    tu_mkdtemp(f->dir, sizeof(f->dir), "slurm");
    (void)snprintf(f->script, sizeof(f->script), "%s/scontrol", f->dir);
    (void)snprintf(f->log, sizeof(f->log), "%s/calls.log", f->dir);
    tu_write_file(f->script, fake_script);
    assert_int_equal(chmod(f->script, 0755), 0);
    (void)snprintf(f->squeue, sizeof(f->squeue), "%s/squeue", f->dir);
    tu_write_file(f->squeue, fake_squeue);
    assert_int_equal(chmod(f->squeue, 0755), 0);
    setenv("FAKE_LOG", f->log, 1);
    *state = f;
    return 0;
}

static int fake_teardown(void **state)
{
    struct fake *f = *state;
    tu_remove_tree(f->dir);
    free(f);
    return 0;
}

/* The last argv the fake received, or "" when it was not called. */
static void last_call(const struct fake *f, char *out, size_t size)
{
    out[0] = '\0';
    FILE *fp = fopen(f->log, "r");
    if (!fp)
        return;
    char line[1024];
    while (fgets(line, sizeof(line), fp)) {
        line[strcspn(line, "\n")] = '\0';
        hn_strlcpy(out, line, size);
    }
    fclose(fp);
}

static void open_fake(const struct fake *f, struct hn_sched *s, int timeout_ms, size_t max)
{
    struct hn_sched_settings set;
    hn_sched_settings_default(&set);
    assert_true(hn_strlcpy(set.scontrol, f->script, sizeof(set.scontrol)) < sizeof(set.scontrol));
    assert_true(hn_strlcpy(set.squeue, f->squeue, sizeof(set.squeue)) < sizeof(set.squeue));
    set.timeout_ms = timeout_ms;
    set.output_max = max;
    assert_int_equal(hn_sched_init(s, "slurm", &set), 0);
}

static void test_slurm_commands(void **state)
{
    struct fake *f = *state;
    struct hn_sched s;
    struct hn_sched_node n;
    char call[1024];

    open_fake(f, &s, 5000, (size_t)64 * 1024);
    setenv("FAKE_MODE", "ok", 1);
    setenv("FAKE_SHOW", fixture("show-node-drained-houston.txt"), 1);

    assert_int_equal(s.ops->drain(s.ctx, "n2", "xid 79 on GPU 3 \"bus\"\nfell off"), 0);
    last_call(f, call, sizeof(call));
    printf("drain   -> %s\n", call);
    assert_string_equal(call, "update|NodeName=n2|State=DRAIN|Reason=houston: xid 79 on GPU 3 "
                              "\"bus\" fell off");

    assert_int_equal(s.ops->resume(s.ctx, "n2"), 0);
    last_call(f, call, sizeof(call));
    printf("resume  -> %s\n", call);
    assert_string_equal(call, "update|NodeName=n2|State=RESUME");

    assert_int_equal(s.ops->requeue(s.ctx, "1234"), 0);
    last_call(f, call, sizeof(call));
    printf("requeue -> %s\n", call);
    assert_string_equal(call, "requeue|1234");

    assert_int_equal(s.ops->node_info(s.ctx, "n2", &n), 0);
    last_call(f, call, sizeof(call));
    printf("show    -> %s: %s '%s'\n", call, n.state, n.reason);
    assert_string_equal(call, "show|node|n2");
    assert_string_equal(n.state, "IDLE+DRAIN");
    assert_int_equal(hn_sched_drained_by_houston(&n), 1);
    assert_string_equal(s.ops->last_error(s.ctx), "");

    /* The fake answers for n2 only: asking for n3 finds no record. */
    assert_int_equal(s.ops->node_info(s.ctx, "n3", &n), -ENOENT);
    assert_non_null(strstr(s.ops->last_error(s.ctx), "no record for n3"));

    /* Refused names and reasons never reach scontrol. */
    last_call(f, call, sizeof(call));
    char before[1024];
    hn_strlcpy(before, call, sizeof(before));
    assert_int_equal(s.ops->drain(s.ctx, "n[1-4]", "x"), -EINVAL);
    assert_int_equal(s.ops->drain(s.ctx, "n1 State=DOWN", "x"), -EINVAL);
    assert_int_equal(s.ops->drain(s.ctx, "n1", "   "), -EINVAL);
    assert_int_equal(s.ops->drain(s.ctx, "n1", NULL), -EINVAL);
    assert_int_equal(s.ops->resume(s.ctx, "ALL"), -EINVAL);
    assert_int_equal(s.ops->requeue(s.ctx, "1;2"), -EINVAL);
    assert_int_equal(s.ops->node_info(s.ctx, "", &n), -EINVAL);
    last_call(f, call, sizeof(call));
    assert_string_equal(call, before);
    hn_sched_fini(&s);
}

static void test_slurm_failures(void **state)
{
    struct fake *f = *state;
    struct hn_sched s;
    struct hn_sched_node n;

    open_fake(f, &s, 5000, (size_t)64 * 1024);
    setenv("FAKE_MODE", "notfound", 1);
    assert_int_equal(s.ops->drain(s.ctx, "n9", "x"), -ENOENT);
    printf("not found: %s\n", s.ops->last_error(s.ctx));
    assert_non_null(strstr(s.ops->last_error(s.ctx), "exit 1"));
    assert_non_null(strstr(s.ops->last_error(s.ctx), "Invalid node name specified"));
    assert_non_null(strstr(s.ops->last_error(s.ctx), "NodeName=n9"));

    setenv("FAKE_MODE", "down", 1);
    assert_int_equal(s.ops->node_info(s.ctx, "n1", &n), -EIO);
    printf("controller down: %s\n", s.ops->last_error(s.ctx));
    assert_non_null(strstr(s.ops->last_error(s.ctx), "Unable to contact slurm controller"));
    hn_sched_fini(&s);

    /* No scontrol at all. */
    struct hn_sched_settings set;
    hn_sched_settings_default(&set);
    hn_strlcpy(set.scontrol, "/nonexistent/bin/scontrol", sizeof(set.scontrol));
    assert_int_equal(hn_sched_init(&s, "slurm", &set), 0);
    assert_int_equal(s.ops->resume(s.ctx, "n1"), -ENOENT);
    printf("missing: %s\n", s.ops->last_error(s.ctx));
    assert_non_null(strstr(s.ops->last_error(s.ctx), "slurm-client"));
    hn_sched_fini(&s);
}

static void test_slurm_hangs(void **state)
{
    struct fake *f = *state;
    struct hn_sched s;

    /* 1.5 s: time enough, on a busy machine, for the stubborn fake to set its trap and say
     * "starting" before the SIGTERM (which would otherwise end it early). */
    open_fake(f, &s, 1500, (size_t)64 * 1024);
    setenv("FAKE_MODE", "hang", 1);
    uint64_t t0 = hn_mono_ns();
    assert_int_equal(s.ops->drain(s.ctx, "n1", "x"), -ETIMEDOUT);
    uint64_t ms = (hn_mono_ns() - t0) / 1000000u;
    printf("hung scontrol: %s (after %llu ms)\n", s.ops->last_error(s.ctx), (unsigned long long)ms);
    assert_true(ms < 5000);
    assert_non_null(strstr(s.ops->last_error(s.ctx), "no answer within 1500 ms"));

    /* One that ignores SIGTERM costs the grace more, no longer. */
    setenv("FAKE_MODE", "stubborn", 1);
    t0 = hn_mono_ns();
    assert_int_equal(s.ops->requeue(s.ctx, "5"), -ETIMEDOUT);
    ms = (hn_mono_ns() - t0) / 1000000u;
    printf("stubborn scontrol: %s (after %llu ms)\n", s.ops->last_error(s.ctx),
           (unsigned long long)ms);
    assert_true(ms >= 1500 + HN_SPAWN_GRACE_MS - 20 && ms < 6000);
    assert_non_null(strstr(s.ops->last_error(s.ctx), "starting"));

    /* An endless flood is capped and killed at the deadline. */
    setenv("FAKE_MODE", "flood", 1);
    struct hn_sched_node n;
    assert_int_equal(s.ops->node_info(s.ctx, "n1", &n), -ETIMEDOUT);
    assert_true(strlen(s.ops->last_error(s.ctx)) < 512);
    hn_sched_fini(&s);
}

static void test_slurm_output_cap(void **state)
{
    struct fake *f = *state;
    struct hn_sched s;
    struct hn_sched_node n;

    /* 1 MB of output after the record: cut at 4 KiB, the record still parses. */
    open_fake(f, &s, 10000, 4096);
    setenv("FAKE_MODE", "bigshow", 1);
    setenv("FAKE_SHOW", fixture("show-node-draining-houston.txt"), 1);
    assert_int_equal(s.ops->node_info(s.ctx, "n3", &n), 0);
    assert_string_equal(n.state, "ALLOCATED+DRAIN");
    assert_string_equal(n.reason, "houston: ecc dbe count 4");
    hn_sched_fini(&s);
}

/* list_jobs and job_on_node run squeue with these argv, hand on what it lists, and say why
 * they failed in the words the controller's poll logs. */
static void test_slurm_jobs(void **state)
{
    struct fake *f = *state;
    struct hn_sched s;
    struct recorder r = {.len = 0};
    char call[1024];

    open_fake(f, &s, 5000, (size_t)64 * 1024);
    setenv("FAKE_SQUEUE", "ok", 1);
    setenv("FAKE_LIST", fixture("squeue-jobs.txt"), 1);
    assert_int_equal(s.ops->list_jobs(s.ctx, &recorder_sink, &r), 0);
    last_call(f, call, sizeof(call));
    printf("list_jobs   -> %s\n", call);
    assert_string_equal(call, "-h|-t|PENDING,RUNNING,SUSPENDED,STOPPED,COMPLETING,CONFIGURING,"
                              "RESIZING,REQUEUED,REQUEUE_HOLD,REQUEUE_FED,SPECIAL_EXIT,"
                              "SIGNALING,STAGE_OUT|-o|%A %i %U %t %L %N");
    assert_string_equal(r.text, "begin\n"
                                "4 65534 queued 3540\n"
                                "5 0 queued 1800\n"
                                "1 0 running -1 n3\n"
                                "1 0 running -1 n4\n"
                                "3 0 running 172798 n1\n"
                                "6 65534 running 3538 n2\n");
    assert_string_equal(s.ops->last_error(s.ctx), "");

    setenv("FAKE_LIST", fixture("squeue-j-het.txt"), 1);
    assert_int_equal(s.ops->job_on_node(s.ctx, "1", "n4"), 1);
    last_call(f, call, sizeof(call));
    printf("job_on_node -> %s\n", call);
    assert_string_equal(call, "-h|-j|1|-o|%T %N");
    assert_int_equal(s.ops->job_on_node(s.ctx, "1", "n1"), 0);

    /* squeue exits 1 for a job it no longer knows: not there. */
    setenv("FAKE_SQUEUE", "fail", 1);
    setenv("FAKE_LIST", fixture("squeue-j-unknown.txt"), 1);
    assert_int_equal(s.ops->job_on_node(s.ctx, "999999", "n1"), 0);
    /* A listing that fails calls nothing; its reason has the output on one line. */
    memset(&r, 0, sizeof(r));
    assert_int_equal(s.ops->list_jobs(s.ctx, &recorder_sink, &r), -EIO);
    assert_int_equal(r.len, 0);
    printf("failed: %s\n", s.ops->last_error(s.ctx));
    assert_string_equal(s.ops->last_error(s.ctx),
                        "exit status 1: slurm_load_jobs error: Invalid job id specified ");

    /* More than 16 MiB. */
    setenv("FAKE_SQUEUE", "flood", 1);
    assert_int_equal(s.ops->list_jobs(s.ctx, &recorder_sink, &r), -EFBIG);
    assert_string_equal(s.ops->last_error(s.ctx), "output over 16777216 bytes");
    assert_int_equal(r.len, 0);
    hn_sched_fini(&s);

    /* A squeue that hangs is killed at the deadline. */
    open_fake(f, &s, 1500, (size_t)64 * 1024);
    setenv("FAKE_SQUEUE", "hang", 1);
    assert_int_equal(s.ops->list_jobs(s.ctx, &recorder_sink, &r), -ETIMEDOUT);
    assert_string_equal(s.ops->last_error(s.ctx), "timed out");
    assert_int_equal(s.ops->job_on_node(s.ctx, "1", "n1"), -ETIMEDOUT);
    assert_int_equal(r.len, 0);
    hn_sched_fini(&s);

    /* No squeue at all. */
    struct hn_sched_settings set;
    hn_sched_settings_default(&set);
    hn_strlcpy(set.squeue, "/nonexistent/bin/squeue", sizeof(set.squeue));
    assert_int_equal(hn_sched_init(&s, "slurm", &set), 0);
    assert_int_equal(s.ops->list_jobs(s.ctx, &recorder_sink, &r), -ENOENT);
    assert_string_equal(s.ops->last_error(s.ctx), "No such file or directory");
    assert_true(s.ops->job_on_node(s.ctx, "1", "n1") < 0);
    hn_sched_fini(&s);
}

/* squeue's %L (time left) and Slurm's other time forms; no limit known is -1. */
static void test_time_left(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        double want; /* -1: refused */
    } cases[] = {
        {"59:58", 3598},
        {"1:59:58", 7198},
        {"2-00:00:00", 172800},
        {"3-04:05:06", 273906},
        {"3-4", 273600},
        {"3-4:05", 273900},
        {"30", 1800},
        {"0:00", 0},
        {"UNLIMITED", -1},
        {"NOT_SET", -1},
        {"INVALID", -1},
        {"", -1},
        {"1:2:3:4", -1},
        {"-1:00", -1},
        {"1-", -1},
        {"1:", -1},
        {"a:00", -1},
        {"1:00 ", -1},
        {"1234567890:00", -1},
        {"1-2-3", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double got = -2;
        int rc = hn_slurm_parse_time_left(cases[i].in, &got);
        if (cases[i].want < 0) {
            if (rc != -1)
                fail_msg("'%s' should be refused, got %g", cases[i].in, got);
        } else if (rc != 0 || got != cases[i].want) {
            fail_msg("'%s': rc %d, %g s, want %g s", cases[i].in, rc, got, cases[i].want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_expected),
        cmocka_unit_test(test_time_left),
        cmocka_unit_test(test_parse_edge_cases),
        cmocka_unit_test(test_parse_allocated),
        cmocka_unit_test(test_parse_jobs_fixtures),
        cmocka_unit_test(test_parse_jobs_lines),
        cmocka_unit_test(test_parse_job_on_node),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_reason_format),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_dryrun),
        cmocka_unit_test(test_dryrun_jobs),
        cmocka_unit_test_setup_teardown(test_slurm_commands, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_slurm_failures, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_slurm_hangs, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_slurm_output_cap, fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_slurm_jobs, fake_setup, fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
