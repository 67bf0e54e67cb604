/*
 * test_spawn.c - hn_spawn_run: output capture, exit codes, deadlines, caps, missing programs,
 * process-group kills, no zombies, and concurrent use from several threads.
 */
#include "testutil.h"

#include "common/spawn.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

static uint64_t elapsed_ms(uint64_t since_ns)
{
    return (hn_mono_ns() - since_ns) / 1000000u;
}

/* 1 while pid names a live process (not gone, not a zombie). Orphans are reparented to init,
 * which on some machines never reaps them, so a zombie counts as dead. */
static int alive(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int live = 1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "State:", 6) == 0) {
            live = strchr(line, 'Z') == NULL;
            break;
        }
    }
    fclose(f);
    return live;
}

/* After every test: the calling process has no child left to reap. */
static int no_children(void **state)
{
    (void)state;
    int st;
    assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    return 0;
}

static void test_echo(void **state)
{
    (void)state;
    struct hn_buf out;
    int trunc = -1, status = -1;
    const char *argv[] = {"echo", "hello", "world", NULL};

    hn_buf_init(&out, 1024);
    assert_int_equal(hn_spawn_run(argv, NULL, 5000, &out, &trunc, &status), 0);
    assert_string_equal(out.data, "hello world\n");
    assert_int_equal(trunc, 0);
    assert_int_equal(status, 0);
    /* The buffer is reset by each call, not appended to. */
    assert_int_equal(hn_spawn_run(argv, NULL, 5000, &out, &trunc, &status), 0);
    assert_string_equal(out.data, "hello world\n");
    hn_buf_fini(&out);
}

static void test_exit_codes_and_stderr(void **state)
{
    (void)state;
    struct hn_buf out;
    int status = -1;
    const char *f[] = {"false", NULL};
    const char *three[] = {"sh", "-c", "echo to-stderr >&2; echo to-stdout; exit 3", NULL};
    const char *killed[] = {"sh", "-c", "kill -KILL $$", NULL};

    hn_buf_init(&out, 1024);
    assert_int_equal(hn_spawn_run(f, NULL, 5000, &out, NULL, &status), 0);
    assert_int_equal(status, 1);
    assert_int_equal(hn_spawn_run(three, NULL, 5000, &out, NULL, &status), 0);
    assert_int_equal(status, 3);
    assert_string_equal(out.data, "to-stderr\nto-stdout\n");
    assert_int_equal(hn_spawn_run(killed, NULL, 5000, &out, NULL, &status), 0);
    assert_int_equal(status, 128 + SIGKILL);
    /* Output may be discarded entirely. */
    assert_int_equal(hn_spawn_run(three, NULL, 5000, NULL, NULL, NULL), 0);
    hn_buf_fini(&out);
}

static void test_environment_and_stdin(void **state)
{
    (void)state;
    struct hn_buf out;
    int status = -1;
    const char *env[] = {"HN_SPAWN_TEST=42", "PATH=/usr/bin:/bin", NULL};
    const char *argv[] = {"sh", "-c", "echo \"$HN_SPAWN_TEST\"; cat; echo \"${HOME:-nohome}\"",
                          NULL};

    hn_buf_init(&out, 1024);
    /* stdin is /dev/null: `cat` ends at once instead of waiting on the test's stdin. */
    assert_int_equal(hn_spawn_run(argv, env, 5000, &out, NULL, &status), 0);
    assert_string_equal(out.data, "42\nnohome\n");
    assert_int_equal(status, 0);
    hn_buf_fini(&out);
}

static void test_timeout(void **state)
{
    (void)state;
    struct hn_buf out;
    int status = -1;
    const char *argv[] = {"sleep", "5", NULL};

    hn_buf_init(&out, 1024);
    uint64_t t0 = hn_mono_ns();
    assert_int_equal(hn_spawn_run(argv, NULL, 200, &out, NULL, &status), -ETIMEDOUT);
    uint64_t ms = elapsed_ms(t0);
    printf("sleep 5 with a 200 ms deadline returned after %llu ms\n", (unsigned long long)ms);
    assert_true(ms >= 190 && ms < 4000); /* under sleep's 5 s, with room for a busy machine */
    assert_int_equal(status, 128 + SIGTERM);
    hn_buf_fini(&out);
}

