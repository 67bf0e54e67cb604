/*
 * kmsg.c - Xid/SXid line parser and kernel-log follower (see kmsg.h).
 *
 * The parser looks for the report first ("NVRM: Xid (" or "SXid ("), anywhere in the line, and
 * only then reads the line's time prefix, so ordinary kernel lines cost one memmem(). Every
 * scan is bounded by the given length; nothing relies on a NUL terminator.
 */
#include "agent/kmsg.h"

#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* ---- small bounded scanners ---- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Reads between min and max decimal digits at s[*i], stopping after max (callers check what
 * follows, so "12345" read with max 4 leaves "5" to fail on). max <= 19 cannot overflow. */
static int scan_digits(const char *s, size_t n, size_t *i, int min, int max, uint64_t *out)
{
    uint64_t v = 0;
    int d = 0;
    while (*i < n && is_digit(s[*i]) && d < max) {
        v = v * 10 + (uint64_t)(s[*i] - '0');
        (*i)++;
        d++;
    }
    if (d < min)
        return -1;
    *out = v;
    return 0;
}

static int scan_char(const char *s, size_t n, size_t *i, char c)
{
    if (*i < n && s[*i] == c) {
        (*i)++;
        return 0;
    }
    return -1;
}

static void skip_blanks(const char *s, size_t n, size_t *i)
{
    while (*i < n && (s[*i] == ' ' || s[*i] == '\t'))
        (*i)++;
}

/* ---- /dev/kmsg records ---- */

int hn_kmsg_parse_record(const char *rec, size_t len, struct hn_kmsg_record *out)
{
    size_t i = 0;
    uint64_t prio, seq, usec;
    if (!rec)
        return -EINVAL;
    /* Sequence numbers and timestamps are 64-bit in the kernel: 19 digits cannot overflow. */
    if (scan_digits(rec, len, &i, 1, 4, &prio) || scan_char(rec, len, &i, ',') ||
        scan_digits(rec, len, &i, 1, 19, &seq) || scan_char(rec, len, &i, ',') ||
        scan_digits(rec, len, &i, 1, 19, &usec) || scan_char(rec, len, &i, ','))
        return -EINVAL;
    /* FLAGS, then optional further comma-separated fields, end at ';' on the same line. */
    size_t flags_at = i;
    while (i < len && rec[i] != ';' && rec[i] != '\n' && i - flags_at < 64)
        i++;
    if (i >= len || rec[i] != ';')
        return -EINVAL;
    out->prio = (unsigned)prio;
    out->seq = seq;
    out->usec = usec;
    out->flag = (i > flags_at && rec[flags_at] != ',') ? rec[flags_at] : '-';
    out->msg = rec + i + 1;
    const char *nl = memchr(out->msg, '\n', len - i - 1);
    out->msg_len = nl ? (size_t)(nl - out->msg) : len - i - 1;
    return 0;
}

/* ---- time prefixes ---- */

static int month_index(const char *s, size_t n, size_t i)
{
    static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (i + 3 > n)
        return -1;
    for (int m = 0; m < 12; m++) {
        if (memcmp(s + i, names + (size_t)m * 3, 3) == 0)
            return m;
    }
    return -1;
}

static int tm_valid(const struct tm *tm)
{
    return tm->tm_mon >= 0 && tm->tm_mon < 12 && tm->tm_mday >= 1 && tm->tm_mday <= 31 &&
           tm->tm_hour >= 0 && tm->tm_hour < 24 && tm->tm_min >= 0 && tm->tm_min < 60 &&
           tm->tm_sec >= 0 && tm->tm_sec <= 60 && tm->tm_year >= 70 && tm->tm_year < 1100;
}

