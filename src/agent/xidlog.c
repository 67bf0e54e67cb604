#include "agent/xidlog.h"

#include "agent/config.h"
#include "agent/kmsg.h"
#include "common/log.h"
#include "common/util.h"
#include "common/xid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_CODES 256 /* distinct (kind, code) pairs counted */
#define MAX_DEVS  128 /* distinct PCI devices whose last event is kept */

struct code_count {
    int kind;
    unsigned code;
    uint64_t n;
    int fatal;
};

/* The last report per (PCI device, kind); labels are formatted once, when it is first seen. */
struct dev_last {
    char pci[32];
    int kind;
    char labels[96];
    unsigned code;
    double ts; /* Unix time the agent saw it */
};

struct xidlog {
    char path[4096];
    struct hn_kmsg *k;
    struct hn_xid_catalog *cat;
    struct code_count codes[MAX_CODES];
    unsigned ncodes;
    uint64_t other;
    struct dev_last devs[MAX_DEVS];
    unsigned ndevs;
    uint64_t fatal;
    unsigned logged;                                   /* reports logged this cycle */
    struct hn_xidlog_event cycle[HN_XIDLOG_CYCLE_MAX]; /* reports read by the last collect */
    unsigned ncycle;
    uint64_t next_open_ns;
    struct hn_complain complain;
};

#define REOPEN_NS     (60ull * 1000000000ull)
#define LOG_PER_CYCLE 5
#define BATCH         16 /* reports read at once */
#define BATCHES       64 /* batches read per cycle at most */

_Static_assert(BATCH *BATCHES <= HN_XIDLOG_CYCLE_MAX, "every report of a cycle is kept");

/*
 * /dev/kmsg is read from the oldest record the kernel still holds, so an Xid from just before
 * the agent (re)started is seen; a log file is followed from its end, like tail -F, so that a
 * restart does not report a whole kern.log as new.
 */
static struct hn_kmsg *open_log(const char *path, char *err, size_t errsize)
{
    struct stat st;
    int flags = stat(path, &st) == 0 && S_ISCHR(st.st_mode) ? HN_KMSG_FROM_START : 0;
    return hn_kmsg_open(path, flags, err, errsize);
}

/* The report's own time when the line carried one, else now. */
static double event_time(const struct hn_xid_event *ev)
{
    if (ev->ts_kind == HN_TS_WALL)
        return ev->ts;
    if (ev->ts_kind == HN_TS_BOOT) {
        struct timespec boot;
        clock_gettime(CLOCK_BOOTTIME, &boot);
        double up = (double)boot.tv_sec + (double)boot.tv_nsec / 1e9;
        if (ev->ts <= up)
            return hn_wall_s() - (up - ev->ts);
    }
    return hn_wall_s();
}

static int xl_init(const struct hn_agent_config *cfg, void **state)
{
    struct xidlog *x = xcalloc(1, sizeof(*x));
    char err[512];
    hn_strlcpy(x->path, cfg->kmsg, sizeof(x->path));
    x->cat = hn_xid_catalog_new(cfg->xid_catalog, err, sizeof(err));
    if (!x->cat)
        hn_warn("xid: %s; Xids are counted but not classified", err);
    x->k = open_log(cfg->kmsg, err, sizeof(err));
    if (!x->k) {
        hn_complain(&x->complain, "xid: %s; retrying every 60 s", err);
        x->next_open_ns = hn_mono_ns() + REOPEN_NS;
    }
    *state = x;
    return 0;
}

static void count(struct xidlog *x, const struct hn_xid_event *ev)
{
    int fatal = 0;
    if (ev->kind == HN_XID && x->cat)
        fatal = hn_xid_is_fatal(hn_xid_lookup(x->cat, ev->code));
    x->fatal += (uint64_t)fatal;
    unsigned i;
    for (i = 0; i < x->ncodes; i++) {
        if (x->codes[i].kind == ev->kind && x->codes[i].code == ev->code)
            break;
    }
    if (i == x->ncodes) {
        if (x->ncodes == MAX_CODES) {
            x->other++;
            goto dev;
        }
        x->codes[x->ncodes++] = (struct code_count){ev->kind, ev->code, 0, fatal};
    }
    x->codes[i].n++;
dev:
    for (i = 0; i < x->ndevs; i++) {
        if (x->devs[i].kind == ev->kind && strcmp(x->devs[i].pci, ev->pci) == 0)
            break;
    }
    if (i == x->ndevs) {
        if (x->ndevs == MAX_DEVS)
            return;
        struct dev_last *d = &x->devs[x->ndevs++];
        size_t len = 0;
        hn_strlcpy(d->pci, ev->pci, sizeof(d->pci));
        d->kind = ev->kind;
        d->labels[0] = '\0';
        hn_expo_label(d->labels, sizeof(d->labels), &len, "pci_bus_id", d->pci);
        hn_expo_label(d->labels, sizeof(d->labels), &len, "kind",
                      ev->kind == HN_XID ? "xid" : "sxid");
    }
    x->devs[i].code = ev->code;
    x->devs[i].ts = event_time(ev);
    if (x->ncycle < HN_XIDLOG_CYCLE_MAX) {
        struct hn_xidlog_event *c = &x->cycle[x->ncycle++];
        c->kind = ev->kind;
        c->code = ev->code;
        hn_strlcpy(c->pci, ev->pci, sizeof(c->pci));
        c->time_ns = x->devs[i].ts > 0 ? (uint64_t)(x->devs[i].ts * 1e9) : 0;
    }
    /* A storm of reports is summarised, not logged line by line (see xl_collect). */
    if (x->logged++ < LOG_PER_CYCLE)
        hn_warn("%s %u on %s: %s", ev->kind == HN_XID ? "Xid" : "SXid", ev->code, ev->pci, ev->msg);
}