/* A child that ignores SIGTERM is killed after the grace, and so is everything it started. The
 * deadline leaves sh time to set its trap first on a busy machine (a SIGTERM before it would
 * end sh with 143). */
static void test_timeout_sigkill_and_group(void **state)
{
    (void)state;
    struct hn_buf out;
    int status = -1;
    const char *argv[] = {"sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait", NULL};

    hn_buf_init(&out, 1024);
    uint64_t t0 = hn_mono_ns();
    assert_int_equal(hn_spawn_run(argv, NULL, 2000, &out, NULL, &status), -ETIMEDOUT);
    uint64_t ms = elapsed_ms(t0);
    printf("SIGTERM-ignoring child ended after %llu ms\n", (unsigned long long)ms);
    assert_true(ms >= 2000 + HN_SPAWN_GRACE_MS - 20 && ms < 6000);
    assert_int_equal(status, 128 + SIGKILL);
    int64_t grandchild = 0;
    assert_int_equal(hn_parse_i64(out.data, 10, &grandchild), 0);
    assert_true(grandchild > 1);
    for (int i = 0; i < 1000 && alive((pid_t)grandchild); i++)
        usleep(10000);
    assert_false(alive((pid_t)grandchild));
    hn_buf_fini(&out);
}

/* The child exits at once but leaves a helper holding the pipe: the call waits for the pipe
 * to close, until the deadline, then ends the helper too. The deadline is long enough for sh to
 * have exited by then on a busy machine. */
static void test_helper_holds_pipe(void **state)
{
    (void)state;
    struct hn_buf out;
    int status = -1;
    const char *argv[] = {"sh", "-c", "sleep 30 & echo $!", NULL};

    hn_buf_init(&out, 1024);
    assert_int_equal(hn_spawn_run(argv, NULL, 2000, &out, NULL, &status), -ETIMEDOUT);
    assert_int_equal(status, 0); /* sh itself had exited normally */
    int64_t helper = 0;
    assert_int_equal(hn_parse_i64(out.data, 10, &helper), 0);
    for (int i = 0; i < 1000 && alive((pid_t)helper); i++)
        usleep(10000);
    assert_false(alive((pid_t)helper));
    hn_buf_fini(&out);
}

static void test_output_cap(void **state)
{
    (void)state;
    struct hn_buf out;
    int trunc = 0, status = -1;
    const char *yes[] = {"yes", NULL};
    const char *seq[] = {"seq", "1", "200000", NULL};

    /* An endless flood: capped, the rest read and dropped, killed at the deadline. */
    hn_buf_init(&out, 1000);
    assert_int_equal(hn_spawn_run(yes, NULL, 2000, &out, &trunc, &status), -ETIMEDOUT);
    assert_int_equal(out.len, 1000);
    assert_int_equal(strlen(out.data), 1000);
    assert_int_equal(trunc, 1);
    assert_memory_equal(out.data, "y\ny\ny\n", 6);
    /* A finite flood past the cap completes: the child never blocks on a full pipe. */
    assert_int_equal(hn_spawn_run(seq, NULL, 10000, &out, &trunc, &status), 0);
    assert_int_equal(status, 0);
    assert_int_equal(trunc, 1);
    assert_int_equal(out.len, 1000);
    assert_memory_equal(out.data, "1\n2\n3\n", 6);
    hn_buf_fini(&out);
}