/* "HH:MM:SS" into tm. */
static int scan_clock(const char *s, size_t n, size_t *i, struct tm *tm)
{
    uint64_t h, m, sec;
    if (scan_digits(s, n, i, 2, 2, &h) || scan_char(s, n, i, ':') ||
        scan_digits(s, n, i, 2, 2, &m) || scan_char(s, n, i, ':') ||
        scan_digits(s, n, i, 2, 2, &sec))
        return -1;
    tm->tm_hour = (int)h;
    tm->tm_min = (int)m;
    tm->tm_sec = (int)sec;
    return 0;
}

/* dmesg -T: "Sun Feb 23 16:24:18 2025", in the host's local time zone. */
static int parse_ctime(const char *s, size_t n, double *out)
{
    struct tm tm = {0};
    size_t i = 3; /* the weekday name, not checked beyond being there */
    uint64_t day, year;
    if (n < 3)
        return -1;
    skip_blanks(s, n, &i);
    int mon = month_index(s, n, i);
    if (mon < 0)
        return -1;
    i += 3;
    skip_blanks(s, n, &i);
    if (scan_digits(s, n, &i, 1, 2, &day))
        return -1;
    skip_blanks(s, n, &i);
    if (scan_clock(s, n, &i, &tm))
        return -1;
    skip_blanks(s, n, &i);
    if (scan_digits(s, n, &i, 4, 4, &year) || i != n)
        return -1;
    tm.tm_mon = mon;
    tm.tm_mday = (int)day;
    tm.tm_year = (int)year - 1900;
    tm.tm_isdst = -1;
    if (!tm_valid(&tm))
        return -1;
    time_t t = mktime(&tm);
    if (t == (time_t)-1)
        return -1;
    *out = (double)t;
    return 0;
}

/* ISO 8601 as dmesg --time-format=iso, journalctl -o short-iso and rsyslog write it:
 * "2025-01-21T04:41:44,283302+00:00", "...T16:24:18+0000", "...T16:24:18.5Z". Without a
 * zone the time is local. It must be followed by a blank or the end. */
static int parse_iso(const char *s, size_t n, size_t *i, double *out)
{
    struct tm tm = {0};
    uint64_t y, mo, d, frac = 0, oh = 0, om = 0;
    double scale = 1.0;
    int zone = 0, sign = 1;
    if (scan_digits(s, n, i, 4, 4, &y) || scan_char(s, n, i, '-') ||
        scan_digits(s, n, i, 2, 2, &mo) || scan_char(s, n, i, '-') ||
        scan_digits(s, n, i, 2, 2, &d))
        return -1;
    if (*i >= n || (s[*i] != 'T' && s[*i] != ' '))
        return -1;
    (*i)++;
    if (scan_clock(s, n, i, &tm))
        return -1;
    if (*i < n && (s[*i] == ',' || s[*i] == '.')) {
        size_t at = ++(*i);
        if (scan_digits(s, n, i, 1, 9, &frac))
            return -1;
        for (size_t k = at; k < *i; k++)
            scale *= 10.0;
    }
    if (*i < n && s[*i] == 'Z') {
        (*i)++;
        zone = 1;
    } else if (*i < n && (s[*i] == '+' || s[*i] == '-')) {
        sign = s[*i] == '-' ? -1 : 1;
        (*i)++;
        if (scan_digits(s, n, i, 2, 2, &oh))
            return -1;
        (void)scan_char(s, n, i, ':');
        if (scan_digits(s, n, i, 2, 2, &om) || oh > 23 || om > 59)
            return -1;
        zone = 1;
    }
    if (*i < n && s[*i] != ' ' && s[*i] != '\t')
        return -1;
    tm.tm_year = (int)y - 1900;
    tm.tm_mon = (int)mo - 1;
    tm.tm_mday = (int)d;
    tm.tm_isdst = -1;
    if (!tm_valid(&tm))
        return -1;
    time_t t = zone ? timegm(&tm) : mktime(&tm);
    if (t == (time_t)-1)
        return -1;
    *out = (double)t - sign * (double)(oh * 3600 + om * 60) + (double)frac / scale;
    return 0;
}

