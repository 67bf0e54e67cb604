/*
 * test_step_client.c - the step-report client (src/step/step.c, include/houston/step.h): the
 * datagram text for every field, identity from the environment, numbers in a program whose
 * locale writes ',' (or a two-byte separator) as its decimal point, and sending: to a bound
 * socket, to nobody (dropped and counted), to a receiver that never reads (never blocks), and
 * from several threads at once (nothing corrupted, nothing lost uncounted).
 */
#include "testutil.h"

#include "common/spawn.h"
#include "houston/step.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/un.h>

static const char *const identity_env[] = {
    "SLURM_JOB_ID",  "HOUSTON_JOB_ID", "RANK",         "SLURM_PROCID",        "LOCAL_RANK",
    "SLURM_LOCALID", "WORLD_SIZE",     "SLURM_NTASKS", "HOUSTON_STEP_SOCKET",
};

static void clear_env(void)
{
    for (size_t i = 0; i < HN_ARRAY_LEN(identity_env); i++)
        unsetenv(identity_env[i]);
}

/* A client for job "42", rank 3 of 16, local rank 1, sending to path (NULL: nowhere). */
static struct hn_step_client *client(const char *path)
{
    clear_env();
    setenv("HOUSTON_STEP_SOCKET", path ? path : "/nonexistent/houston/step.sock", 1);
    struct hn_step_client *c = hn_step_open();
    assert_non_null(c);
    hn_step_set_identity(c, "42", 3, 1, 16);
    return c;
}

static struct hn_step step_of(uint64_t n, double seconds)
{
    struct hn_step s;
    hn_step_init(&s);
    s.step = n;
    s.seconds = seconds;
    return s;
}

/* Formats s and compares it with want (NULL: formatting must fail). */
static void check_format(const struct hn_step_client *c, const struct hn_step *s, const char *want)
{
    char buf[HN_STEP_DGRAM_MAX];
    int n = hn_step_format(c, s, buf, sizeof(buf));
    if (!want) {
        assert_int_equal(n, -1);
        return;
    }
    assert_int_equal(n, (int)strlen(want));
    assert_string_equal(buf, want);
}

