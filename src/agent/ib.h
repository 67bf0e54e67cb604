/*
 * ib.h - InfiniBand and RoCE ports from /sys/class/infiniband (the kernel's ib_core sysfs).
 *
 * Two users share the reading code here:
 *   - the agent's collector hn_collector_ib (collector.h), which finds the ports once at init,
 *     then each cycle reads every port's state, rate, PMA counters (counters/) and the driver's
 *     hw_counters/, and renders them as houston_ib_* families (docs/metrics.md);
 *   - `houston check`, which calls hn_ib_scan() once to ask "is every port ACTIVE, has any link
 *     gone down?" without running the agent.
 *
 * Ports are found at init only: a port that appears later is picked up when the agent
 * restarts; a port that disappears keeps its series absent (NaN) and is complained about once.
 * The caller owns every struct hn_ib_port; nothing here keeps global state. Paths go through a
 * sysfs root (the directory standing for /sys), so tests point it at a fixture tree.
 * hn_ib_scan()/hn_ib_port_read() may be called from any thread on the caller's own structs; the
 * collector belongs to the agent's collect thread.
 */
#ifndef HN_IB_H
#define HN_IB_H

#include "agent/collector.h"

#include <stddef.h>
#include <stdint.h>

#define HN_IB_MAX_PORTS 64 /* ports the collector and hn_ib_scan() track at most */
#define HN_IB_NAME_MAX  64 /* device/port directory names, longer ones are skipped */

/* Port states as the kernel prints them in ports/N/state ("4: ACTIVE"), IBTA vol. 1 14.2.5.6. */
enum hn_ib_state {
    HN_IB_STATE_UNKNOWN = -1, /* the file could not be read or parsed */
    HN_IB_STATE_NOP = 0,
    HN_IB_STATE_DOWN = 1,
    HN_IB_STATE_INIT = 2,
    HN_IB_STATE_ARMED = 3,
    HN_IB_STATE_ACTIVE = 4,
    HN_IB_STATE_ACTIVE_DEFER = 5,
};

/* The physical state that means the link is trained ("5: LinkUp"). */
#define HN_IB_PHYS_LINKUP 5

/* One port, as of the last hn_ib_port_read(). Values that could not be read are -1 (state,
 * phys_state), NaN (rate_gbps) or have their *_ok flag at 0. */
struct hn_ib_port {
    char device[HN_IB_NAME_MAX]; /* e.g. "mlx5_0" */
    char port[16];               /* e.g. "1" */
    char link_layer[16];         /* "InfiniBand" or "Ethernet" (RoCE); "" when unknown */
    int state;                   /* enum hn_ib_state */
    char state_name[24];         /* e.g. "ACTIVE" */
    int phys_state;              /* e.g. 5 */
    char phys_state_name[32];    /* e.g. "LinkUp" */
    double rate_gbps;            /* e.g. 400 for "400 Gb/sec (4X NDR)" */
    uint64_t link_downed;        /* counters/link_downed (8 bits in the PMA: saturates at 255) */
    int link_downed_ok;          /* 1 when link_downed was read */
};

/*
 * Finds up to max ports under <sysfs_root>/class/infiniband/<device>/ports/<n>, sorted by
 * device then port number, and reads each with hn_ib_port_read(). A port whose files cannot be
 * read is still listed (with unknown values). Returns the number of ports stored, or
 * -ENOENT when the class directory is missing (no RDMA driver loaded), -EINVAL when max <= 0,
 * or another negative errno.
 */
int hn_ib_scan(const char *sysfs_root, struct hn_ib_port *ports, int max);

/* Re-reads state, phys_state, rate, link_layer and link_downed of a port found by
 * hn_ib_scan(). Returns 0, or the first negative errno met (the other fields are still read). */
int hn_ib_port_read(const char *sysfs_root, struct hn_ib_port *p);

/* 1 when the port's logical state is ACTIVE, else 0. */
int hn_ib_port_active(const struct hn_ib_port *p);

/* Parses "400 Gb/sec (4X NDR)" (also "2.5 Gb/sec ..." and "Mb/sec") into Gb/s. 0 or -EINVAL. */
int hn_ib_parse_rate(const char *s, double *gbps);
/* Parses "4: ACTIVE" into 4 and "ACTIVE" (name capped at namesize). 0 or -EINVAL. */
int hn_ib_parse_state(const char *s, int *num, char *name, size_t namesize);

/*
 * Read access to hn_collector_ib's state (the void * its init made) as of its last collect,
 * for the push to the controller (agent/push.h); collect thread only. A NULL state has no
 * ports. hn_ib_collector_port() returns port i (0 <= i < nports) or NULL;
 * hn_ib_collector_counter() returns the value of counters/<file> (e.g. "symbol_error") in the
 * file's own unit, or NaN when the port has no such file or the last read failed.
 */
int hn_ib_collector_nports(const void *state);
const struct hn_ib_port *hn_ib_collector_port(const void *state, int i);
double hn_ib_collector_counter(const void *state, int i, const char *file);

extern const struct hn_collector hn_collector_ib;

#endif