/* "kern  :warn  : " from dmesg --decode: two lower-case words, each padded, then ':'. */
static void skip_decode_prefix(const char *s, size_t n, size_t *i)
{
    size_t j = *i;
    for (int part = 0; part < 2; part++) {
        size_t w = j;
        while (j < n && s[j] >= 'a' && s[j] <= 'z' && j - w < 8)
            j++;
        if (j == w)
            return;
        skip_blanks(s, n, &j);
        if (scan_char(s, n, &j, ':'))
            return;
    }
    skip_blanks(s, n, &j);
    *i = j;
}

/* Reads the time at the start of a (non-kmsg) line, if it has one of the known prefixes. */
static void parse_prefix_time(const char *s, size_t n, struct hn_xid_event *ev)
{
    size_t i = 0;
    uint64_t v;
    double t;
    ev->ts = 0;
    ev->ts_kind = HN_TS_NONE;
    /* "<4>" console level, as in pstore dumps and kmsg-style syslog lines. */
    if (i < n && s[i] == '<') {
        size_t j = 1;
        if (scan_digits(s, n, &j, 1, 3, &v) == 0 && scan_char(s, n, &j, '>') == 0)
            i = j;
    }
    skip_decode_prefix(s, n, &i);
    if (i < n && s[i] == '[') {
        const char *close = memchr(s + i, ']', n - i < 40 ? n - i : 40);
        if (!close)
            return;
        size_t a = i + 1, b = (size_t)(close - s);
        skip_blanks(s, b, &a);
        size_t j = a;
        uint64_t sec, frac;
        if (scan_digits(s, b, &j, 1, 12, &sec) == 0 && scan_char(s, b, &j, '.') == 0) {
            size_t at = j;
            if (scan_digits(s, b, &j, 1, 9, &frac) == 0 && j == b) {
                double scale = 1.0;
                for (size_t k = at; k < j; k++)
                    scale *= 10.0;
                ev->ts = (double)sec + (double)frac / scale;
                ev->ts_kind = HN_TS_BOOT;
            }
        } else if (parse_ctime(s + a, b - a, &t) == 0) {
            ev->ts = t;
            ev->ts_kind = HN_TS_WALL;
        }
        return;
    }
    if (i < n && is_digit(s[i]) && parse_iso(s, n, &i, &t) == 0) {
        ev->ts = t;
        ev->ts_kind = HN_TS_WALL;
    }
    /* Classic syslog "Feb 23 16:24:18 host kernel:" has no year: no usable time. */
}

/* ---- the Xid / SXid report ---- */

/* "PCI:0000:9b:00", "0000:03:00", "PCI:0000:05:00.0": domain (4-8 hex), bus, device, and an
 * optional function. */
static int valid_pci(const char *s, size_t n)
{
    size_t i = 0, at;
    if (n >= 4 && memcmp(s, "PCI:", 4) == 0)
        i = 4;
    at = i;
    while (i < n && is_hex(s[i]))
        i++;
    if (i - at < 4 || i - at > 8 || scan_char(s, n, &i, ':'))
        return 0;
    for (int part = 0; part < 2; part++) {
        if (i + 2 > n || !is_hex(s[i]) || !is_hex(s[i + 1]))
            return 0;
        i += 2;
        if (part == 0 && scan_char(s, n, &i, ':'))
            return 0;
    }
    if (i < n && s[i] == '.') {
        if (i + 2 != n || !is_hex(s[i + 1]))
            return 0;
        i += 2;
    }
    return i == n;
}

/* Copies text into a fixed field: control bytes become '?', and a cut never splits a UTF-8
 * sequence. Trailing blanks are dropped. */