/* A datagram socket bound at dir/name; its path goes to path. */
static int bind_dgram(const char *dir, const char *name, char *path, size_t size)
{
    int n = snprintf(path, size, "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < size);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    assert_true(strlen(path) < sizeof(a.sun_path));
    memcpy(a.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* ---- the datagram ---- */

static void test_format_every_field(void **state)
{
    (void)state;
    struct hn_step_client *c = client(NULL);
    hn_step_set_gpu(c, 5);
    struct hn_step s = step_of(100, 1.5);
    s.tokens = 4096;
    s.forward_s = 0.5;
    s.backward_s = 0.75;
    s.optimizer_s = 0.125;
    s.comm_s = 0.0625;
    s.checkpoint = 90;
    s.tflops = 400.5;
    s.flops_per_token = 2.4e12;
    check_format(c, &s,
                 "hs1 job=42 rank=3 lrank=1 world=16 step=100 dur=1.5 tokens=4096 fwd=0.5 "
                 "bwd=0.75 opt=0.125 comm=0.0625 ckpt=90 tflops=400.5 fpt=2.4e+12 gpu=5");
    hn_step_close(c);
}

static void test_format_optional_omitted(void **state)
{
    (void)state;
    struct hn_step_client *c = client(NULL);
    struct hn_step s = step_of(7, 0.25);
    check_format(c, &s, "hs1 job=42 rank=3 lrank=1 world=16 step=7 dur=0.25");

    /* Negative, NaN and infinite optional values are "not reported". */
    s.tokens = -5;
    s.forward_s = -1.0;
    s.backward_s = NAN;
    s.optimizer_s = INFINITY;
    s.comm_s = -INFINITY;
    s.checkpoint = -1;
    s.tflops = NAN;
    hn_step_set_gpu(c, -3);
    check_format(c, &s, "hs1 job=42 rank=3 lrank=1 world=16 step=7 dur=0.25");
    hn_step_set_gpu(c, HN_STEP_COUNT_MAX + 1); /* the agent would refuse the report */
    check_format(c, &s, "hs1 job=42 rank=3 lrank=1 world=16 step=7 dur=0.25");

    /* Zero is a value, -0 prints as 0. */
    s.tokens = 0;
    s.comm_s = -0.0;
    s.checkpoint = 0;
    check_format(c, &s,
                 "hs1 job=42 rank=3 lrank=1 world=16 step=7 dur=0.25 tokens=0 comm=0 ckpt=0");

    /* The duration is required. */
    s = step_of(7, NAN);
    check_format(c, &s, NULL);
    s.seconds = -0.5;
    check_format(c, &s, NULL);
    s.seconds = INFINITY;
    check_format(c, &s, NULL);
    hn_step_close(c);

    /* Unknown rank, local rank and world are left out; the largest step fits. */
    clear_env();
    c = hn_step_open();
    hn_step_set_identity(c, "j", -1, -1, -1);
    s = step_of(UINT64_MAX, 0);
    check_format(c, &s, "hs1 job=j step=18446744073709551615 dur=0");
    hn_step_close(c);
}

static void test_format_numbers(void **state)
{
    (void)state;
    struct hn_step_client *c = client(NULL);
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0.123456789012, "0.123456789"},
        {123456.7, "123456.7"},
        {1e-5, "1e-05"},
        {75.2496, "75.2496"},
        {1234567891.5, "1.23456789e+09"},
        {3.0, "3"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        struct hn_step s = step_of(1, cases[i].v);
        char want[128];
        snprintf(want, sizeof(want), "hs1 job=42 rank=3 lrank=1 world=16 step=1 dur=%s",
                 cases[i].text);
        check_format(c, &s, want);
    }
    /* A buffer too small fails cleanly, terminated. */
    struct hn_step s = step_of(1, 1.0);
    char small[16];
    assert_int_equal(hn_step_format(c, &s, small, sizeof(small)), -1);
    assert_string_equal(small, "");
    assert_int_equal(hn_step_format(c, &s, small, 0), -1);
    assert_int_equal(hn_step_format(NULL, &s, small, sizeof(small)), -1);
    hn_step_close(c);
}

static void test_job_sanitised(void **state)
{
    (void)state;
    struct hn_step_client *c = client(NULL);
    struct hn_step s = step_of(1, 1.0);
    hn_step_set_identity(c, "my run=1\t\x01\xc3\xa9!", -1, -1, -1);
    check_format(c, &s, "hs1 job=my_run_1____! rank=3 lrank=1 world=16 step=1 dur=1");

    /* Longer than HN_STEP_JOB_MAX: cut there. */
    char job[128], want[256];
    for (int i = 0; i < 100; i++)
        job[i] = (char)('a' + i % 26);
    job[100] = '\0';
    hn_step_set_identity(c, job, -1, -1, -1);
    snprintf(want, sizeof(want), "hs1 job=%.*s rank=3 lrank=1 world=16 step=1 dur=1",
             HN_STEP_JOB_MAX, job);
    check_format(c, &s, want);
    const char *got;
    hn_step_identity_get(c, &got, NULL, NULL, NULL);
    assert_int_equal(strlen(got), HN_STEP_JOB_MAX);

    /* No job id: nothing the agent could attribute, so nothing is sent. */
    hn_step_set_identity(c, "", -1, -1, -1);
    check_format(c, &s, NULL);
    assert_int_equal(hn_step_report(c, &s), -1);
    assert_int_equal(hn_step_last_errno(c), EINVAL);
    hn_step_close(c);
}

/* ---- identity from the environment ---- */

static void test_identity_env(void **state)
{
    (void)state;
    clear_env();
    setenv("SLURM_JOB_ID", "777", 1);
    setenv("HOUSTON_JOB_ID", "ignored", 1);
    setenv("SLURM_PROCID", "9", 1);
    setenv("SLURM_LOCALID", "2", 1);
    setenv("SLURM_NTASKS", "64", 1);
    struct hn_step_client *c = hn_step_open();
    const char *job;
    int rank, lrank, world;
    hn_step_identity_get(c, &job, &rank, &lrank, &world);
    assert_string_equal(job, "777");
    assert_int_equal(rank, 9);
    assert_int_equal(lrank, 2);
    assert_int_equal(world, 64);
    hn_step_close(c);

    /* torchrun's variables win over Slurm's; an empty or invalid one counts as unset. */
    setenv("SLURM_JOB_ID", "", 1);
    setenv("RANK", "12", 1);
    setenv("LOCAL_RANK", "+4", 1);
    setenv("WORLD_SIZE", "100000001", 1); /* above HN_STEP_COUNT_MAX: the agent would refuse it */
    c = hn_step_open();
    hn_step_identity_get(c, &job, &rank, &lrank, &world);
    assert_string_equal(job, "ignored");
    assert_int_equal(rank, 12);
    assert_int_equal(lrank, 2);
    assert_int_equal(world, 64);

    /* Overrides: NULL, negative and above HN_STEP_COUNT_MAX keep what is there. */
    hn_step_set_identity(c, NULL, -1, 5, HN_STEP_COUNT_MAX + 1);
    hn_step_identity_get(c, &job, &rank, &lrank, &world);
    assert_string_equal(job, "ignored");
    assert_int_equal(rank, 12);
    assert_int_equal(lrank, 5);
    assert_int_equal(world, 64);
    hn_step_set_identity(c, NULL, HN_STEP_COUNT_MAX, -1, -1);
    hn_step_identity_get(c, &job, &rank, &lrank, &world);
    assert_int_equal(rank, HN_STEP_COUNT_MAX);
    hn_step_close(c);

    clear_env();
    c = hn_step_open();
    hn_step_identity_get(c, &job, &rank, &lrank, &world);
    assert_string_equal(job, "");
    assert_int_equal(rank, -1);
    assert_int_equal(lrank, -1);
    assert_int_equal(world, -1);
    hn_step_close(c);
}

/* ---- locale ---- */

/* Compiles locale `name` (e.g. de_DE.UTF-8) from glibc's sources into dir, so that the test
 * does not depend on which locales the machine generated. */
static void make_locale(const char *dir, const char *input, const char *name)
{
    char out[PATH_MAX];
    snprintf(out, sizeof(out), "%s/%s", dir, name);
    const char *argv[] = {"localedef", "-i", input, "-f", "UTF-8", out, NULL};
    int status = -1;
    int rc = hn_spawn_run(argv, NULL, 60000, NULL, NULL, &status);
    if (rc != 0 || status != 0)
        fail_msg("localedef -i %s failed (rc %d, exit %d): the locale test needs glibc's "
                 "locale sources (Debian package `locales`)",
                 input, rc, status);
}

/* Puts the C locale back even when test_locale fails half-way. */
static int locale_teardown(void **state)
{
    (void)state;
    setlocale(LC_NUMERIC, "C");
    unsetenv("LOCPATH");
    return 0;
}

static void test_locale(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/locales", tu_tmpdir());
    assert_int_equal(mkdir(dir, 0700), 0);
    make_locale(dir, "de_DE", "de_DE.UTF-8");
    make_locale(dir, "ps_AF", "ps_AF.UTF-8"); /* U+066B ARABIC DECIMAL SEPARATOR, two bytes */
    setenv("LOCPATH", dir, 1);

    struct hn_step_client *c = client(NULL);
    struct hn_step s = step_of(3, 1.25);
    s.forward_s = 0.000123;
    s.tflops = 1234567.5;
    const char *want = "hs1 job=42 rank=3 lrank=1 world=16 step=3 dur=1.25 fwd=0.000123 "
                       "tflops=1234567.5";
    static const char *const locales[] = {"de_DE.UTF-8", "ps_AF.UTF-8"};
    for (size_t i = 0; i < HN_ARRAY_LEN(locales); i++) {
        if (!setlocale(LC_NUMERIC, locales[i]))
            fail_msg("setlocale(LC_NUMERIC, %s) failed after localedef", locales[i]);
        char probe[32];
        snprintf(probe, sizeof(probe), "%.2f", 1.25);
        assert_string_not_equal(probe, "1.25"); /* the locale really is in effect */
        check_format(c, &s, want);
    }
    hn_step_close(c);
}

/* ---- sending ---- */

static void test_report_bound_socket(void **state)
{
    (void)state;
    char path[PATH_MAX];
    int rx = bind_dgram(tu_tmpdir(), "step.sock", path, sizeof(path));
    struct hn_step_client *c = client(path);
    struct hn_step s = step_of(11, 0.5);
    s.tokens = 2048;
    errno = 1234;
    assert_int_equal(hn_step_report(c, &s), 0);
    assert_int_equal(errno, 1234); /* the caller's errno is left alone */
    char got[HN_STEP_DGRAM_MAX + 1], want[HN_STEP_DGRAM_MAX];
    ssize_t n = recv(rx, got, sizeof(got) - 1, MSG_DONTWAIT);
    assert_true(n > 0);
    got[n] = '\0';
    assert_int_equal(hn_step_format(c, &s, want, sizeof(want)), (int)n);
    assert_string_equal(got, want);
    assert_string_equal(got, "hs1 job=42 rank=3 lrank=1 world=16 step=11 dur=0.5 tokens=2048");
    assert_int_equal(hn_step_dropped(c), 0);
    assert_int_equal(hn_step_last_errno(c), 0);

    /* The agent restarts: its new socket gets the next report with no reconnect. */
    close(rx);
    rx = bind_dgram(tu_tmpdir(), "step.sock", path, sizeof(path));
    assert_int_equal(hn_step_report(c, &s), 0);
    assert_true(recv(rx, got, sizeof(got), MSG_DONTWAIT) > 0);
    close(rx);
    unlink(path);
    hn_step_close(c);
}

/* hn_step_pause(): the notice's bytes, sent whole; an unknown kind or no job id is a drop. */
static void test_pause(void **state)
{
    (void)state;
    char path[PATH_MAX];
    int rx = bind_dgram(tu_tmpdir(), "pause.sock", path, sizeof(path));
    struct hn_step_client *c = client(path);
    char buf[HN_STEP_DGRAM_MAX + 1];
    assert_int_equal(hn_step_format_pause(c, 500, HN_STEP_PAUSE_CHECKPOINT, buf, sizeof(buf)),
                     (int)strlen("hs1 job=42 rank=3 lrank=1 world=16 step=500 pause=checkpoint"));
    assert_string_equal(buf, "hs1 job=42 rank=3 lrank=1 world=16 step=500 pause=checkpoint");
    hn_step_set_gpu(c, 5);
    errno = 4321;
    assert_int_equal(hn_step_pause(c, 18446744073709551615ull, HN_STEP_PAUSE_EVAL), 0);
    assert_int_equal(errno, 4321);
    ssize_t n = recv(rx, buf, sizeof(buf) - 1, MSG_DONTWAIT);
    assert_true(n > 0);
    buf[n] = '\0';
    assert_string_equal(
        buf, "hs1 job=42 rank=3 lrank=1 world=16 step=18446744073709551615 pause=eval gpu=5");
    assert_int_equal(hn_step_pause(c, 1, HN_STEP_PAUSE_OTHER), 0);
    assert_true(recv(rx, buf, sizeof(buf), MSG_DONTWAIT) > 0);
    assert_int_equal(hn_step_dropped(c), 0);
    assert_int_equal(hn_step_pause(c, 1, (enum hn_step_pause)0), -1);
    assert_int_equal(hn_step_pause(c, 1, (enum hn_step_pause)4), -1);
    assert_int_equal(hn_step_last_errno(c), EINVAL);
    assert_int_equal(hn_step_format_pause(c, 1, HN_STEP_PAUSE_CHECKPOINT, buf, 10), -1);
    assert_string_equal(buf, "");
    hn_step_close(c);
    clear_env();
    c = hn_step_open();
    assert_int_equal(hn_step_pause(c, 1, HN_STEP_PAUSE_CHECKPOINT), -1); /* no job id */
    assert_int_equal(hn_step_dropped(c), 1);
    assert_int_equal(hn_step_pause(NULL, 1, HN_STEP_PAUSE_CHECKPOINT), -1);
    hn_step_close(c);
    close(rx);
    unlink(path);
}

static void test_report_no_listener(void **state)
{
    (void)state;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/absent.sock", tu_tmpdir());
    struct hn_step_client *c = client(path);
    struct hn_step s = step_of(1, 1.0);
    assert_int_equal(hn_step_report(c, &s), -1);
    assert_int_equal(hn_step_report(c, &s), -1);
    assert_int_equal(hn_step_dropped(c), 2);
    assert_int_equal(hn_step_last_errno(c), ENOENT);

    /* A socket file nobody is bound to any more (an agent that died). */
    int rx = bind_dgram(tu_tmpdir(), "stale.sock", path, sizeof(path));
    close(rx);
    hn_step_set_socket(c, path);
    assert_int_equal(hn_step_report(c, &s), -1);
    assert_int_equal(hn_step_dropped(c), 3);
    assert_int_equal(hn_step_last_errno(c), ECONNREFUSED);
    unlink(path);

    /* A path no Unix socket address can hold. */
    char longpath[300];
    memset(longpath, 'x', sizeof(longpath) - 1);
    longpath[0] = '/';
    longpath[sizeof(longpath) - 1] = '\0';
    hn_step_set_socket(c, longpath);
    assert_int_equal(hn_step_report(c, &s), -1);
    assert_int_equal(hn_step_last_errno(c), ENAMETOOLONG);
    assert_int_equal(hn_step_dropped(c), 4);

    /* A step without a duration is dropped before anything is sent; NULLs are harmless. */
    hn_step_set_socket(c, "/nonexistent/step.sock");
    s.seconds = NAN;
    assert_int_equal(hn_step_report(c, &s), -1);
    assert_int_equal(hn_step_last_errno(c), EINVAL);
    assert_int_equal(hn_step_report(c, NULL), -1);
    assert_int_equal(hn_step_dropped(c), 6);
    hn_step_close(c);
    assert_int_equal(hn_step_report(NULL, &s), -1);
    assert_int_equal(hn_step_dropped(NULL), 0);
    assert_int_equal(hn_step_last_errno(NULL), 0);
    hn_step_set_identity(NULL, "x", 1, 1, 1);
    hn_step_set_socket(NULL, "x");
    hn_step_set_gpu(NULL, 1);
    hn_step_close(NULL);
}

/* A receiver that never reads: the client fills its queue, then drops without blocking. */
static void test_report_socket_full(void **state)
{
    (void)state;
    char path[PATH_MAX];
    int rx = bind_dgram(tu_tmpdir(), "full.sock", path, sizeof(path));
    struct hn_step_client *c = client(path);
    struct hn_step s = step_of(1, 1.0);
    int sent = 0;
    const int cap = 1000000; /* far beyond any queue: a client that never drops fails here */
    while (sent < cap && hn_step_report(c, &s) == 0)
        sent++;
    assert_true(sent > 0 && sent < cap);
    assert_int_equal(hn_step_dropped(c), 1);
    assert_int_equal(hn_step_last_errno(c), EAGAIN);
    assert_int_equal(hn_step_report(c, &s), -1);
    assert_int_equal(hn_step_dropped(c), 2);

    /* The agent catches up: reports go through again. */
    char buf[HN_STEP_DGRAM_MAX];
    int drained = 0;
    while (recv(rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
        drained++;
    assert_int_equal(drained, sent);
    assert_int_equal(hn_step_report(c, &s), 0);
    close(rx);
    unlink(path);
    hn_step_close(c);
}

#define THREADS      4
#define THREAD_STEPS 300
#define ALL_STEPS    ((uint64_t)THREADS * THREAD_STEPS)

struct sender {
    struct hn_step_client *c;
    int id;
    atomic_int *done;
};

static void *send_steps(void *arg)
{
    const struct sender *t = arg;
    for (int i = 0; i < THREAD_STEPS; i++) {
        struct hn_step s = step_of((uint64_t)t->id * THREAD_STEPS + (uint64_t)i, 0.5);
        s.tokens = t->id;
        (void)hn_step_report(t->c, &s);
    }
    atomic_fetch_add(t->done, 1);
    return NULL;
}

/* Several threads share one client: every datagram that arrives is whole and was sent once,
 * and what did not arrive was counted as dropped. */
static void test_report_threads(void **state)
{
    (void)state;
    char path[PATH_MAX];
    int rx = bind_dgram(tu_tmpdir(), "threads.sock", path, sizeof(path));
    struct hn_step_client *c = client(path);
    struct sender t[THREADS];
    pthread_t tid[THREADS];
    atomic_int done = 0;
    for (int i = 0; i < THREADS; i++) {
        t[i] = (struct sender){.c = c, .id = i, .done = &done};
        assert_int_equal(pthread_create(&tid[i], NULL, send_steps, &t[i]), 0);
    }
    static unsigned char seen[ALL_STEPS];
    memset(seen, 0, sizeof(seen));
    int received = 0;
    char buf[HN_STEP_DGRAM_MAX + 1];
    for (;;) {
        /* Read whether the senders run (the queue empties as they fill it) or have finished
         * (the rest); stop at an empty queue once all have finished. */
        int finished = atomic_load(&done) == THREADS;
        ssize_t n = recv(rx, buf, sizeof(buf) - 1, MSG_DONTWAIT);
        if (n < 0) {
            assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
            if (finished)
                break;
            struct pollfd pfd = {.fd = rx, .events = POLLIN};
            (void)poll(&pfd, 1, 10);
            continue;
        }
        buf[n] = '\0';
        static const char head[] = "hs1 job=42 rank=3 lrank=1 world=16 step=";
        assert_int_equal(strncmp(buf, head, sizeof(head) - 1), 0);
        uint64_t step = strtoull(buf + sizeof(head) - 1, NULL, 10);
        assert_true(step < ALL_STEPS);
        char want[HN_STEP_DGRAM_MAX];
        snprintf(want, sizeof(want), "%s%llu dur=0.5 tokens=%d", head, (unsigned long long)step,
                 (int)(step / THREAD_STEPS));
        assert_string_equal(buf, want);
        assert_int_equal(seen[step], 0);
        seen[step] = 1;
        received++;
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    assert_int_equal((uint64_t)received + hn_step_dropped(c), ALL_STEPS);
    assert_true(received > 0);
    close(rx);
    unlink(path);
    hn_step_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_every_field),
        cmocka_unit_test(test_format_optional_omitted),
        cmocka_unit_test(test_format_numbers),
        cmocka_unit_test(test_job_sanitised),
        cmocka_unit_test(test_identity_env),
        cmocka_unit_test_teardown(test_locale, locale_teardown),
        cmocka_unit_test(test_report_bound_socket),
        cmocka_unit_test(test_pause),
        cmocka_unit_test(test_report_no_listener),
        cmocka_unit_test(test_report_socket_full),
        cmocka_unit_test(test_report_threads),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
