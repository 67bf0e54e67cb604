/*
 * xidlog.h - the agent's kernel-log collector: follows --kmsg (default /dev/kmsg) for NVIDIA
 * Xid and NVSwitch SXid lines (agent/kmsg.h) and counts them by kind and code, with the last
 * event per PCI device, and whether the catalog (common/xid.h) calls the Xid fatal.
 *
 * /dev/kmsg is read from the oldest record the kernel holds; a log file is followed from its
 * end (tail -F). A missing source is retried every 60 s. The follower is drained once per cycle
 * on the collect thread, at most 4 MiB of a file per cycle; counts live in fixed tables
 * (no heap in the steady state). A code beyond the table's capacity is counted under
 * code="other". The reports of the last cycle stay readable (hn_xidlog_cycle_events) until the
 * next one, for the push to the controller.
 */
#ifndef HN_XIDLOG_H
#define HN_XIDLOG_H

#include "agent/collector.h"

#include <stdint.h>

#define HN_XIDLOG_CYCLE_MAX 1024 /* reports one collect reads at most, and keeps */

/* One report as the last collect read it, for the push to the controller (agent/push.h). */
struct hn_xidlog_event {
    int kind;         /* HN_XID or HN_SXID (agent/kmsg.h) */
    unsigned code;    /* the Xid or SXid number */
    char pci[32];     /* as in the line, e.g. PCI:0000:9b:00 */
    uint64_t time_ns; /* Unix time: the line's own when it had one, else when it was read */
};

/* The reports the last collect of hn_collector_xid's state read, oldest first; *events is
 * borrowed until the next collect. Collect thread only. */
unsigned hn_xidlog_cycle_events(const void *state, const struct hn_xidlog_event **events);

extern const struct hn_collector hn_collector_xid;

#endif