static void copy_text(char *dst, size_t size, const char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    if (n > size - 1) {
        n = size - 1;
        /* Back off continuation bytes (10xxxxxx) and the lead byte they belong to. */
        size_t k = n;
        while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        n = k;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    dst[n] = '\0';
}

/* Parses "(PCI): CODE[, text]" at s[at] == '('. Returns 1 and fills ev, or -1. */
static int parse_report(const char *s, size_t n, size_t at, int kind, struct hn_xid_event *ev)
{
    size_t i = at + 1;
    size_t span = n - i < sizeof(ev->pci) ? n - i : sizeof(ev->pci);
    const char *close = memchr(s + i, ')', span);
    if (!close)
        return -1;
    size_t pci_len = (size_t)(close - (s + i));
    if (!valid_pci(s + i, pci_len))
        return -1;
    i += pci_len + 1;
    if (scan_char(s, n, &i, ':'))
        return -1;
    skip_blanks(s, n, &i);
    uint64_t code;
    if (scan_digits(s, n, &i, 1, 9, &code))
        return -1;
    if (i < n && s[i] != ',' && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
        return -1;
    skip_blanks(s, n, &i);
    (void)scan_char(s, n, &i, ',');
    skip_blanks(s, n, &i);

    ev->kind = kind;
    ev->code = (unsigned)code;
    memcpy(ev->pci, s + at + 1, pci_len);
    ev->pci[pci_len] = '\0';
    ev->pid = -1;
    if (n - i >= 4 && memcmp(s + i, "pid=", 4) == 0) {
        size_t j = i + 4;
        uint64_t pid;
        if (scan_digits(s, n, &j, 1, 10, &pid) == 0 && pid <= INT_MAX &&
            (j == n || s[j] == ',' || s[j] == ' '))
            ev->pid = (int)pid;
    }
    copy_text(ev->msg, sizeof(ev->msg), s + i, n - i);
    return 1;
}

/* Tries every occurrence of marker; the report's '(' is the marker's last byte. Returns 1 on
 * the first that parses, -1 if some occurrence failed, 0 if there was none. */
static int find_report(const char *s, size_t n, const char *marker, int kind,
                       struct hn_xid_event *ev)
{
    size_t mlen = strlen(marker);
    size_t from = 0;
    int seen = 0;
    while (from < n) {
        const char *hit = memmem(s + from, n - from, marker, mlen);
        if (!hit)
            break;
        size_t at = (size_t)(hit - s);
        from = at + 1;
        /* "SXid (" must start a word: "nvidia-nvswitch3: SXid (". */
        if (kind == HN_SXID && at > 0 && s[at - 1] != ' ' && s[at - 1] != ':')
            continue;
        seen = 1;
        if (parse_report(s, n, at + mlen - 1, kind, ev) == 1)
            return 1;
    }
    return seen ? -1 : 0;
}

/* 1: a report, 0: an ordinary line, -1: a line that names an Xid/SXid but is malformed. */
static int parse_any(const char *line, size_t len, struct hn_xid_event *ev)
{
    struct hn_kmsg_record rec;
    const char *msg = line;
    size_t mlen = len;
    int kmsg = 0;
    if (!line || !ev)
        return 0;
    const char *nl = memchr(line, '\n', len);
    if (nl)
        mlen = len = (size_t)(nl - line);
    if (hn_kmsg_parse_record(line, len, &rec) == 0) {
        msg = rec.msg;
        mlen = rec.msg_len;
        kmsg = 1;
    }
    int r = find_report(msg, mlen, "NVRM: Xid (", HN_XID, ev);
    if (r != 1) {
        int rs = find_report(msg, mlen, "SXid (", HN_SXID, ev);
        if (rs == 1 || r == 0)
            r = rs;
    }
    if (r != 1)
        return r;
    if (kmsg) {
        ev->ts = (double)rec.usec / 1e6;
        ev->ts_kind = HN_TS_BOOT;
    } else {
        parse_prefix_time(msg, mlen, ev);
    }
    return 1;
}

int hn_kmsg_parse_line(const char *line, size_t len, struct hn_xid_event *ev)
{
    return parse_any(line, len, ev) == 1;
}

/* ---- follower ---- */

enum { MODE_KMSG, MODE_FILE, MODE_STREAM };

struct hn_kmsg {
    int fd;
    int mode;
    int flags;
    dev_t dev; /* of the file being read, to notice when path names another one */
    ino_t ino;
    off_t off;    /* bytes of that file read so far */
    size_t start; /* unconsumed bytes are buf[start..len) */
    size_t len;
    int skipping; /* inside an oversized line: drop bytes up to the next newline */
    struct hn_kmsg_stats st;
    char path[PATH_MAX];
    char buf[2 * HN_KMSG_LINE_MAX];
};

static int is_kmsg_dev(const struct stat *st)
{
    return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && minor(st->st_rdev) == 11;
}

struct hn_kmsg *hn_kmsg_open(const char *path, int flags, char *err, size_t errsize)
{
    struct stat st;
    struct hn_kmsg *k = xcalloc(1, sizeof(*k));
    if (!path || hn_strlcpy(k->path, path, sizeof(k->path)) >= sizeof(k->path)) {
        snprintf(err, errsize, "kernel log path missing or too long");
        goto out_free;
    }
    k->flags = flags;
    k->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (k->fd < 0) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        goto out_free;
    }
    if (fstat(k->fd, &st) != 0) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        goto out_close;
    }
    if (is_kmsg_dev(&st)) {
        k->mode = MODE_KMSG;
    } else if (S_ISREG(st.st_mode)) {
        k->mode = MODE_FILE;
    } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)) {
        k->mode = MODE_STREAM;
    } else {
        snprintf(err, errsize, "%s: not a kernel log device, file or pipe", path);
        goto out_close;
    }
    k->dev = st.st_dev;
    k->ino = st.st_ino;
    if (!(flags & HN_KMSG_FROM_START) && k->mode != MODE_STREAM) {
        /* On /dev/kmsg SEEK_END moves past the last record; a new reader starts at the
         * oldest record in the ring buffer otherwise. */
        off_t end = lseek(k->fd, 0, SEEK_END);
        if (end < 0) {
            snprintf(err, errsize, "%s: seek to end: %s", path, strerror(errno));
            goto out_close;
        }
        k->off = k->mode == MODE_FILE ? end : 0;
    }
    return k;

