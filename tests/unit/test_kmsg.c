/*
 * test_kmsg.c - Xid/SXid line parsing and the kernel-log follower, over the real lines and
 * logs in tests/fixtures/xid (see its SOURCE.md).
 */
#include "testutil.h"

#include "agent/kmsg.h"
#include "common/xid.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>

static const char *fixture(const char *name)
{
    static char path[PATH_MAX];
    return tu_fixture(path, sizeof(path), "xid/%s", name);
}

/* Parses exactly the bytes of s (copied to a buffer of that size, so ASan sees overreads). */
static int parse(const char *s, struct hn_xid_event *ev)
{
    size_t n = strlen(s);
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, s, n); /* NOLINT(bugprone-not-null-terminated-result): unterminated on purpose */
    memset(ev, 0x5a, sizeof(*ev));
    int r = hn_kmsg_parse_line(copy, n, ev);
    free(copy);
    return r;
}

static void use_utc(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
}

/* ---- the fixtures named in the acceptance criteria ---- */

static void test_lines_csv(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_slurp(fixture("lines.csv"), &len);
    char err[128];
    struct hn_csv_reader r;
    hn_csv_reader_init(&r, text, len);
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 1);
    assert_string_equal(r.field[0], "raw_line");
    assert_string_equal(r.field[4], "kind");
    int rows = 0, rc;
    while ((rc = hn_csv_reader_next(&r, err, sizeof(err))) == 1) {
        struct hn_xid_event ev;
        rows++;
        if (parse(r.field[0], &ev) != 1)
            fail_msg("line %u not parsed: %s", r.rec_line, r.field[0]);
        assert_int_equal(ev.code, strtoul(r.field[1], NULL, 10));
        assert_string_equal(ev.pci, r.field[2]);
        assert_int_equal(ev.kind, strcmp(r.field[4], "sxid") == 0 ? HN_SXID : HN_XID);
        assert_true(strlen(ev.msg) < sizeof(ev.msg));
    }
    assert_int_equal(rc, 0);
    assert_int_equal(rows, 145);
    hn_csv_reader_fini(&r);
    free(text);
}

