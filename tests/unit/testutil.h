/*
 * testutil.h - helpers shared by the unit tests in tests/unit, so that each check and each bit
 * of scratch-file handling is written once.
 *
 * Header-only: every helper is static inline, so a test includes this file and uses what it
 * needs, and tests/CMakeLists.txt keeps building one source file per test program. A helper
 * fails the calling test through cmocka (assert_*, fail_msg) rather than returning an error.
 * The tu_ prefix marks what comes from here. Call from the test's main thread only:
 * tu_tmpdir() is one buffer per program.
 *
 *   fixtures and files  tu_fixture, tu_slurp, tu_write_file, tu_write_in, tu_replace_file
 *   scratch folders     tu_mkdtemp, tu_remove_tree; tu_tmpdir with the group fixtures
 *                       tu_tmpdir_setup and tu_tmpdir_teardown
 *   numbers             assert_near (named like cmocka's checks, beside which it is used)
 *   text                tu_next_line, tu_count
 *   /metrics text       tu_check_exposition, tu_collector_open/_cycle/_close
 *   time                tu_sleep_ms, tu_fakenvml_change
 *   a verb's output     tu_capture_begin, tu_capture_end
 */
#ifndef HN_TESTUTIL_H
#define HN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/collector.h"
#include "agent/expo.h"
#include "common/buf.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- fixtures and files ---- */