out_close:
    close(k->fd);
out_free:
    free(k);
    return NULL;
}

void hn_kmsg_close(struct hn_kmsg *k)
{
    if (!k)
        return;
    close(k->fd);
    free(k);
}

int hn_kmsg_fd(const struct hn_kmsg *k)
{
    return k ? k->fd : -1;
}

void hn_kmsg_get_stats(const struct hn_kmsg *k, struct hn_kmsg_stats *out)
{
    if (k)
        *out = k->st;
    else
        memset(out, 0, sizeof(*out));
}

/* Counts one line and parses it into ev; returns 1 if it was a report. */
static int handle_line(struct hn_kmsg *k, const char *s, size_t n, struct hn_xid_event *ev)
{
    k->st.lines++;
    int r = parse_any(s, n, ev);
    if (r < 0) {
        k->st.malformed++;
        return 0;
    }
    if (r == 1) {
        if (ev->kind == HN_XID)
            k->st.xid++;
        else
            k->st.sxid++;
    }
    return r;
}

static int read_kmsg(struct hn_kmsg *k, struct hn_xid_event *out, int max)
{
    int n = 0;
    while (n < max) {
        /* One read returns one whole record; the kernel refuses a buffer that is too small
         * with EINVAL, and 16 KiB is twice the largest record. */
        ssize_t got = read(k->fd, k->buf, sizeof(k->buf));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            if (errno == EPIPE) {
                k->st.overruns++; /* the next read returns the oldest record still there */
                continue;
            }
            return n > 0 ? n : -errno;
        }
        if (got == 0)
            break;
        struct hn_kmsg_record rec;
        if (hn_kmsg_parse_record(k->buf, (size_t)got, &rec) < 0) {
            k->st.lines++;
            k->st.malformed++;
            continue;
        }
        n += handle_line(k, k->buf, (size_t)got, &out[n]);
    }
    return n;
}