static void test_missing_program(void **state)
{
    (void)state;
    struct hn_buf out;
    int status = 0;
    const char *missing[] = {"hn-no-such-program-here", NULL};
    const char *missing_path[] = {"/nonexistent/bin/scontrol", "show", NULL};
    char dir[PATH_MAX];
    char path[PATH_MAX + 32];

    hn_buf_init(&out, 1024);
    assert_int_equal(hn_spawn_run(missing, NULL, 1000, &out, NULL, &status), -ENOENT);
    assert_int_equal(hn_spawn_run(missing_path, NULL, 1000, &out, NULL, &status), -ENOENT);

    /* A file that exists but may not be executed. */
    tu_mkdtemp(dir, sizeof(dir), "spawn");
    (void)snprintf(path, sizeof(path), "%s/not-executable", dir);
    tu_write_file(path, "#!/bin/sh\necho hi\n");
    assert_int_equal(chmod(path, 0644), 0);
    const char *noexec[] = {path, NULL};
    int rc = hn_spawn_run(noexec, NULL, 1000, &out, NULL, &status);
    /* root may execute nothing without an x bit either; both answers are clear errors. */
    assert_true(rc == -EACCES || rc == -ENOEXEC);
    tu_remove_tree(dir);
    hn_buf_fini(&out);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    const char *empty[] = {NULL};
    const char *blank[] = {"", NULL};
    const char *ok[] = {"true", NULL};
    int status = 0;

    assert_int_equal(hn_spawn_run(empty, NULL, 1000, NULL, NULL, &status), -EINVAL);
    assert_int_equal(hn_spawn_run(blank, NULL, 1000, NULL, NULL, &status), -EINVAL);
    assert_int_equal(hn_spawn_run(NULL, NULL, 1000, NULL, NULL, &status), -EINVAL);
    assert_int_equal(hn_spawn_run(ok, NULL, 0, NULL, NULL, &status), -EINVAL);
    assert_int_equal(hn_spawn_run(ok, NULL, -5, NULL, NULL, &status), -EINVAL);
}

/* A caller that blocks or ignores SIGTERM (a daemon using signalfd) must not pass that on:
 * the child still dies of SIGTERM at its deadline. */
static void test_caller_signal_state(void **state)
{
    (void)state;
    sigset_t term, old;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
    int status = -1;
    const char *argv[] = {"sleep", "5", NULL};

    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &term, &old), 0);
    sigaction(SIGPIPE, &ign, &old_pipe);
    uint64_t t0 = hn_mono_ns();
    assert_int_equal(hn_spawn_run(argv, NULL, 200, NULL, NULL, &status), -ETIMEDOUT);
    assert_int_equal(status, 128 + SIGTERM);
    assert_true(elapsed_ms(t0) < 4000);
    sigaction(SIGPIPE, &old_pipe, NULL);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}

#define THREADS 4
#define RUNS    25

/* One thread's share of test_threads: its number in, its count of bad runs out. */
struct worker {
    pthread_t thread;
    long id;
    long failures;
};

static void *spawn_many(void *arg)
{
    struct worker *w = arg;
    char word[32];
    char want[40];
    struct hn_buf out;

    snprintf(word, sizeof(word), "thread-%ld", w->id);
    snprintf(want, sizeof(want), "%s\n", word);
    hn_buf_init(&out, 256);
    for (int i = 0; i < RUNS; i++) {
        const char *argv[] = {"echo", word, NULL};
        int status = -1;
        if (hn_spawn_run(argv, NULL, 10000, &out, NULL, &status) != 0 || status != 0 ||
            strcmp(out.data, want) != 0)
            w->failures++;
    }
    hn_buf_fini(&out);
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    struct worker w[THREADS];

    for (long i = 0; i < THREADS; i++) {
        w[i].id = i;
        w[i].failures = 0;
        assert_int_equal(pthread_create(&w[i].thread, NULL, spawn_many, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(w[i].thread, NULL), 0);
        assert_int_equal(w[i].failures, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_echo, no_children),
        cmocka_unit_test_teardown(test_exit_codes_and_stderr, no_children),
        cmocka_unit_test_teardown(test_environment_and_stdin, no_children),
        cmocka_unit_test_teardown(test_timeout, no_children),
        cmocka_unit_test_teardown(test_timeout_sigkill_and_group, no_children),
        cmocka_unit_test_teardown(test_helper_holds_pipe, no_children),
        cmocka_unit_test_teardown(test_output_cap, no_children),
        cmocka_unit_test_teardown(test_missing_program, no_children),
        cmocka_unit_test_teardown(test_bad_arguments, no_children),
        cmocka_unit_test_teardown(test_caller_signal_state, no_children),
        cmocka_unit_test_teardown(test_threads, no_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