static void test_lines_invalid_csv(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_slurp(fixture("lines_invalid.csv"), &len);
    char err[128];
    struct hn_csv_reader r;
    hn_csv_reader_init(&r, text, len);
    assert_int_equal(hn_csv_reader_next(&r, err, sizeof(err)), 1);
    int rows = 0, rc;
    while ((rc = hn_csv_reader_next(&r, err, sizeof(err))) == 1) {
        struct hn_xid_event ev;
        rows++;
        if (parse(r.field[0], &ev) != 0)
            fail_msg("line %u parsed: %s", r.rec_line, r.field[0]);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(rows, 7);
    hn_csv_reader_fini(&r);
    free(text);
}

/* Reads a whole fixture once through the follower. */
static int read_all(const char *name, struct hn_xid_event *ev, int max, struct hn_kmsg_stats *st)
{
    char err[256] = "";
    struct hn_kmsg *k =
        hn_kmsg_open(fixture(name), HN_KMSG_FROM_START | HN_KMSG_ONESHOT, err, sizeof(err));
    if (!k)
        fail_msg("%s", err);
    int total = 0, n;
    while ((n = hn_kmsg_read(k, ev + total, max - total)) > 0)
        total += n;
    assert_int_equal(n, 0);
    hn_kmsg_get_stats(k, st);
    hn_kmsg_close(k);
    return total;
}

static void test_dmesg_xid_119(void **state)
{
    (void)state;
    use_utc();
    struct hn_xid_event ev[16];
    struct hn_kmsg_stats st;
    int n = read_all("dmesg-with-xid-119.log", ev, 16, &st);
    assert_int_equal(n, 5);
    static const int pids[] = {2024380, 2024380, 2024380, 1263500, 1240590};
    for (int i = 0; i < n; i++) {
        assert_int_equal(ev[i].kind, HN_XID);
        assert_int_equal(ev[i].code, 119);
        assert_string_equal(ev[i].pci, "PCI:0000:9b:00");
        assert_int_equal(ev[i].pid, pids[i]);
        assert_int_equal(ev[i].ts_kind, HN_TS_WALL);
        assert_non_null(strstr(ev[i].msg, "Timeout after 6s of waiting for RPC response"));
    }
    /* dmesg -T prints local time; with TZ=UTC, Sun Feb 23 16:24:18 2025 is 1740327858. */
    assert_true(ev[0].ts == 1740327858.0);
    assert_true(ev[4].ts == 1740327858.0 + 5 * 60 + 55);
    assert_string_equal(ev[0].msg, "pid=2024380, name=nvidia-smi, Timeout after 6s of waiting "
                                   "for RPC response from GPU4 GSP! Expected function 103 "
                                   "(GSP_RM_ALLOC) (0x2081 0x4).");
    assert_int_equal(st.lines, 43);
    assert_int_equal(st.xid, 5);
    assert_int_equal(st.sxid, 0);
    assert_int_equal(st.malformed, 0);
    assert_int_equal(st.oversized, 0);
}

static void test_dmesg_iso_memory(void **state)
{
    (void)state;
    struct hn_xid_event ev[32];
    struct hn_kmsg_stats st;
    int n = read_all("memory-dmesg.decode.iso.log", ev, 32, &st);
    assert_int_equal(n, 17);
    int x13 = 0, x43 = 0;
    for (int i = 0; i < n; i++) {
        assert_string_equal(ev[i].pci, "PCI:0000:38:00");
        assert_int_equal(ev[i].ts_kind, HN_TS_WALL);
        x13 += ev[i].code == 13;
        x43 += ev[i].code == 43;
        if (ev[i].code == 13)
            assert_int_equal(ev[i].pid, -1); /* pid='<unknown>' */
    }
    assert_int_equal(x13, 16);
    assert_int_equal(x43, 1);
    /* 2025-01-21T04:41:44,283302+00:00, whatever the local zone. */
    assert_true(fabs(ev[0].ts - (1737434504.0 + 0.283302)) < 1e-5);
    assert_int_equal(ev[16].code, 43);
    assert_int_equal(ev[16].pid, 2924364);
    assert_string_equal(ev[16].msg, "pid=2924364, name=pt_main_thread, Ch 00000008");
    assert_int_equal(st.lines, 24); /* the last line has no newline; ONESHOT counts it */
}

static void test_kmsg_records(void **state)
{
    (void)state;
    size_t len;
    char *text = tu_slurp(fixture("kmsg.1.log"), &len);
    const char *p = text, *end = text + len;
    uint64_t prev = 0;
    int records = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct hn_kmsg_record rec;
        assert_int_equal(hn_kmsg_parse_record(p, n, &rec), 0);
        assert_int_equal(rec.prio, 6);
        assert_int_equal(rec.flag, '-');
        if (records == 0) {
            assert_int_equal(rec.seq, 3964);
            assert_int_equal(rec.usec, 206764307);
            assert_int_equal(rec.msg_len, strlen("nvidia-nvswitch2: open (major=510)"));
            assert_memory_equal(rec.msg, "nvidia-nvswitch2: open (major=510)", rec.msg_len);
        }
        assert_true(rec.seq > prev);
        prev = rec.seq;
        assert_ptr_equal(rec.msg, (const char *)memchr(p, ';', n) + 1);
        records++;
        p += n + 1;
    }
    assert_int_equal(records, 47);
    free(text);

    struct hn_xid_event ev[4];
    struct hn_kmsg_stats st;
    assert_int_equal(read_all("kmsg.1.log", ev, 4, &st), 0);
    assert_int_equal(st.lines, 47);
    assert_int_equal(read_all("kmsg.2.peermem.log", ev, 4, &st), 0);
    assert_int_equal(st.lines, 8);
    assert_int_equal(st.malformed, 0);
}

/* ---- parser details ---- */