/* At EOF of a followed file: has path been truncated or replaced (logrotate)? Returns 1 when
 * reading should go on from the start of the (new) file, 0 when there is nothing new. */
static int check_rotation(struct hn_kmsg *k, struct hn_xid_event *ev, int *n)
{
    struct stat st;
    if (stat(k->path, &st) == 0 && (st.st_ino != k->ino || st.st_dev != k->dev)) {
        int fd = open(k->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            return 0; /* try again on the next read */
        /* The old file is finished: its last line counts even without a newline. */
        if (k->len > k->start && !k->skipping)
            *n += handle_line(k, k->buf + k->start, k->len - k->start, ev);
        close(k->fd);
        k->fd = fd;
        k->dev = st.st_dev;
        k->ino = st.st_ino;
        goto restart;
    }
    if (fstat(k->fd, &st) == 0 && st.st_size < k->off) {
        if (lseek(k->fd, 0, SEEK_SET) < 0)
            return 0;
        goto restart;
    }
    return 0;

restart:
    k->st.reopens++;
    k->off = 0;
    k->start = k->len = 0;
    k->skipping = 0;
    return 1;
}

/* Bytes one hn_kmsg_read() may consume from a file that is being followed, so that a huge log
 * (a 10 GB kern.log read from its start) is taken in slices, one per collection cycle, instead
 * of holding up the cycle. One-shot readers (houston check) read to the end. */
#define READ_BUDGET (4u << 20)

static int read_lines(struct hn_kmsg *k, struct hn_xid_event *out, int max)
{
    int n = 0;
    size_t budget = (k->flags & HN_KMSG_ONESHOT) ? SIZE_MAX : READ_BUDGET;
    while (n < max) {
        char *line = k->buf + k->start;
        char *nl = memchr(line, '\n', k->len - k->start);
        if (nl) {
            k->start = (size_t)(nl + 1 - k->buf);
            if (k->skipping)
                k->skipping = 0; /* the tail of an oversized line */
            else
                n += handle_line(k, line, (size_t)(nl - line), &out[n]);
            continue;
        }
        /* No whole line left: keep the partial one at the front of the buffer. */
        if (k->start > 0) {
            memmove(k->buf, line, k->len - k->start);
            k->len -= k->start;
            k->start = 0;
        }
        if (k->len >= HN_KMSG_LINE_MAX) {
            if (!k->skipping)
                k->st.oversized++;
            k->skipping = 1;
            k->len = 0;
        }
        if (budget == 0)
            break;
        size_t want = sizeof(k->buf) - k->len;
        ssize_t got = read(k->fd, k->buf + k->len, want < budget ? want : budget);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return n > 0 ? n : -errno;
        }
        if (got > 0) {
            k->len += (size_t)got;
            k->off += got;
            budget -= (size_t)got;
            continue;
        }
        /* End of file, or the writer of a pipe went away. */
        if (k->mode == MODE_FILE && !(k->flags & HN_KMSG_ONESHOT)) {
            if (check_rotation(k, &out[n], &n))
                continue;
            break;
        }
        if (k->len > k->start && !k->skipping)
            n += handle_line(k, k->buf + k->start, k->len - k->start, &out[n]);
        k->start = k->len = 0;
        k->skipping = 0;
        break;
    }
    return n;
}

int hn_kmsg_read(struct hn_kmsg *k, struct hn_xid_event *out, int max)
{
    if (!k || max < 0 || (!out && max > 0))
        return -EINVAL;
    if (k->mode == MODE_KMSG)
        return read_kmsg(k, out, max);
    return read_lines(k, out, max);
}