static inline const char *tu_fixture(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes $HN_FIXTURES/<fmt...> (tests/fixtures, set by CTest) into out and returns out. */
static inline const char *tu_fixture(char *out, size_t size, const char *fmt, ...)
{
    const char *dir = getenv("HN_FIXTURES");
    if (!dir || !*dir)
        fail_msg("HN_FIXTURES is not set (run through ctest)");
    int n = snprintf(out, size, "%s/", dir);
    assert_true(n > 0 && (size_t)n < size);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(out + n, size - (size_t)n, fmt, ap);
    va_end(ap);
    assert_true(m >= 0 && (size_t)m < size - (size_t)n);
    return out;
}

/* Reads a whole file of under 1 MiB into a NUL-terminated heap buffer the caller frees; its
 * length goes to *len when len is not NULL. A missing or larger file fails the test. */
static inline char *tu_slurp(const char *path, size_t *len)
{
    const size_t cap = (size_t)1 << 20;
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    char *buf = xmalloc(cap + 1);
    size_t n = fread(buf, 1, cap, f);
    assert_int_equal(ferror(f), 0);
    assert_int_equal(fclose(f), 0);
    if (n >= cap)
        fail_msg("%s is 1 MiB or more", path);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* Writes text to path, created or truncated, checking every step. */
static inline void tu_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot create %s", path);
    size_t n = strlen(text);
    assert_int_equal(fwrite(text, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* tu_write_file of dir/name; the path is also copied to out (size bytes) unless out is NULL. */
static inline void tu_write_in(char *out, size_t size, const char *dir, const char *name,
                               const char *text)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < sizeof(path));
    tu_write_file(path, text);
    if (out)
        assert_true(hn_strlcpy(out, path, size) < size);
}

/* Replaces path atomically (path.tmp, then rename: a new inode), as a script editing a file
 * that a running program watches would. */
static inline void tu_replace_file(const char *path, const char *text)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    assert_true(n > 0 && (size_t)n < sizeof(tmp));
    tu_write_file(tmp, text);
    assert_int_equal(rename(tmp, path), 0);
}

/* ---- scratch folders ---- */

/* Makes a new folder $TMPDIR/hn-test-<tag>-XXXXXX (TMPDIR defaults to /tmp); its path goes
 * to out. */
static inline void tu_mkdtemp(char *out, size_t size, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(out, size, "%s/hn-test-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
    assert_true(n > 0 && (size_t)n < size);
    if (!mkdtemp(out))
        fail_msg("mkdtemp %s failed", out);
}

static inline int tu_remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes path and everything under it, following no symbolic link. */
static inline void tu_remove_tree(const char *path)
{
    assert_int_equal(nftw(path, tu_remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* The test program's scratch folder, made by tu_tmpdir_setup and removed with all it holds by
 * tu_tmpdir_teardown (pass both to cmocka_run_group_tests). */
static inline char *tu_tmpdir(void)
{
    static char dir[PATH_MAX];
    return dir;
}

static inline int tu_tmpdir_setup(void **unused)
{
    (void)unused;
    tu_mkdtemp(tu_tmpdir(), PATH_MAX, "unit");
    return 0;
}

static inline int tu_tmpdir_teardown(void **unused)
{
    (void)unused;
    tu_remove_tree(tu_tmpdir());
    return 0;
}

/* ---- numbers ---- */

/* Fails the test unless actual is within tolerance of expected (|actual - expected| <=
 * tolerance; a NaN never is), printing both values and the caller's file and line:
 * "x: actual 0.49, expected 0.5 within 0.001". */
#define assert_near(actual, expected, tolerance)                                                   \
    tu_assert_near((actual), (expected), (tolerance), #actual, __FILE__, __LINE__)

static inline void tu_assert_near(double actual, double expected, double tolerance,
                                  const char *what, const char *file, int line)
{
    if (fabs(actual - expected) <= tolerance)
        return;
    print_error("%s: actual %.17g, expected %.17g within %g\n", what, actual, expected, tolerance);
    _fail(file, line);
}

/* ---- text ---- */

/* Copies the line at *pos, without its newline, into buf and moves *pos past it; returns 0 at
 * the end of the text. Every line must end in a newline and fit buf. */
static inline int tu_next_line(const char **pos, char *buf, size_t size)
{
    if (**pos == '\0')
        return 0;
    const char *nl = strchr(*pos, '\n');
    assert_non_null(nl);
    size_t n = (size_t)(nl - *pos);
    assert_true(n < size);
    memcpy(buf, *pos, n);
    buf[n] = '\0';
    *pos = nl + 1;
    return 1;
}

/* How many times needle occurs in hay, overlaps included. */
static inline int tu_count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ---- /metrics text ---- */

/*
 * Checks the Prometheus text rules the collectors keep: each family has a non-empty HELP line
 * followed at once by its TYPE line (gauge or counter), no family appears twice, its samples
 * follow contiguously with a number (or +Inf/-Inf) for value, and counter names end in _total,
 * except DCGM_* counters, which keep dcgm-exporter's names (docs/metrics.md).
 */
static inline void tu_check_exposition(const char *text)
{
    char family[128] = "";
    char seen[8192] = " ";
    size_t seen_len = 1;
    int want_type = 0; /* the last line was a HELP line */
    char line[2048];
    assert_non_null(text);
    for (const char *pos = text; tu_next_line(&pos, line, sizeof(line));) {
        size_t fl = strlen(family);
        if (strncmp(line, "# HELP ", 7) == 0) {
            assert_false(want_type);
            char *sp = strchr(line + 7, ' ');
            assert_non_null(sp);
            *sp = '\0';
            assert_true(sp[1] != '\0'); /* non-empty help */
            assert_true(line[7] != '\0');
            assert_true(hn_strlcpy(family, line + 7, sizeof(family)) < sizeof(family));
            char key[sizeof(family) + 2];
            (void)snprintf(key, sizeof(key), " %s ", family);
            assert_null(strstr(seen, key)); /* no family twice */
            int w = snprintf(seen + seen_len, sizeof(seen) - seen_len, "%s ", family);
            assert_true(w > 0 && (size_t)w < sizeof(seen) - seen_len);
            seen_len += (size_t)w;
            want_type = 1;
        } else if (strncmp(line, "# TYPE ", 7) == 0) {
            assert_true(want_type);
            want_type = 0;
            assert_int_equal(strncmp(line + 7, family, fl), 0);
            assert_int_equal(line[7 + fl], ' ');
            const char *type = line + 7 + fl + 1;
            if (strcmp(type, "counter") == 0) {
                if (strncmp(family, "DCGM_", 5) != 0)
                    assert_true(fl > 6 && strcmp(family + fl - 6, "_total") == 0);
            } else {
                assert_string_equal(type, "gauge");
            }
        } else {
            assert_false(want_type);
            assert_true(fl > 0);
            assert_int_equal(strncmp(line, family, fl), 0);
            assert_true(line[fl] == '{' || line[fl] == ' ');
            const char *value = strrchr(line, ' ');
            assert_non_null(value);
            double v = 0;
            if (strcmp(value + 1, "+Inf") != 0 && strcmp(value + 1, "-Inf") != 0)
                assert_int_equal(hn_parse_double(value + 1, &v), 0);
        }
    }
    assert_false(want_type);
}

/* Starts collector c on cfg (which must succeed) and gives b a 1 MiB cap; returns its state. */
static inline void *tu_collector_open(const struct hn_collector *c,
                                      const struct hn_agent_config *cfg, struct hn_buf *b)
{
    void *st = NULL;
    assert_int_equal(c->init(cfg, &st), 0);
    assert_non_null(st);
    hn_buf_init(b, (size_t)1 << 20);
    return st;
}

/* One agent cycle: collect, then render into b (reset first), which must not be truncated and
 * must pass tu_check_exposition. Returns what collect returned. */
static inline int tu_collector_cycle(const struct hn_collector *c, void *st, struct hn_buf *b)
{
    int rc = c->collect(st);
    hn_buf_reset(b);
    struct hn_expo e;
    hn_expo_init(&e, b);
    c->render(st, &e);
    assert_false(e.truncated);
    tu_check_exposition(b->data);
    return rc;
}

static inline void tu_collector_close(const struct hn_collector *c, void *st, struct hn_buf *b)
{
    hn_buf_fini(b);
    c->fini(st);
}

/* ---- sockets ---- */

/* A TCP port on 127.0.0.1 where nothing listens and nothing else can: *fd holds it bound (no
 * listen(), so connections to it are refused) until the test closes it. A port bound and
 * released at once could be taken by another process before the test connects. */
static inline unsigned tu_closed_port(int *fd)
{
    *fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(*fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(*fd, (struct sockaddr *)&a, &len), 0);
    return ntohs(a.sin_port);
}

/* ---- time ---- */

static inline void tu_sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Rewrites the fake NVML's state file while the library is open, then waits past the fake's
 * 50 ms re-read check (docs/fakenvml.md). */
static inline void tu_fakenvml_change(const char *state_path, const char *text)
{
    tu_replace_file(state_path, text);
    tu_sleep_ms(120);
}

/* ---- a verb's output ---- */

/* stdout and stderr sent to the files out and err (in the scratch folder, tu_tmpdir) while a
 * verb runs in this process: tu_capture_begin before, tu_capture_end after; then tu_slurp. */
struct tu_capture {
    char out[PATH_MAX], err[PATH_MAX];
    int saved_out, saved_err;
};

static inline void tu_capture_begin(struct tu_capture *c)
{
    (void)snprintf(c->out, sizeof(c->out), "%s/stdout", tu_tmpdir());
    (void)snprintf(c->err, sizeof(c->err), "%s/stderr", tu_tmpdir());
    (void)fflush(stdout);
    (void)fflush(stderr);
    int ofd = open(c->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int efd = open(c->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(ofd >= 0 && efd >= 0);
    c->saved_out = dup(STDOUT_FILENO);
    c->saved_err = dup(STDERR_FILENO);
    assert_true(c->saved_out >= 0 && c->saved_err >= 0);
    assert_int_equal(dup2(ofd, STDOUT_FILENO), STDOUT_FILENO);
    assert_int_equal(dup2(efd, STDERR_FILENO), STDERR_FILENO);
    close(ofd);
    close(efd);
}

static inline void tu_capture_end(struct tu_capture *c)
{
    (void)fflush(stdout);
    (void)fflush(stderr);
    assert_int_equal(dup2(c->saved_out, STDOUT_FILENO), STDOUT_FILENO);
    assert_int_equal(dup2(c->saved_err, STDERR_FILENO), STDERR_FILENO);
    close(c->saved_out);
    close(c->saved_err);
}

#endif
