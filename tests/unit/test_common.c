/*
 * test_common.c - the small common modules every verb uses: strict number parsing, bounded
 * string copies and trimming (util.h), the capped buffer (buf.h), the key = value config format
 * (conf.h), root-prefixed /proc and /sys reads (fsroot.h) and logging with rate-limited
 * complaints (log.h).
 *
 * Files are written under one mkdtemp directory removed at the end; stderr is redirected to a
 * file while a test checks what the logger wrote.
 */
#include "testutil.h"

#include "common/conf.h"
#include "common/fsroot.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>

/* ---- helpers ---- */

struct capture {
    int saved;
    int fd;
    char path[PATH_MAX];
};

/* Sends stderr to a temporary file until capture_end(). */
static void capture_begin(struct capture *c)
{
    (void)fflush(stderr);
    (void)snprintf(c->path, sizeof(c->path), "%s/stderr-XXXXXX", tu_tmpdir());
    c->fd = mkstemp(c->path);
    assert_true(c->fd >= 0);
    c->saved = dup(STDERR_FILENO);
    assert_true(c->saved >= 0);
    assert_int_equal(dup2(c->fd, STDERR_FILENO), STDERR_FILENO);
}

/* Restores stderr and returns what was written to it while captured, NUL-terminated. */
static size_t capture_end(struct capture *c, char *out, size_t size)
{
    (void)fflush(stderr);
    assert_int_equal(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
    close(c->saved);
    long n = hn_read_file(c->path, out, size);
    close(c->fd);
    unlink(c->path);
    assert_true(n >= 0);
    /* hn_read_file strips the final newline; the tests below want to see it. */
    size_t len = (size_t)n;
    if (len > 0 && len + 1 < size) {
        out[len++] = '\n';
        out[len] = '\0';
    }
    return len;
}

/* ---- util.h: parsing ---- */

static void test_parse_u64(void **unused)
{
    (void)unused;
    uint64_t v = 0;
    assert_int_equal(hn_parse_u64("42", 10, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(hn_parse_u64("  \t17 \n", 10, &v), 0);
    assert_int_equal(v, 17);
    assert_int_equal(hn_parse_u64("0", 10, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(hn_parse_u64("ff", 16, &v), 0);
    assert_int_equal(v, 255);
    assert_int_equal(hn_parse_u64("0x10", 16, &v), 0);
    assert_int_equal(v, 16);
    assert_int_equal(hn_parse_u64("18446744073709551615", 10, &v), 0);
    assert_true(v == UINT64_MAX);

    /* Failures leave *out untouched. */
    v = 7;
    assert_int_equal(hn_parse_u64("", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_u64("   ", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_u64("12x", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_u64("12 3", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_u64("x12", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_u64("-1", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_u64("  -0", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_u64("1.5", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_u64("18446744073709551616", 10, &v), -ERANGE);
    assert_int_equal(hn_parse_u64("99999999999999999999999", 10, &v), -ERANGE);
    assert_int_equal(v, 7);
}

static void test_parse_i64(void **unused)
{
    (void)unused;
    int64_t v = 0;
    assert_int_equal(hn_parse_i64("-42", 10, &v), 0);
    assert_int_equal(v, -42);
    assert_int_equal(hn_parse_i64(" 5 ", 10, &v), 0);
    assert_int_equal(v, 5);
    assert_int_equal(hn_parse_i64("9223372036854775807", 10, &v), 0);
    assert_true(v == INT64_MAX);
    assert_int_equal(hn_parse_i64("-9223372036854775808", 10, &v), 0);
    assert_true(v == INT64_MIN);

    v = 3;
    assert_int_equal(hn_parse_i64("", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_i64(" \t ", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_i64("-", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_i64("12 x", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_i64("-5k", 10, &v), -EINVAL);
    assert_int_equal(hn_parse_i64("9223372036854775808", 10, &v), -ERANGE);
    assert_int_equal(hn_parse_i64("-9223372036854775809", 10, &v), -ERANGE);
    assert_int_equal(v, 3);
}

static void test_parse_double(void **unused)
{
    (void)unused;
    double v = 0;
    assert_int_equal(hn_parse_double("3.5", &v), 0);
    assert_true(v == 3.5);
    assert_int_equal(hn_parse_double("  -0.25\n", &v), 0);
    assert_true(v == -0.25);
    assert_int_equal(hn_parse_double("1e3", &v), 0);
    assert_true(v == 1000.0);

    v = 9.0;
    assert_int_equal(hn_parse_double("", &v), -EINVAL);
    assert_int_equal(hn_parse_double("   ", &v), -EINVAL);
    assert_int_equal(hn_parse_double("1.5x", &v), -EINVAL);
    assert_int_equal(hn_parse_double("1.5 2", &v), -EINVAL);
    assert_int_equal(hn_parse_double("abc", &v), -EINVAL);
    assert_int_equal(hn_parse_double("nan", &v), -EINVAL);
    assert_int_equal(hn_parse_double(" NaN ", &v), -EINVAL);
    assert_int_equal(hn_parse_double("-nan", &v), -EINVAL);
    assert_int_equal(hn_parse_double("1e999", &v), -ERANGE);
    assert_int_equal(hn_parse_double("-1e999", &v), -ERANGE);
    assert_true(v == 9.0);
    /* Below the smallest normal double: the (subnormal, or zero) value, not an error. */
    assert_int_equal(hn_parse_double("1e-310", &v), 0);
    assert_true(v > 0 && v < 1e-300);
    assert_int_equal(hn_parse_double("1e-400", &v), 0);
    assert_true(v == 0);
}

/* ---- util.h: strings ---- */

static void test_strlcpy(void **unused)
{
    (void)unused;
    char dst[8];
    memset(dst, 'Z', sizeof(dst));
    assert_int_equal(hn_strlcpy(dst, "hello world", sizeof(dst)), 11);
    assert_string_equal(dst, "hello w");

    assert_int_equal(hn_strlcpy(dst, "1234567", sizeof(dst)), 7);
    assert_string_equal(dst, "1234567");

    assert_int_equal(hn_strlcpy(dst, "", sizeof(dst)), 0);
    assert_string_equal(dst, "");

    assert_int_equal(hn_strlcpy(dst, "abc", 1), 3);
    assert_string_equal(dst, "");

    /* size 0 writes nothing at all. */
    memset(dst, 'Z', sizeof(dst));
    assert_int_equal(hn_strlcpy(dst, "abc", 0), 3);
    assert_int_equal(dst[0], 'Z');
}

static void test_trim(void **unused)
{
    (void)unused;
    char a[] = "  a b \t\n";
    assert_ptr_equal(hn_trim(a), a);
    assert_string_equal(a, "a b");
    char b[] = "";
    assert_string_equal(hn_trim(b), "");
    char c[] = " \t\r\n ";
    assert_string_equal(hn_trim(c), "");
    char d[] = "abc";
    assert_string_equal(hn_trim(d), "abc");
    char e[] = "\tx";
    assert_string_equal(hn_trim(e), "x");
    char f[] = "y  ";
    assert_string_equal(hn_trim(f), "y");
}

/* ---- buf.h ---- */

static void test_buf_growth(void **unused)
{
    (void)unused;
    struct hn_buf b;
    hn_buf_init(&b, 1 << 20);
    char expect[5000];
    size_t elen = 0;
    for (int i = 0; i < 500; i++) {
        char piece[16];
        int n = snprintf(piece, sizeof(piece), "%d,", i);
        assert_int_equal(hn_buf_append(&b, piece, (size_t)n), 0);
        memcpy(expect + elen, piece, (size_t)n);
        elen += (size_t)n;
        /* Always NUL-terminated, whatever the growth step. */
        assert_int_equal(strlen(b.data), b.len);
        assert_true(b.cap >= b.len + 1);
    }
    expect[elen] = '\0';
    assert_int_equal(b.len, elen);
    assert_string_equal(b.data, expect);
    hn_buf_fini(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
}

static void test_buf_cap(void **unused)
{
    (void)unused;
    struct hn_buf b;
    hn_buf_init(&b, 10);
    assert_int_equal(hn_buf_puts(&b, "hello"), 0);
    assert_int_equal(hn_buf_puts(&b, "world!"), -ENOSPC);
    assert_int_equal(b.len, 5);
    assert_string_equal(b.data, "hello");
    /* Exactly up to the cap is allowed. */
    assert_int_equal(hn_buf_puts(&b, "world"), 0);
    assert_string_equal(b.data, "helloworld");
    assert_int_equal(hn_buf_append(&b, "x", 1), -ENOSPC);
    assert_string_equal(b.data, "helloworld");
    assert_int_equal(b.len, 10);
    /* Appending nothing to a full buffer is fine. */
    assert_int_equal(hn_buf_append(&b, "", 0), 0);
    assert_int_equal(hn_buf_reserve(&b, 11), -ENOSPC);
    assert_int_equal(hn_buf_reserve(&b, 10), 0);
    hn_buf_fini(&b);

    /* A buffer with max 0 still holds the empty string. */
    hn_buf_init(&b, 0);
    assert_int_equal(hn_buf_puts(&b, ""), 0);
    assert_non_null(b.data);
    assert_string_equal(b.data, "");
    assert_int_equal(hn_buf_puts(&b, "a"), -ENOSPC);
    hn_buf_fini(&b);
}

static void test_buf_printf(void **unused)
{
    (void)unused;
    struct hn_buf b;
    hn_buf_init(&b, 16);
    assert_int_equal(hn_buf_printf(&b, "%s", "0123456789"), 0);
    assert_int_equal(b.len, 10);
    /* 8 more bytes would make 18 > 16: refused, contents and terminator intact. */
    assert_int_equal(hn_buf_printf(&b, "%d-%d", 123456, 7), -ENOSPC);
    assert_int_equal(b.len, 10);
    assert_string_equal(b.data, "0123456789");
    /* What fits still goes in after a refusal. */
    assert_int_equal(hn_buf_printf(&b, "%c%03d", 'x', 5), 0);
    assert_string_equal(b.data, "0123456789x005");
    assert_int_equal(b.len, 14);
    hn_buf_fini(&b);

    /* printf that has to grow the allocation several times. */
    hn_buf_init(&b, 1 << 16);
    char big[3000];
    memset(big, 'q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(hn_buf_printf(&b, "<%s>", big), 0);
    assert_int_equal(b.len, sizeof(big) + 1);
    assert_int_equal(b.data[0], '<');
    assert_int_equal(b.data[b.len - 1], '>');
    assert_int_equal(b.data[b.len], '\0');
    hn_buf_fini(&b);
}

static void test_buf_reset_keeps_allocation(void **unused)
{
    (void)unused;
    struct hn_buf b;
    hn_buf_init(&b, 1 << 20);
    char big[1000];
    memset(big, 'a', sizeof(big));
    assert_int_equal(hn_buf_append(&b, big, sizeof(big)), 0);
    char *data = b.data;
    size_t cap = b.cap;
    hn_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_ptr_equal(b.data, data);
    assert_string_equal(b.data, "");
    assert_int_equal(hn_buf_puts(&b, "abc"), 0);
    assert_ptr_equal(b.data, data);
    assert_int_equal(b.cap, cap);
    assert_string_equal(b.data, "abc");
    assert_int_equal(hn_buf_printf(&b, "%d", 12345), 0);
    assert_ptr_equal(b.data, data);
    assert_string_equal(b.data, "abc12345");
    hn_buf_fini(&b);

    /* Reset of a buffer that never allocated stays empty and safe. */
    hn_buf_init(&b, 8);
    hn_buf_reset(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    hn_buf_fini(&b);
}

/* ---- conf.h ---- */

#define MAX_SETTINGS 16

struct settings {
    int n;
    char key[MAX_SETTINGS][64];
    char value[MAX_SETTINGS][4200];
    const char *fail_on; /* set() returns -1 for this key */
};

static int record(const char *key, const char *value, void *ctx)
{
    struct settings *s = ctx;
    if (s->fail_on && strcmp(key, s->fail_on) == 0)
        return -1;
    assert_true(s->n < MAX_SETTINGS);
    hn_strlcpy(s->key[s->n], key, sizeof(s->key[0]));
    hn_strlcpy(s->value[s->n], value, sizeof(s->value[0]));
    s->n++;
    return 0;
}

static struct settings *settings_new(void)
{
    struct settings *s = calloc(1, sizeof(*s));
    assert_non_null(s);
    return s;
}

static void test_conf_good(void **unused)
{
    (void)unused;
    char path[PATH_MAX], err[256] = "";
    tu_write_in(path, sizeof(path), tu_tmpdir(), "good.conf",
                "# a comment line\n"
                "listen = 127.0.0.1:9400\n"
                "\n"
                "   \t\n"
                "  interval=5   # trailing comment\n"
                "name = \"  a # not a comment  \"\n"
                "empty =\n"
                "path = /a/b=c\n"
                "quoted = \"x\" # comment after quotes\n"
                "last = no-newline");
    struct settings *s = settings_new();
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), 0);
    assert_int_equal(s->n, 7);
    assert_string_equal(s->key[0], "listen");
    assert_string_equal(s->value[0], "127.0.0.1:9400");
    assert_string_equal(s->key[1], "interval");
    assert_string_equal(s->value[1], "5");
    assert_string_equal(s->key[2], "name");
    assert_string_equal(s->value[2], "  a # not a comment  ");
    assert_string_equal(s->key[3], "empty");
    assert_string_equal(s->value[3], "");
    assert_string_equal(s->key[4], "path");
    assert_string_equal(s->value[4], "/a/b=c");
    assert_string_equal(s->key[5], "quoted");
    assert_string_equal(s->value[5], "x");
    assert_string_equal(s->key[6], "last");
    assert_string_equal(s->value[6], "no-newline");
    free(s);
}

static void test_conf_bad_line(void **unused)
{
    (void)unused;
    char path[PATH_MAX], err[PATH_MAX + 256] = "", want[PATH_MAX + 16];
    tu_write_in(path, sizeof(path), tu_tmpdir(), "bad.conf", "a = 1\n# fine\njunk line\nb = 2\n");
    struct settings *s = settings_new();
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), -1);
    (void)snprintf(want, sizeof(want), "%s:3:", path);
    assert_non_null(strstr(err, want));
    assert_int_equal(s->n, 1); /* stopped at the bad line */

    /* A line with no key is bad too. */
    memset(s, 0, sizeof(*s));
    tu_write_in(path, sizeof(path), tu_tmpdir(), "nokey.conf", "= value\n");
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), -1);
    (void)snprintf(want, sizeof(want), "%s:1:", path);
    assert_non_null(strstr(err, want));
    assert_int_equal(s->n, 0);
    free(s);
}

static void test_conf_set_fails(void **unused)
{
    (void)unused;
    char path[PATH_MAX], err[PATH_MAX + 256] = "", want[PATH_MAX + 16];
    tu_write_in(path, sizeof(path), tu_tmpdir(), "setfail.conf", "a = 1\n\nbad = 2\nc = 3\n");
    struct settings *s = settings_new();
    s->fail_on = "bad";
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), -1);
    (void)snprintf(want, sizeof(want), "%s:3:", path);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "bad"));
    assert_int_equal(s->n, 1);
    assert_string_equal(s->key[0], "a");
    free(s);
}

static void test_conf_missing_file(void **unused)
{
    (void)unused;
    char path[PATH_MAX], err[PATH_MAX + 256] = "";
    (void)snprintf(path, sizeof(path), "%s/does-not-exist.conf", tu_tmpdir());
    struct settings *s = settings_new();
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, strerror(ENOENT)));
    assert_int_equal(s->n, 0);
    free(s);
}

static void test_conf_long_line(void **unused)
{
    (void)unused;
    /* "k = " + value: a 4096-byte line is accepted, 4097 bytes is refused. */
    size_t size = (size_t)3 * 4096;
    char *text = malloc(size);
    assert_non_null(text);
    char path[PATH_MAX], err[PATH_MAX + 256] = "", want[PATH_MAX + 16];
    struct settings *s = settings_new();

    int n = snprintf(text, size, "a = 1\nk = ");
    memset(text + n, 'v', 4096 - 4);
    text[n + 4096 - 4] = '\n';
    text[n + 4096 - 3] = '\0';
    tu_write_in(path, sizeof(path), tu_tmpdir(), "line4096.conf", text);
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), 0);
    assert_int_equal(s->n, 2);
    assert_int_equal(strlen(s->value[1]), 4096 - 4);

    memset(s, 0, sizeof(*s));
    n = snprintf(text, size, "a = 1\nk = ");
    memset(text + n, 'v', 4096 - 3);
    text[n + 4096 - 3] = '\n';
    (void)snprintf(text + n + 4096 - 2, size - (size_t)n - 4096, "b = 2\n");
    tu_write_in(path, sizeof(path), tu_tmpdir(), "line4097.conf", text);
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), -1);
    (void)snprintf(want, sizeof(want), "%s:2:", path);
    assert_non_null(strstr(err, want));
    assert_int_equal(s->n, 1);

    /* A much longer line is refused before anything is set, its tail included. */
    memset(s, 0, sizeof(*s));
    n = snprintf(text, size, "k = ");
    memset(text + n, 'v', 4200);
    (void)snprintf(text + n + 4200, size - (size_t)n - 4200, "\nb = 2\n");
    tu_write_in(path, sizeof(path), tu_tmpdir(), "line-tail.conf", text);
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), -1);
    assert_int_equal(s->n, 0);
    free(text);
    free(s);
}

static void test_conf_big_file(void **unused)
{
    (void)unused;
    /* Files over 1 MiB are refused even when every line is fine. */
    char path[PATH_MAX], err[PATH_MAX + 256] = "";
    (void)snprintf(path, sizeof(path), "%s/big.conf", tu_tmpdir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    char line[1001];
    memset(line, '#', sizeof(line) - 2);
    line[sizeof(line) - 2] = '\n';
    line[sizeof(line) - 1] = '\0';
    for (int i = 0; i < 1100; i++)
        assert_true(fputs(line, f) >= 0);
    assert_int_equal(fclose(f), 0);
    struct settings *s = settings_new();
    assert_int_equal(hn_conf_load(path, record, s, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path));
    free(s);
}

/* ---- fsroot.h ---- */

static void test_path(void **unused)
{
    (void)unused;
    char out[64];
    assert_int_equal(hn_path(out, sizeof(out), "/tmp/root", "/sys/class/%s", "net"), 0);
    assert_string_equal(out, "/tmp/root/sys/class/net");
    assert_int_equal(hn_path(out, sizeof(out), "/tmp/root/", "/sys/class/%s", "net"), 0);
    assert_string_equal(out, "/tmp/root/sys/class/net");
    assert_int_equal(hn_path(out, sizeof(out), "/tmp/root//", "/proc/%d/stat", 12), 0);
    assert_string_equal(out, "/tmp/root/proc/12/stat");
    assert_int_equal(hn_path(out, sizeof(out), "", "/proc/loadavg"), 0);
    assert_string_equal(out, "/proc/loadavg");
    assert_int_equal(hn_path(out, sizeof(out), NULL, "/proc/loadavg"), 0);
    assert_string_equal(out, "/proc/loadavg");
    assert_int_equal(hn_path(out, sizeof(out), "/", "/proc/loadavg"), 0);
    assert_string_equal(out, "/proc/loadavg");

    /* "/r/proc/stat" is 12 characters: 13 bytes fit it exactly, 12 do not. */
    char small[15];
    assert_int_equal(hn_path(small, sizeof(small), "/r", "/proc/%s", "stat"), 0);
    assert_string_equal(small, "/r/proc/stat");
    assert_int_equal(hn_path(small, 13, "/r", "/proc/%s", "stat"), 0);
    assert_int_equal(hn_path(small, 12, "/r", "/proc/%s", "stat"), -ENAMETOOLONG);
    assert_int_equal(hn_path(small, sizeof(small), "/a/very/long/root", "/x"), -ENAMETOOLONG);
    assert_int_equal(hn_path(small, sizeof(small), "/root", "/sys/class/infiniband"),
                     -ENAMETOOLONG);
}

static void test_read_file(void **unused)
{
    (void)unused;
    char path[PATH_MAX], out[64];
    tu_write_in(path, sizeof(path), tu_tmpdir(), "hello", "hello\n");
    assert_int_equal(hn_read_file(path, out, sizeof(out)), 5);
    assert_string_equal(out, "hello");

    tu_write_in(path, sizeof(path), tu_tmpdir(), "crlf", "abc\r\n\n");
    assert_int_equal(hn_read_file(path, out, sizeof(out)), 3);
    assert_string_equal(out, "abc");

    tu_write_in(path, sizeof(path), tu_tmpdir(), "inner", "a\nb\n");
    assert_int_equal(hn_read_file(path, out, sizeof(out)), 3);
    assert_string_equal(out, "a\nb");

    tu_write_in(path, sizeof(path), tu_tmpdir(), "empty", "");
    memset(out, 'Z', sizeof(out));
    assert_int_equal(hn_read_file(path, out, sizeof(out)), 0);
    assert_string_equal(out, "");

    /* Capped at the buffer: size-1 bytes and a NUL. */
    tu_write_in(path, sizeof(path), tu_tmpdir(), "long", "0123456789\n");
    char five[5];
    assert_int_equal(hn_read_file(path, five, sizeof(five)), 4);
    assert_string_equal(five, "0123");

    assert_int_equal(hn_read_file(path, out, 0), -EINVAL);
    (void)snprintf(path, sizeof(path), "%s/nope", tu_tmpdir());
    assert_int_equal(hn_read_file(path, out, sizeof(out)), -ENOENT);
    assert_int_equal(hn_read_file(tu_tmpdir(), out, sizeof(out)), -EISDIR);
}

static void test_read_u64(void **unused)
{
    (void)unused;
    char path[PATH_MAX];
    uint64_t v = 0;
    tu_write_in(path, sizeof(path), tu_tmpdir(), "u1", "12345\n");
    assert_int_equal(hn_read_u64(path, &v), 0);
    assert_int_equal(v, 12345);
    tu_write_in(path, sizeof(path), tu_tmpdir(), "u2", " 77 \n");
    assert_int_equal(hn_read_u64(path, &v), 0);
    assert_int_equal(v, 77);

    v = 5;
    tu_write_in(path, sizeof(path), tu_tmpdir(), "u3", "abc\n");
    assert_int_equal(hn_read_u64(path, &v), -EINVAL);
    tu_write_in(path, sizeof(path), tu_tmpdir(), "u4", "-3\n");
    assert_int_equal(hn_read_u64(path, &v), -EINVAL);
    tu_write_in(path, sizeof(path), tu_tmpdir(), "u5", "");
    assert_int_equal(hn_read_u64(path, &v), -EINVAL);
    tu_write_in(path, sizeof(path), tu_tmpdir(), "u6", "99999999999999999999\n");
    assert_int_equal(hn_read_u64(path, &v), -ERANGE);
    tu_write_in(path, sizeof(path), tu_tmpdir(), "u7", "0x10\n"); /* decimal only */
    assert_int_equal(hn_read_u64(path, &v), -EINVAL);
    (void)snprintf(path, sizeof(path), "%s/nope", tu_tmpdir());
    assert_int_equal(hn_read_u64(path, &v), -ENOENT);
    assert_int_equal(v, 5);
}

/* ---- log.h ---- */

static void test_log_lines(void **unused)
{
    (void)unused;
    char got[4096], want[256];
    struct capture c = {0};

    hn_log_set_level(HN_LOG_INFO);
    capture_begin(&c);
    hn_warn("disk %d is %s", 3, "slow");
    hn_debug("not shown at info");
    hn_info("shown");
    capture_end(&c, got, sizeof(got));
    (void)snprintf(want, sizeof(want),
                   "warn houston[%d]: disk 3 is slow\ninfo houston[%d]: shown\n", (int)getpid(),
                   (int)getpid());
    assert_string_equal(got, want);

    hn_log_set_level(HN_LOG_ERR);
    capture_begin(&c);
    hn_warn("hidden");
    hn_err("boom");
    capture_end(&c, got, sizeof(got));
    (void)snprintf(want, sizeof(want), "error houston[%d]: boom\n", (int)getpid());
    assert_string_equal(got, want);

    hn_log_set_level(HN_LOG_DEBUG);
    capture_begin(&c);
    hn_debug("now shown");
    capture_end(&c, got, sizeof(got));
    (void)snprintf(want, sizeof(want), "debug houston[%d]: now shown\n", (int)getpid());
    assert_string_equal(got, want);
    hn_log_set_level(HN_LOG_INFO);

    /* A long message is cut but still one line ending in a newline. */
    char *lng = malloc(3000);
    assert_non_null(lng);
    memset(lng, 'm', 2999);
    lng[2999] = '\0';
    capture_begin(&c);
    hn_warn("%s", lng);
    size_t n = capture_end(&c, got, sizeof(got));
    free(lng);
    assert_true(n > 100 && n <= 1024);
    assert_int_equal(got[n - 1], '\n');
    assert_ptr_equal(strchr(got, '\n'), got + n - 1);
}

static void test_log_parse_level(void **unused)
{
    (void)unused;
    enum hn_log_level l = HN_LOG_ERR;
    assert_int_equal(hn_log_parse_level("warn", &l), 0);
    assert_int_equal(l, HN_LOG_WARN);
    assert_int_equal(hn_log_parse_level("DEBUG", &l), 0);
    assert_int_equal(l, HN_LOG_DEBUG);
    assert_int_equal(hn_log_parse_level("error", &l), 0);
    assert_int_equal(l, HN_LOG_ERR);
    assert_int_equal(hn_log_parse_level("info", &l), 0);
    assert_int_equal(l, HN_LOG_INFO);
    assert_int_equal(hn_log_parse_level("verbose", &l), -1);
    assert_int_equal(hn_log_parse_level("", &l), -1);
    assert_int_equal(l, HN_LOG_INFO);
}

static void test_complain(void **unused)
{
    (void)unused;
    char got[4096];
    struct capture c = {0};
    struct hn_complain cp;
    memset(&cp, 0, sizeof(cp));
    hn_log_set_level(HN_LOG_INFO);

    /* First complaint is logged; repeats within the interval are counted, not logged. */
    capture_begin(&c);
    hn_complain(&cp, "sensor %d unreadable", 4);
    hn_complain(&cp, "sensor %d unreadable", 4);
    hn_complain(&cp, "sensor %d unreadable", 4);
    capture_end(&c, got, sizeof(got));
    assert_int_equal(tu_count(got, "\n"), 1);
    assert_non_null(strstr(got, "warn houston["));
    assert_non_null(strstr(got, "sensor 4 unreadable"));
    assert_int_equal(cp.suppressed, 2);
    assert_int_equal(cp.active, 1);
    assert_true(cp.next_ns > hn_mono_ns());
    uint64_t first_interval = cp.interval_ns;
    assert_true(first_interval > 0);

    /* Once the interval has passed the next one is logged with the count, and the interval
     * grows. */
    cp.next_ns = 0;
    capture_begin(&c);
    hn_complain(&cp, "sensor %d unreadable", 4);
    capture_end(&c, got, sizeof(got));
    assert_int_equal(tu_count(got, "\n"), 1);
    assert_non_null(strstr(got, "2 similar messages suppressed"));
    assert_int_equal(cp.suppressed, 0);
    assert_true(cp.interval_ns > first_interval);

    /* Clearing says so once and resets the struct. */
    capture_begin(&c);
    hn_complain_clear(&cp, "sensor %d readable again", 4);
    hn_complain_clear(&cp, "sensor %d readable again", 4);
    capture_end(&c, got, sizeof(got));
    assert_int_equal(tu_count(got, "\n"), 1);
    assert_non_null(strstr(got, "info houston["));
    assert_non_null(strstr(got, "sensor 4 readable again"));
    assert_int_equal(cp.active, 0);
    assert_int_equal(cp.suppressed, 0);
    assert_int_equal(cp.next_ns, 0);

    /* After a clear, a new failure is reported at once. */
    capture_begin(&c);
    hn_complain(&cp, "sensor %d unreadable", 5);
    capture_end(&c, got, sizeof(got));
    assert_int_equal(tu_count(got, "\n"), 1);
    assert_non_null(strstr(got, "sensor 5 unreadable"));
    assert_null(strstr(got, "suppressed"));
    assert_int_equal(cp.interval_ns, first_interval);

    /* Clearing a complaint that never fired logs nothing. */
    struct hn_complain quiet;
    memset(&quiet, 0, sizeof(quiet));
    capture_begin(&c);
    hn_complain_clear(&quiet, "nothing to say");
    capture_end(&c, got, sizeof(got));
    assert_string_equal(got, "");
}

/* ---- main ---- */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_parse_i64),
        cmocka_unit_test(test_parse_double),
        cmocka_unit_test(test_strlcpy),
        cmocka_unit_test(test_trim),
        cmocka_unit_test(test_buf_growth),
        cmocka_unit_test(test_buf_cap),
        cmocka_unit_test(test_buf_printf),
        cmocka_unit_test(test_buf_reset_keeps_allocation),
        cmocka_unit_test(test_conf_good),
        cmocka_unit_test(test_conf_bad_line),
        cmocka_unit_test(test_conf_set_fails),
        cmocka_unit_test(test_conf_missing_file),
        cmocka_unit_test(test_conf_long_line),
        cmocka_unit_test(test_conf_big_file),
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_read_u64),
        cmocka_unit_test(test_log_lines),
        cmocka_unit_test(test_log_parse_level),
        cmocka_unit_test(test_complain),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