static void test_prefix_styles(void **state)
{
    (void)state;
    use_utc();
    struct hn_xid_event ev;
    const char *tail = "NVRM: Xid (PCI:0000:9b:00): 119, pid=42, name=x, Timeout";

    char line[512];
    snprintf(line, sizeof(line), "4,1234,5678901,-;%s\n SUBSYSTEM=pci\n DEVICE=+pci:0000", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(ev.ts_kind, HN_TS_BOOT);
    assert_true(fabs(ev.ts - 5.678901) < 1e-9);
    assert_int_equal(ev.pid, 42);
    assert_string_equal(ev.msg, "pid=42, name=x, Timeout");

    snprintf(line, sizeof(line), "[  123.456] %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(ev.ts_kind, HN_TS_BOOT);
    assert_true(fabs(ev.ts - 123.456) < 1e-9);

    snprintf(line, sizeof(line), "<4>[   12.500000] %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_true(fabs(ev.ts - 12.5) < 1e-9);

    snprintf(line, sizeof(line), "Feb 23 16:24:18 gpu-node-7 kernel: %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(ev.ts_kind, HN_TS_NONE);
    assert_true(ev.ts == 0);
    assert_int_equal(ev.code, 119);

    snprintf(line, sizeof(line), "2025-02-23T16:24:18+0000 gpu-node-7 kernel: %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(ev.ts_kind, HN_TS_WALL);
    assert_true(ev.ts == 1740327858.0);

    snprintf(line, sizeof(line), "2025-02-23T17:24:18.250+01:00 gpu-node-7 kernel: %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_true(fabs(ev.ts - 1740327858.25) < 1e-6);

    snprintf(line, sizeof(line), "2025-02-23T16:24:18Z %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_true(ev.ts == 1740327858.0);

    snprintf(line, sizeof(line), "kern  :warn  : [ 7.25] %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_true(fabs(ev.ts - 7.25) < 1e-9);

    /* Not times: the report is still found, the time is left at 0. */
    snprintf(line, sizeof(line), "[...] %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(ev.ts_kind, HN_TS_NONE);
    snprintf(line, sizeof(line), "[Sun Foo 23 16:24:18 2025] %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(ev.ts_kind, HN_TS_NONE);
    snprintf(line, sizeof(line), "2025-13-23T16:24:18Z %s", tail);
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(ev.ts_kind, HN_TS_NONE);
}

static void test_fields(void **state)
{
    (void)state;
    struct hn_xid_event ev;
    assert_int_equal(parse("NVRM: Xid (PCI:0000:04:00): 69", &ev), 1);
    assert_int_equal(ev.code, 69);
    assert_int_equal(ev.pid, -1);
    assert_string_equal(ev.msg, "");
    assert_int_equal(ev.ts_kind, HN_TS_NONE);

    assert_int_equal(parse("NVRM: Xid (PCI:0000:01:00): 31, pid=XXX", &ev), 1);
    assert_int_equal(ev.pid, -1);
    assert_string_equal(ev.msg, "pid=XXX");

    assert_int_equal(parse("NVRM: Xid (PCI:0000:01:00): 31, pid=123", &ev), 1);
    assert_int_equal(ev.pid, 123);
    assert_int_equal(parse("NVRM: Xid (PCI:0000:01:00): 31, pid=99999999999, x", &ev), 1);
    assert_int_equal(ev.pid, -1);

    assert_int_equal(parse("nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, "
                           "Link 32 egress non-posted PRIV error\r",
                           &ev),
                     1);
    assert_int_equal(ev.kind, HN_SXID);
    assert_int_equal(ev.pid, -1);
    assert_string_equal(ev.msg, "Non-fatal, Link 32 egress non-posted PRIV error");

    /* Control bytes are replaced. */
    assert_int_equal(parse("NVRM: Xid (PCI:0000:01:00): 31, a\x01"
                           "b\x7f"
                           "c\td",
                           &ev),
                     1);
    assert_string_equal(ev.msg, "a?b?c?d");

    /* A first malformed report does not hide a good one later in the line. */
    assert_int_equal(parse("NVRM: Xid (bad): 1 NVRM: Xid (PCI:0000:02:00): 48, DBE", &ev), 1);
    assert_int_equal(ev.code, 48);
    assert_string_equal(ev.pci, "PCI:0000:02:00");
}

static void test_rejects(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "NVRM: Xid (PCI:0000:9b:00): 119abc, x",
        "NVRM: Xid (PCI:0000:9b:00): 1234567890, x",
        "NVRM: Xid (PCI:0000:9b:00) 119, no colon",
        "NVRM: Xid (PCI:0000:9b:00):",
        "NVRM: Xid (PCI:zzzz:9b:00): 119, x",
        "NVRM: Xid (PCI:0000:9b): 119, x",
        "NVRM: Xid (PCI:000:9b:00): 119, x",
        "NVRM: Xid (PCI:0000:9b:00.10): 119, x",
        "NVRM: Xid (PCI:0000:9b:00.): 119, x",
        "NVRM: Xid (PCI:0000:9b:00",
        "NVRM: Xid (",
        "NVRM: Xid (PCI:0000:9b:00 0000000000000000000000000000000000000000): 1",
        "Xid (PCI:0000:9b:00): 119, no NVRM",
        "nvidia-nvswitch0: FooSXid (PCI:0000:05:00.0): 12028, x",
        "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): -1, x",
        "6,1,2,-;NVRM: Xid",
        "NVRM: GPU4 RPC history (CPU -> GSP):",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct hn_xid_event ev;
        if (parse(bad[i], &ev) != 0)
            fail_msg("parsed: %s", bad[i]);
    }
    struct hn_xid_event ev;
    assert_int_equal(hn_kmsg_parse_line(NULL, 10, &ev), 0);
    assert_int_equal(hn_kmsg_parse_line("x", 1, NULL), 0);
    /* Bytes after a NUL are still looked at; the length rules, not the terminator. */
    static const char nul[] = "junk\0NVRM: Xid (PCI:0000:01:00): 31, x";
    assert_int_equal(hn_kmsg_parse_line(nul, sizeof(nul) - 1, &ev), 1);
}

static void test_truncations(void **state)
{
    (void)state;
    /* Every prefix of real lines in every style: never a crash or an overread (ASan). */
    static const char *const lines[] = {
        "6,3973,227996636,-;NVRM: Xid (PCI:0000:9b:00): 119, pid=1, name=a, b",
        "[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, x",
        /* One line, split to fit. NOLINTNEXTLINE(bugprone-suspicious-missing-comma) */
        "kern  :warn  : 2025-01-21T04:41:44,283302+00:00 NVRM: Xid (PCI:0000:38:00): 13, "
        "pid='<unknown>', name=<unknown>, Graphics",
        "[131453.740743] nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 20034, Fatal, Link 30",
        "2025-02-23T17:24:18.250+01:00 host kernel: NVRM: Xid (0000:03:00): 14, Channel",
    };
    for (size_t l = 0; l < sizeof(lines) / sizeof(lines[0]); l++) {
        size_t n = strlen(lines[l]);
        for (size_t cut = 0; cut <= n; cut++) {
            char *copy = malloc(cut ? cut : 1);
            assert_non_null(copy);
            memcpy(copy, lines[l], cut);
            struct hn_xid_event ev;
            int r = hn_kmsg_parse_line(copy, cut, &ev);
            assert_true(r == 0 || r == 1);
            if (r == 1)
                assert_true(strlen(ev.msg) < sizeof(ev.msg) && strlen(ev.pci) < sizeof(ev.pci));
            free(copy);
        }
    }
}

static void test_long_message_utf8(void **state)
{
    (void)state;
    char line[1024];
    int head = snprintf(line, sizeof(line), "NVRM: Xid (PCI:0000:01:00): 31, ");
    /* 254 'a' then a two-byte character that straddles the 255-byte cut. */
    memset(line + head, 'a', 254);
    memcpy(line + head + 254, "\xC3\xA9zzz", 6);
    line[head + 260] = '\0';
    struct hn_xid_event ev;
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(strlen(ev.msg), 254);

    memset(line + head, 'b', 400);
    line[head + 400] = '\0';
    assert_int_equal(parse(line, &ev), 1);
    assert_int_equal(strlen(ev.msg), 255);
}

/* ---- follower ---- */

/* A scratch folder with the path of a log file in it (not created). */
struct tmpdir {
    char dir[PATH_MAX];
    char log[PATH_MAX + 16];
};

static void make_tmp(struct tmpdir *t)
{
    tu_mkdtemp(t->dir, sizeof(t->dir), "kmsg");
    (void)snprintf(t->log, sizeof(t->log), "%s/kern.log", t->dir);
}

static void append(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

#define XID_LINE(code) "[  1.0] NVRM: Xid (PCI:0000:9b:00): " #code ", pid=1, name=t, x\n"

static void test_follow_file(void **state)
{
    (void)state;
    struct tmpdir t;
    make_tmp(&t);
    append(t.log, XID_LINE(79) "some other line\n");

    char err[256];
    struct hn_kmsg *k = hn_kmsg_open(t.log, 0, err, sizeof(err));
    assert_non_null(k);
    assert_true(hn_kmsg_fd(k) >= 0);
    struct hn_xid_event ev[8];
    assert_int_equal(hn_kmsg_read(k, ev, 8), 0); /* started at the end */

    append(t.log, XID_LINE(48));
    assert_int_equal(hn_kmsg_read(k, ev, 8), 1);
    assert_int_equal(ev[0].code, 48);

    /* A line arriving in pieces counts once, when its newline is there. */
    append(t.log, "[  2.0] NVRM: Xid (PCI:0000:9b:00): 9");
    assert_int_equal(hn_kmsg_read(k, ev, 8), 0);
    append(t.log, "4, tail\n");
    assert_int_equal(hn_kmsg_read(k, ev, 8), 1);
    assert_int_equal(ev[0].code, 94);
    assert_string_equal(ev[0].msg, "tail");

    /* An oversized line is skipped, counted once, and the next line is read. */
    char *big = malloc((size_t)3 * HN_KMSG_LINE_MAX + 2);
    assert_non_null(big);
    memset(big, 'x', (size_t)3 * HN_KMSG_LINE_MAX);
    memcpy(big + 100, "NVRM: Xid (PCI:0000:9b:00): 31, hidden", 38);
    big[(size_t)3 * HN_KMSG_LINE_MAX] = '\n';
    big[(size_t)3 * HN_KMSG_LINE_MAX + 1] = '\0';
    append(t.log, big);
    free(big);
    append(t.log, XID_LINE(63));
    assert_int_equal(hn_kmsg_read(k, ev, 8), 1);
    assert_int_equal(ev[0].code, 63);

    /* Truncated in place (copytruncate): read from the start again. */
    assert_int_equal(truncate(t.log, 0), 0);
    append(t.log, XID_LINE(64));
    assert_int_equal(hn_kmsg_read(k, ev, 8), 1);
    assert_int_equal(ev[0].code, 64);

    /* Replaced (rename + create): the old file's unterminated last line still counts. */
    append(t.log, "[  3.0] NVRM: Xid (PCI:0000:9b:00): 95, last");
    char old[PATH_MAX + 32];
    snprintf(old, sizeof(old), "%s.1", t.log);
    assert_int_equal(rename(t.log, old), 0);
    append(t.log, XID_LINE(119));
    assert_int_equal(hn_kmsg_read(k, ev, 8), 2);
    assert_int_equal(ev[0].code, 95);
    assert_string_equal(ev[0].msg, "last");
    assert_int_equal(ev[1].code, 119);
    assert_int_equal(hn_kmsg_read(k, ev, 8), 0);

    struct hn_kmsg_stats st;
    hn_kmsg_get_stats(k, &st);
    assert_int_equal(st.xid, 6);
    assert_int_equal(st.oversized, 1);
    assert_int_equal(st.reopens, 2);
    assert_int_equal(st.malformed, 0);
    assert_int_equal(st.lines, 6);
    hn_kmsg_close(k);

    tu_remove_tree(t.dir);
}

static void test_follow_max_and_errors(void **state)
{
    (void)state;
    struct tmpdir t;
    make_tmp(&t);
    append(t.log, XID_LINE(1) XID_LINE(2) XID_LINE(3) XID_LINE(4)
                      XID_LINE(5) "NVRM: Xid (PCI:0000:9b:00): oops\n");
    char err[256];
    struct hn_kmsg *k = hn_kmsg_open(t.log, HN_KMSG_FROM_START, err, sizeof(err));
    assert_non_null(k);
    struct hn_xid_event ev[2];
    assert_int_equal(hn_kmsg_read(k, ev, 2), 2);
    assert_int_equal(ev[0].code, 1);
    assert_int_equal(ev[1].code, 2);
    assert_int_equal(hn_kmsg_read(k, ev, 2), 2);
    assert_int_equal(ev[1].code, 4);
    assert_int_equal(hn_kmsg_read(k, ev, 0), 0);
    assert_int_equal(hn_kmsg_read(k, ev, 2), 1);
    assert_int_equal(ev[0].code, 5);
    assert_int_equal(hn_kmsg_read(k, ev, 2), 0);
    assert_int_equal(hn_kmsg_read(k, NULL, 2), -EINVAL);
    assert_int_equal(hn_kmsg_read(NULL, ev, 2), -EINVAL);
    assert_int_equal(hn_kmsg_read(k, ev, -1), -EINVAL);
    struct hn_kmsg_stats st;
    hn_kmsg_get_stats(k, &st);
    assert_int_equal(st.malformed, 1);
    assert_int_equal(st.lines, 6);
    hn_kmsg_close(k);
    hn_kmsg_close(NULL);
    assert_int_equal(hn_kmsg_fd(NULL), -1);

    assert_null(hn_kmsg_open("/nonexistent/kern.log", 0, err, sizeof(err)));
    assert_non_null(strstr(err, "/nonexistent/kern.log"));
    assert_null(hn_kmsg_open(t.dir, 0, err, sizeof(err)));
    assert_null(hn_kmsg_open(NULL, 0, err, sizeof(err)));

    tu_remove_tree(t.dir);
}

static void test_follow_fifo(void **state)
{
    (void)state;
    struct tmpdir t;
    make_tmp(&t);
    assert_int_equal(mkfifo(t.log, 0600), 0);
    char err[256];
    struct hn_kmsg *k = hn_kmsg_open(t.log, HN_KMSG_FROM_START, err, sizeof(err));
    if (!k)
        fail_msg("%s", err);
    int w = open(t.log, O_WRONLY | O_NONBLOCK);
    assert_true(w >= 0);
    struct hn_xid_event ev[4];
    assert_int_equal(hn_kmsg_read(k, ev, 4), 0); /* empty pipe: EAGAIN, not an error */
    const char *text = XID_LINE(13) "[ 5.0] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, F";
    assert_int_equal(write(w, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(hn_kmsg_read(k, ev, 4), 1);
    assert_int_equal(ev[0].code, 13);
    close(w); /* the writer is gone: the unterminated line is complete */
    assert_int_equal(hn_kmsg_read(k, ev, 4), 1);
    assert_int_equal(ev[0].kind, HN_SXID);
    assert_int_equal(ev[0].code, 20034);
    assert_true(ev[0].ts == 5.0);
    hn_kmsg_close(k);
    tu_remove_tree(t.dir);
}

static void test_dev_kmsg(void **state)
{
    (void)state;
    char err[256];
    struct hn_kmsg *k = hn_kmsg_open("/dev/kmsg", HN_KMSG_FROM_START, err, sizeof(err));
    if (!k) {
        print_message("skipping /dev/kmsg: %s\n", err);
        skip();
    }
    struct hn_xid_event ev[16];
    int n, rounds = 0;
    while ((n = hn_kmsg_read(k, ev, 16)) > 0 && rounds < 100000)
        rounds++;
    struct hn_kmsg_stats st;
    hn_kmsg_get_stats(k, &st);
    print_message("/dev/kmsg: rc %d, %llu records, %llu Xid, %llu malformed\n", n,
                  (unsigned long long)st.lines, (unsigned long long)st.xid,
                  (unsigned long long)st.malformed);
    assert_true(n == 0 || n == -EPERM || n == -EACCES);
    if (n == 0)
        assert_int_equal(st.malformed, 0);
    hn_kmsg_close(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_csv),     cmocka_unit_test(test_lines_invalid_csv),
        cmocka_unit_test(test_dmesg_xid_119), cmocka_unit_test(test_dmesg_iso_memory),
        cmocka_unit_test(test_kmsg_records),  cmocka_unit_test(test_prefix_styles),
        cmocka_unit_test(test_fields),        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_truncations),   cmocka_unit_test(test_long_message_utf8),
        cmocka_unit_test(test_follow_file),   cmocka_unit_test(test_follow_max_and_errors),
        cmocka_unit_test(test_follow_fifo),   cmocka_unit_test(test_dev_kmsg),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