static int xl_collect(void *state)
{
    struct xidlog *x = state;
    x->ncycle = 0;
    if (!x->k) {
        if (hn_mono_ns() < x->next_open_ns)
            return -ENOENT;
        char err[512];
        x->k = open_log(x->path, err, sizeof(err));
        if (!x->k) {
            hn_complain(&x->complain, "xid: %s; retrying every 60 s", err);
            x->next_open_ns = hn_mono_ns() + REOPEN_NS;
            return -ENOENT;
        }
        hn_complain_clear(&x->complain, "xid: reading %s again", x->path);
    }
    x->logged = 0;
    struct hn_xid_event ev[BATCH];
    int n;
    /* Bounded: at most BATCHES batches per cycle, so a flood cannot starve the other
     * collectors. */
    for (int batch = 0; batch < BATCHES; batch++) {
        n = hn_kmsg_read(x->k, ev, (int)HN_ARRAY_LEN(ev));
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++)
            count(x, &ev[i]);
    }
    if (x->logged > LOG_PER_CYCLE)
        hn_warn("xid: %u more Xid/SXid reports this cycle (see houston_xid_events_total)",
                x->logged - LOG_PER_CYCLE);
    if (n < 0) {
        hn_complain(&x->complain, "xid: reading %s: %s", x->path, strerror(-n));
        return n;
    }
    return 0;
}

static void xl_render(void *state, struct hn_expo *e)
{
    struct xidlog *x = state;
    char labels[256];
    size_t len;

    hn_expo_family(e, "houston_xid_events_total",
                   "Xid (GPU) and SXid (NVSwitch) reports read from the kernel log, by code.",
                   HN_COUNTER);
    for (unsigned i = 0; i < x->ncodes; i++) {
        char code[16];
        snprintf(code, sizeof(code), "%u", x->codes[i].code);
        len = 0;
        labels[0] = '\0';
        hn_expo_label(labels, sizeof(labels), &len, "kind",
                      x->codes[i].kind == HN_XID ? "xid" : "sxid");
        hn_expo_label(labels, sizeof(labels), &len, "code", code);
        hn_expo_label(labels, sizeof(labels), &len, "fatal", x->codes[i].fatal ? "1" : "0");
        hn_expo_sample(e, "houston_xid_events_total", labels, (double)x->codes[i].n);
    }
    if (x->other) {
        len = 0;
        labels[0] = '\0';
        hn_expo_label(labels, sizeof(labels), &len, "kind", "any");
        hn_expo_label(labels, sizeof(labels), &len, "code", "other");
        hn_expo_label(labels, sizeof(labels), &len, "fatal", "0");
        hn_expo_sample(e, "houston_xid_events_total", labels, (double)x->other);
    }
    hn_expo_family(e, "houston_xid_fatal_events_total",
                   "Xid reports whose catalog action is other than IGNORE or RESTART_APP.",
                   HN_COUNTER);
    hn_expo_sample(e, "houston_xid_fatal_events_total", NULL, (double)x->fatal);

    if (x->ndevs) {
        hn_expo_family(e, "houston_xid_last_code", "Code of the last Xid/SXid per PCI device.",
                       HN_GAUGE);
        for (unsigned i = 0; i < x->ndevs; i++)
            hn_expo_sample(e, "houston_xid_last_code", x->devs[i].labels, x->devs[i].code);
        hn_expo_family(e, "houston_xid_last_timestamp_seconds",
                       "Unix time of the last Xid/SXid per PCI device (the line's own time "
                       "when it has one, else when the agent read it).",
                       HN_GAUGE);
        for (unsigned i = 0; i < x->ndevs; i++)
            hn_expo_sample(e, "houston_xid_last_timestamp_seconds", x->devs[i].labels,
                           x->devs[i].ts);
    }

    struct hn_kmsg_stats st;
    memset(&st, 0, sizeof(st));
    if (x->k)
        hn_kmsg_get_stats(x->k, &st);
    static const struct {
        const char *name, *help;
        size_t off;
    } stats[] = {
        {"houston_kmsg_lines_total", "Kernel log lines or records read.",
         offsetof(struct hn_kmsg_stats, lines)},
        {"houston_kmsg_malformed_total", "Kernel log records or Xid lines that did not parse.",
         offsetof(struct hn_kmsg_stats, malformed)},
        {"houston_kmsg_oversized_total", "Kernel log lines over 8 KiB, skipped.",
         offsetof(struct hn_kmsg_stats, oversized)},
        {"houston_kmsg_overruns_total",
         "Times /dev/kmsg records were overwritten before the agent read them.",
         offsetof(struct hn_kmsg_stats, overruns)},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(stats); i++) {
        uint64_t v;
        memcpy(&v, (const char *)&st + stats[i].off, sizeof(v));
        hn_expo_family(e, stats[i].name, stats[i].help, HN_COUNTER);
        hn_expo_sample(e, stats[i].name, NULL, (double)v);
    }
}

unsigned hn_xidlog_cycle_events(const void *state, const struct hn_xidlog_event **events)
{
    const struct xidlog *x = state;
    *events = x->cycle;
    return x->ncycle;
}

static void xl_fini(void *state)
{
    struct xidlog *x = state;
    if (x->k)
        hn_kmsg_close(x->k);
    hn_xid_catalog_free(x->cat);
    free(x);
}

const struct hn_collector hn_collector_xid = {"xid", xl_init, xl_collect, xl_render, xl_fini};
