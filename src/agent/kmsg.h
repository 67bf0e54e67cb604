/*
 * kmsg.h - finding NVIDIA Xid and NVSwitch SXid reports in kernel log lines, and following a
 * kernel log (/dev/kmsg or a log file) for them.
 *
 * hn_kmsg_parse_line() is a pure function over any bytes: it recognises
 *   NVRM: Xid (PCI:0000:9b:00): 119, pid=1234, name=nvidia-smi, Timeout ...
 *   nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, ...
 * behind any of the prefixes the kernel log is seen with: raw /dev/kmsg records
 * ("prio,seq,usec,flags;msg"), "[  123.456] " (dmesg), "[Sun Feb 23 16:24:18 2025] "
 * (dmesg -T, local time), "kern  :warn  : 2025-01-21T04:41:44,283302+00:00 " (dmesg --decode
 * --time-format=iso), "<4>[ 12.3] " (console/pstore), and syslog/journal lines
 * ("Feb 23 16:24:18 host kernel: ...", "2025-02-23T16:24:18+0000 host kernel: ..."). The
 * Xid/SXid text may appear anywhere in the line; the PCI id must look like one and the code
 * must be a number, otherwise nothing is reported.
 *
 * struct hn_kmsg follows one source. /dev/kmsg is read record by record (one read(2) each);
 * a regular file is read line by line from its start or its end and followed as it grows,
 * is truncated, or is replaced (tail -F); a FIFO or other stream is read as it comes. Reads
 * never block and never allocate: the line buffer is part of the struct, and a line longer
 * than HN_KMSG_LINE_MAX is counted and skipped. One follower belongs to one thread.
 */
#ifndef HN_KMSG_H
#define HN_KMSG_H

#include <stddef.h>
#include <stdint.h>

enum { HN_XID = 1, HN_SXID = 2 };

/* What ts counts: nothing, seconds since boot (kmsg usec, "[ 123.4]"), or Unix time. */
enum { HN_TS_NONE = 0, HN_TS_BOOT = 1, HN_TS_WALL = 2 };

struct hn_xid_event {
    int kind;      /* HN_XID or HN_SXID */
    unsigned code; /* the Xid or SXid number */
    char pci[32];  /* as in the line, e.g. PCI:0000:9b:00 or PCI:0000:05:00.0 */
    int pid;       /* -1 if absent or not a number (pid='<unknown>') */
    char msg[256]; /* the text after "<code>, ", control bytes replaced by '?', cut at a
                      UTF-8 character boundary */
    double ts;     /* seconds, see ts_kind; 0 if the line carried no time */
    int ts_kind;   /* HN_TS_* */
};

/* Returns 1 and fills ev if line[0..len) reports an Xid or SXid, else 0 (ev may then be
 * partly written). Only the text up to the first newline is looked at. Never reads outside
 * line[0..len) and needs no NUL terminator. */
int hn_kmsg_parse_line(const char *line, size_t len, struct hn_xid_event *ev);

/* A /dev/kmsg record "PRIO,SEQ,USEC,FLAGS[,...];MESSAGE[\n KEY=VALUE...]". */
struct hn_kmsg_record {
    unsigned prio;   /* facility * 8 + level */
    uint64_t seq;    /* kernel sequence number */
    uint64_t usec;   /* microseconds since boot */
    char flag;       /* first byte of FLAGS: '-', 'c' (continuation) or '+' */
    const char *msg; /* borrowed from the input: the message up to its first newline */
    size_t msg_len;
};

/* Splits one record. Returns 0, or -EINVAL if the header is malformed. */
int hn_kmsg_parse_record(const char *rec, size_t len, struct hn_kmsg_record *out);

/* ---- follower ---- */

#define HN_KMSG_LINE_MAX 8192 /* longest line kept; /dev/kmsg records are at most 8 KiB */

#define HN_KMSG_FROM_START 1 /* read what the source already holds, not only what comes next */
#define HN_KMSG_ONESHOT    2 /* regular files: a last line without '\n' counts at EOF */

struct hn_kmsg_stats {
    uint64_t lines;     /* lines or records read */
    uint64_t xid;       /* Xid events returned */
    uint64_t sxid;      /* SXid events returned */
    uint64_t malformed; /* records with a bad kmsg header, or Xid/SXid lines that failed */
    uint64_t oversized; /* lines longer than HN_KMSG_LINE_MAX, skipped */
    uint64_t overruns;  /* EPIPE from /dev/kmsg: records were overwritten before we read */
    uint64_t reopens;   /* the file was replaced or truncated */
};

struct hn_kmsg;

/* Opens path: /dev/kmsg (any char device 1:11), a regular file, or a FIFO. flags is 0 (only
 * new records) or HN_KMSG_FROM_START (the kernel's whole ring buffer, or the file from its
 * start), optionally | HN_KMSG_ONESHOT. Returns NULL with a message in err on failure. */
struct hn_kmsg *hn_kmsg_open(const char *path, int flags, char *err, size_t errsize);

/* Reads what is available now, without blocking, and stores up to max events in out.
 * Returns the number stored (0 when nothing new), or a negative errno for a read error;
 * lines that are not Xid/SXid reports are only counted. When it returns max, more may be
 * waiting. To read a source once (houston check), open it with HN_KMSG_FROM_START |
 * HN_KMSG_ONESHOT and call until it returns 0. A pipe whose writer has gone reads as empty
 * (its unterminated last line counted once). */
int hn_kmsg_read(struct hn_kmsg *k, struct hn_xid_event *out, int max);

/* The descriptor to poll(2) for POLLIN. A regular file is always readable, so a caller
 * following a file polls on a timer instead. */
int hn_kmsg_fd(const struct hn_kmsg *k);

void hn_kmsg_get_stats(const struct hn_kmsg *k, struct hn_kmsg_stats *out);

void hn_kmsg_close(struct hn_kmsg *k);

#endif
