/*
 * xidlog.h - the agent's kernel-log collector: follows --kmsg (default /dev/kmsg) for NVIDIA
 * Xid and NVSwitch SXid lines (agent/kmsg.h) and counts them by kind and code, with the last
 * event per PCI device, and whether the catalog (common/xid.h) calls the Xid fatal.
 *
 * /dev/kmsg is read from the oldest record the kernel holds; a log file is followed from its
 * end (tail -F). A missing source is retried every 60 s. The follower is drained once per cycle
 * on the collect thread, at most 4 MiB of a file per cycle; counts live in fixed tables
 * (no heap in the steady state). A code beyond the table's capacity is counted under
 * code="other".
 */
#ifndef HN_XIDLOG_H
#define HN_XIDLOG_H

#include "agent/collector.h"

extern const struct hn_collector hn_collector_xid;

#endif
