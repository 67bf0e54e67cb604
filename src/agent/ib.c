/*
 * ib.c - the InfiniBand/RoCE collector and the port scan behind `houston check`.
 *
 * Layout read (Documentation/ABI/stable/sysfs-class-infiniband in the kernel tree):
 *   class/infiniband/<dev>/{hca_type,fw_ver,board_id}
 *   class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer}
 *   class/infiniband/<dev>/ports/<n>/counters/<pma counter>      (IBTA PortCounters[Extended])
 *   class/infiniband/<dev>/ports/<n>/hw_counters/<driver counter> (mlx5: out_of_sequence, ...)
 * Each file holds one line. Which counter files exist is decided once at init: a file absent
 * then is never rendered, a file that later fails to read renders nothing (NaN) for that cycle,
 * bumps houston_ib_port_read_errors_total and is complained about once.
 */
#include "agent/ib.h"

#include "agent/config.h"
#include "common/fsroot.h"
#include "common/log.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HW_MAX      64  /* hw_counters tracked per port */
#define HW_NAME_MAX 48  /* longer hw counter names are skipped */
#define LABELS_MAX  256 /* preformatted device/port/link_layer labels */
#define INFO_MAX    384 /* device info labels */

/* The PMA counters under counters/, in render order. scale turns the file's unit into the
 * metric's: port_{xmit,rcv}_data count 4-byte words (IBTA vol. 1 16.1.3.5, "octets divided
 * by 4"), so they are multiplied by 4 to give bytes. */
struct counter_def {
    const char *file;
    const char *metric;
    const char *help;
    double scale;
};

static const struct counter_def counter_defs[] = {
    {"port_xmit_data", "houston_ib_port_xmit_bytes_total",
     "Bytes transmitted (counters/port_xmit_data counts 4-byte words; multiplied by 4).", 4},
    {"port_rcv_data", "houston_ib_port_rcv_bytes_total",
     "Bytes received (counters/port_rcv_data counts 4-byte words; multiplied by 4).", 4},
    {"port_xmit_packets", "houston_ib_port_xmit_packets_total",
     "Packets transmitted (counters/port_xmit_packets).", 1},
    {"port_rcv_packets", "houston_ib_port_rcv_packets_total",
     "Packets received (counters/port_rcv_packets).", 1},
    {"unicast_xmit_packets", "houston_ib_port_unicast_xmit_packets_total",
     "Unicast packets transmitted (counters/unicast_xmit_packets).", 1},
    {"unicast_rcv_packets", "houston_ib_port_unicast_rcv_packets_total",
     "Unicast packets received (counters/unicast_rcv_packets).", 1},
    {"multicast_xmit_packets", "houston_ib_port_multicast_xmit_packets_total",
     "Multicast packets transmitted (counters/multicast_xmit_packets).", 1},
    {"multicast_rcv_packets", "houston_ib_port_multicast_rcv_packets_total",
     "Multicast packets received (counters/multicast_rcv_packets).", 1},
    {"symbol_error", "houston_ib_symbol_error_total",
     "Minor link errors on any physical lane (counters/symbol_error; 16-bit, saturates).", 1},
    {"link_error_recovery", "houston_ib_link_error_recovery_total",
     "Successful link error recoveries (counters/link_error_recovery; 8-bit, saturates).", 1},
    {"link_downed", "houston_ib_link_downed_total",
     "Times the link went down after failing error recovery (counters/link_downed; 8-bit, "
     "saturates at 255).",
     1},
    {"port_rcv_errors", "houston_ib_port_rcv_errors_total",
     "Received packets with errors (counters/port_rcv_errors).", 1},
    {"port_rcv_remote_physical_errors", "houston_ib_port_rcv_remote_physical_errors_total",
     "Received packets marked bad by the sender (counters/port_rcv_remote_physical_errors).", 1},
    {"port_rcv_switch_relay_errors", "houston_ib_port_rcv_switch_relay_errors_total",
     "Received packets a switch could not relay (counters/port_rcv_switch_relay_errors).", 1},
    {"port_xmit_discards", "houston_ib_port_xmit_discards_total",
     "Outbound packets discarded, port down or congested (counters/port_xmit_discards).", 1},
    {"port_xmit_wait", "houston_ib_port_xmit_wait_total",
     "Ticks during which data was ready to send but had no flow-control credits "
     "(counters/port_xmit_wait).",
     1},
    {"excessive_buffer_overrun_errors", "houston_ib_excessive_buffer_overrun_errors_total",
     "Consecutive receive buffer overrun events (counters/excessive_buffer_overrun_errors).", 1},
    {"local_link_integrity_errors", "houston_ib_local_link_integrity_errors_total",
     "Times local physical errors exceeded the threshold (counters/local_link_integrity_errors).",
     1},
    {"port_rcv_constraint_errors", "houston_ib_port_rcv_constraint_errors_total",
     "Received packets discarded by partition or raw constraints "
     "(counters/port_rcv_constraint_errors).",
     1},
    {"port_xmit_constraint_errors", "houston_ib_port_xmit_constraint_errors_total",
     "Outbound packets discarded by partition or raw constraints "
     "(counters/port_xmit_constraint_errors).",
     1},
    {"VL15_dropped", "houston_ib_vl15_dropped_total",
     "Incoming VL15 (subnet management) packets dropped (counters/VL15_dropped).", 1},
};

#define NCOUNTERS HN_ARRAY_LEN(counter_defs)

_Static_assert(HN_ARRAY_LEN(counter_defs) <= 64, "the present mask is a uint64_t");

struct port {
    struct hn_ib_port pub;
    char labels[LABELS_MAX]; /* device="..",port="..",link_layer=".." */
    uint64_t present;        /* bit i: counter_defs[i] existed at init */
    double val[NCOUNTERS];   /* scaled values; NaN when the last read failed */
    int nhw;
    char hw_name[HW_MAX][HW_NAME_MAX]; /* sorted hw_counters/ file names */
    double hw_val[HW_MAX];
    uint64_t read_errors; /* cycles in which some file of the port failed */
    struct hn_complain complain;
};

struct ib_state {
    char root[PATH_MAX];
    int nports;
    struct port *ports;
    int ndevices;
    char (*device_info)[INFO_MAX]; /* labels of houston_ib_device_info, one per device */
};

/* ---- parsing ---------------------------------------------------------------------------- */

int hn_ib_parse_state(const char *s, int *num, char *name, size_t namesize)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= 16)
        return -EINVAL;
    char head[16];
    memcpy(head, s, (size_t)(colon - s));
    head[colon - s] = '\0';
    int64_t v;
    if (hn_parse_i64(head, 10, &v) < 0 || v < 0 || v > 255)
        return -EINVAL;
    *num = (int)v;
    if (namesize > 0) {
        char tmp[64];
        hn_strlcpy(tmp, colon + 1, sizeof(tmp));
        hn_strlcpy(name, hn_trim(tmp), namesize);
    }
    return 0;
}

int hn_ib_parse_rate(const char *s, double *gbps)
{
    char tmp[64];
    hn_strlcpy(tmp, s, sizeof(tmp));
    char *p = tmp;
    while (*p == ' ')
        p++;
    char *sp = strchr(p, ' ');
    if (!sp)
        return -EINVAL;
    *sp = '\0';
    const char *unit = sp + 1;
    double v;
    if (hn_parse_double(p, &v) < 0 || !(v >= 0) || isinf(v))
        return -EINVAL;
    if (strncmp(unit, "Gb/sec", 6) == 0)
        *gbps = v;
    else if (strncmp(unit, "Mb/sec", 6) == 0)
        *gbps = v / 1000.0;
    else
        return -EINVAL;
    return 0;
}

/* ---- the port scan ---------------------------------------------------------------------- */

static long read_port_file(const char *root, const struct hn_ib_port *p, const char *file,
                           char *buf, size_t size)
{
    char path[PATH_MAX];
    int rc = hn_path(path, sizeof(path), root, "/class/infiniband/%s/ports/%s/%s", p->device,
                     p->port, file);
    if (rc < 0)
        return rc;
    return hn_read_file(path, buf, size);
}

static int read_port_u64(const char *root, const struct hn_ib_port *p, const char *file,
                         uint64_t *out)
{
    char path[PATH_MAX];
    int rc = hn_path(path, sizeof(path), root, "/class/infiniband/%s/ports/%s/%s", p->device,
                     p->port, file);
    if (rc < 0)
        return rc;
    return hn_read_u64(path, out);
}

int hn_ib_port_read(const char *root, struct hn_ib_port *p)
{
    char buf[128];
    int first = 0;
    long n;

    p->state = HN_IB_STATE_UNKNOWN;
    p->state_name[0] = '\0';
    n = read_port_file(root, p, "state", buf, sizeof(buf));
    if (n >= 0)
        n = hn_ib_parse_state(buf, &p->state, p->state_name, sizeof(p->state_name));
    if (n < 0)
        first = (int)n;

    p->phys_state = -1;
    p->phys_state_name[0] = '\0';
    n = read_port_file(root, p, "phys_state", buf, sizeof(buf));
    if (n >= 0)
        n = hn_ib_parse_state(buf, &p->phys_state, p->phys_state_name, sizeof(p->phys_state_name));
    if (n < 0 && !first)
        first = (int)n;

    p->rate_gbps = NAN;
    n = read_port_file(root, p, "rate", buf, sizeof(buf));
    if (n >= 0)
        n = hn_ib_parse_rate(buf, &p->rate_gbps);
    if (n < 0 && !first)
        first = (int)n;

    /* link_layer appeared in 2.6.37; a kernel without it means InfiniBand, but leave it blank
     * rather than guess. It is not an error. */
    n = read_port_file(root, p, "link_layer", buf, sizeof(buf));
    if (n >= 0)
        hn_strlcpy(p->link_layer, hn_trim(buf), sizeof(p->link_layer));

    /* Software devices (rxe, siw) have no PMA counters: a missing file is not an error. */
    p->link_downed_ok = 0;
    int rc = read_port_u64(root, p, "counters/link_downed", &p->link_downed);
    if (rc == 0)
        p->link_downed_ok = 1;
    else if (rc != -ENOENT && !first)
        first = rc;
    return first;
}

int hn_ib_port_active(const struct hn_ib_port *p)
{
    return p->state == HN_IB_STATE_ACTIVE;
}

static int port_cmp(const void *a, const void *b)
{
    const struct hn_ib_port *x = a, *y = b;
    int c = strcmp(x->device, y->device);
    if (c)
        return c;
    uint64_t nx = 0, ny = 0;
    hn_parse_u64(x->port, 10, &nx);
    hn_parse_u64(y->port, 10, &ny);
    return nx < ny ? -1 : nx > ny;
}

/* Adds the numeric port directories of one device to ports[*n..max). */
static void scan_device(const char *root, const char *dev, struct hn_ib_port *ports, int *n,
                        int max)
{
    char path[PATH_MAX];
    if (hn_path(path, sizeof(path), root, "/class/infiniband/%s/ports", dev) < 0)
        return;
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *de;
    while (*n < max && (de = readdir(d)) != NULL) {
        uint64_t num;
        if (hn_parse_u64(de->d_name, 10, &num) < 0 || strlen(de->d_name) >= sizeof(ports->port))
            continue;
        struct hn_ib_port *p = &ports[*n];
        memset(p, 0, sizeof(*p));
        hn_strlcpy(p->device, dev, sizeof(p->device));
        hn_strlcpy(p->port, de->d_name, sizeof(p->port));
        (*n)++;
    }
    closedir(d);
}

int hn_ib_scan(const char *sysfs_root, struct hn_ib_port *ports, int max)
{
    if (max <= 0)
        return -EINVAL;
    char path[PATH_MAX];
    int rc = hn_path(path, sizeof(path), sysfs_root, "/class/infiniband");
    if (rc < 0)
        return rc;
    DIR *d = opendir(path);
    if (!d)
        return -errno;
    int n = 0;
    struct dirent *de;
    while (n < max && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || strlen(de->d_name) >= HN_IB_NAME_MAX)
            continue;
        scan_device(sysfs_root, de->d_name, ports, &n, max);
    }
    closedir(d);
    qsort(ports, (size_t)n, sizeof(*ports), port_cmp);
    for (int i = 0; i < n; i++)
        hn_ib_port_read(sysfs_root, &ports[i]);
    return n;
}

/* ---- the collector ---------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Records which counter files exist and lists hw_counters/ (sorted). "lifespan" is skipped:
 * it is the driver's cache period in milliseconds, not a counter. */
static void find_counters(const char *root, struct port *p)
{
    char path[PATH_MAX];
    for (size_t i = 0; i < NCOUNTERS; i++) {
        if (hn_path(path, sizeof(path), root, "/class/infiniband/%s/ports/%s/counters/%s",
                    p->pub.device, p->pub.port, counter_defs[i].file) == 0 &&
            access(path, F_OK) == 0)
            p->present |= 1ull << i;
    }
    if (hn_path(path, sizeof(path), root, "/class/infiniband/%s/ports/%s/hw_counters",
                p->pub.device, p->pub.port) < 0)
        return;
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *de;
    while (p->nhw < HW_MAX && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || strlen(de->d_name) >= HW_NAME_MAX ||
            strcmp(de->d_name, "lifespan") == 0)
            continue;
        hn_strlcpy(p->hw_name[p->nhw++], de->d_name, HW_NAME_MAX);
    }
    closedir(d);
    qsort(p->hw_name, (size_t)p->nhw, HW_NAME_MAX, name_cmp);
}

static void read_device_attr(const char *root, const char *dev, const char *attr, char *out,
                             size_t size)
{
    char path[PATH_MAX];
    out[0] = '\0';
    if (hn_path(path, sizeof(path), root, "/class/infiniband/%s/%s", dev, attr) < 0)
        return;
    if (hn_read_file(path, out, size) < 0)
        out[0] = '\0';
    hn_trim(out);
}

static void build_labels(struct ib_state *st)
{
    for (int i = 0; i < st->nports; i++) {
        struct port *p = &st->ports[i];
        size_t len = 0;
        p->labels[0] = '\0';
        /* The names are capped well below LABELS_MAX, so these cannot fail. */
        hn_expo_label(p->labels, sizeof(p->labels), &len, "device", p->pub.device);
        hn_expo_label(p->labels, sizeof(p->labels), &len, "port", p->pub.port);
        hn_expo_label(p->labels, sizeof(p->labels), &len, "link_layer", p->pub.link_layer);

        if (i > 0 && strcmp(p->pub.device, st->ports[i - 1].pub.device) == 0)
            continue;
        char hca[64], fw[64], board[64];
        read_device_attr(st->root, p->pub.device, "hca_type", hca, sizeof(hca));
        read_device_attr(st->root, p->pub.device, "fw_ver", fw, sizeof(fw));
        read_device_attr(st->root, p->pub.device, "board_id", board, sizeof(board));
        char *info = st->device_info[st->ndevices++];
        len = 0;
        info[0] = '\0';
        hn_expo_label(info, INFO_MAX, &len, "device", p->pub.device);
        hn_expo_label(info, INFO_MAX, &len, "hca_type", hca);
        hn_expo_label(info, INFO_MAX, &len, "fw_ver", fw);
        hn_expo_label(info, INFO_MAX, &len, "board_id", board);
    }
}

static void ib_fini(void *state)
{
    struct ib_state *st = state;
    if (!st)
        return;
    free(st->ports);
    free(st->device_info);
    free(st);
}

static int ib_init(const struct hn_agent_config *cfg, void **state)
{
    struct hn_ib_port *found = xcalloc(HN_IB_MAX_PORTS, sizeof(*found));
    int n = hn_ib_scan(cfg->sysfs_root, found, HN_IB_MAX_PORTS);
    if (n <= 0) {
        free(found);
        return n < 0 ? n : -ENOENT;
    }
    if (n == HN_IB_MAX_PORTS)
        hn_warn("ib: tracking the first %d ports only", HN_IB_MAX_PORTS);

    struct ib_state *st = xcalloc(1, sizeof(*st));
    hn_strlcpy(st->root, cfg->sysfs_root, sizeof(st->root));
    st->nports = n;
    st->ports = xcalloc((size_t)n, sizeof(*st->ports));
    st->device_info = xcalloc((size_t)n, sizeof(*st->device_info));
    for (int i = 0; i < n; i++) {
        struct port *p = &st->ports[i];
        p->pub = found[i];
        find_counters(st->root, p);
        for (size_t c = 0; c < NCOUNTERS; c++)
            p->val[c] = NAN;
        for (int h = 0; h < HW_MAX; h++)
            p->hw_val[h] = NAN;
    }
    free(found);
    build_labels(st);
    hn_info("ib: %d port(s) on %d device(s)", st->nports, st->ndevices);
    *state = st;
    return 0;
}

/* Reads one port; returns 0 or the first negative errno, naming the file in *what. */
static int collect_port(const char *root, struct port *p, const char **what)
{
    int first = hn_ib_port_read(root, &p->pub);
    if (first)
        *what = "state/phys_state/rate";
    char file[HW_NAME_MAX + 16]; /* "hw_counters/" + a name shorter than HW_NAME_MAX */
    for (size_t i = 0; i < NCOUNTERS; i++) {
        if (!(p->present & (1ull << i)))
            continue;
        (void)snprintf(file, sizeof(file), "counters/%s", counter_defs[i].file);
        uint64_t v;
        int rc = read_port_u64(root, &p->pub, file, &v);
        p->val[i] = rc ? NAN : (double)v * counter_defs[i].scale;
        if (rc && !first) {
            first = rc;
            *what = counter_defs[i].file;
        }
    }
    for (int h = 0; h < p->nhw; h++) {
        (void)snprintf(file, sizeof(file), "hw_counters/%s", p->hw_name[h]);
        uint64_t v;
        int rc = read_port_u64(root, &p->pub, file, &v);
        p->hw_val[h] = rc ? NAN : (double)v;
        if (rc && !first) {
            first = rc;
            *what = p->hw_name[h];
        }
    }
    return first;
}

static int ib_collect(void *state)
{
    struct ib_state *st = state;
    int first = 0;
    for (int i = 0; i < st->nports; i++) {
        struct port *p = &st->ports[i];
        const char *what = "";
        int rc = collect_port(st->root, p, &what);
        if (rc) {
            p->read_errors++;
            hn_complain(&p->complain, "ib: %s port %s: cannot read %s: %s", p->pub.device,
                        p->pub.port, what, strerror(-rc));
            if (!first)
                first = rc;
        } else {
            hn_complain_clear(&p->complain, "ib: %s port %s: readable again", p->pub.device,
                              p->pub.port);
        }
    }
    return first;
}

static void render_port_gauges(struct ib_state *st, struct hn_expo *e)
{
    hn_expo_family(e, "houston_ib_port_state",
                   "Logical port state from ports/N/state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, "
                   "5 ACTIVE_DEFER.",
                   HN_GAUGE);
    for (int i = 0; i < st->nports; i++) {
        const struct port *p = &st->ports[i];
        hn_expo_sample(e, "houston_ib_port_state", p->labels,
                       p->pub.state < 0 ? NAN : p->pub.state);
    }
    hn_expo_family(e, "houston_ib_port_up", "1 if the logical port state is ACTIVE, else 0.",
                   HN_GAUGE);
    for (int i = 0; i < st->nports; i++) {
        const struct port *p = &st->ports[i];
        hn_expo_sample(e, "houston_ib_port_up", p->labels,
                       p->pub.state < 0 ? NAN : hn_ib_port_active(&p->pub));
    }
    hn_expo_family(e, "houston_ib_port_phys_state",
                   "Physical port state from ports/N/phys_state: 1 Sleep, 2 Polling, 3 Disabled, "
                   "4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest.",
                   HN_GAUGE);
    for (int i = 0; i < st->nports; i++) {
        const struct port *p = &st->ports[i];
        hn_expo_sample(e, "houston_ib_port_phys_state", p->labels,
                       p->pub.phys_state < 0 ? NAN : p->pub.phys_state);
    }
    hn_expo_family(e, "houston_ib_port_rate_bytes_per_second",
                   "Signalling rate of the port from ports/N/rate, in bytes per second (Gb/s / 8).",
                   HN_GAUGE);
    for (int i = 0; i < st->nports; i++) {
        const struct port *p = &st->ports[i];
        hn_expo_sample(e, "houston_ib_port_rate_bytes_per_second", p->labels,
                       p->pub.rate_gbps * 1e9 / 8);
    }
}

static void render_counters(struct ib_state *st, struct hn_expo *e)
{
    for (size_t c = 0; c < NCOUNTERS; c++) {
        int any = 0;
        for (int i = 0; i < st->nports && !any; i++)
            any = (st->ports[i].present & (1ull << c)) != 0;
        if (!any)
            continue;
        hn_expo_family(e, counter_defs[c].metric, counter_defs[c].help, HN_COUNTER);
        for (int i = 0; i < st->nports; i++) {
            const struct port *p = &st->ports[i];
            if (p->present & (1ull << c))
                hn_expo_sample(e, counter_defs[c].metric, p->labels, p->val[c]);
        }
    }

    int any_hw = 0;
    for (int i = 0; i < st->nports; i++)
        any_hw |= st->ports[i].nhw > 0;
    if (!any_hw)
        return;
    hn_expo_family(e, "houston_ib_hw_events_total",
                   "Driver hardware counters from ports/N/hw_counters/<counter> (e.g. mlx5 "
                   "out_of_sequence, roce_adp_retrans, np_cnp_sent).",
                   HN_COUNTER);
    for (int i = 0; i < st->nports; i++) {
        const struct port *p = &st->ports[i];
        char labels[LABELS_MAX + HW_NAME_MAX + 16];
        size_t base = hn_strlcpy(labels, p->labels, sizeof(labels));
        for (int h = 0; h < p->nhw; h++) {
            size_t len = base;
            labels[len] = '\0';
            if (hn_expo_label(labels, sizeof(labels), &len, "counter", p->hw_name[h]) == 0)
                hn_expo_sample(e, "houston_ib_hw_events_total", labels, p->hw_val[h]);
        }
    }
}

static void ib_render(void *state, struct hn_expo *e)
{
    struct ib_state *st = state;
    hn_expo_family(e, "houston_ib_device_info",
                   "RDMA device identity (hca_type, fw_ver, board_id files); value 1.", HN_GAUGE);
    for (int i = 0; i < st->ndevices; i++)
        hn_expo_sample(e, "houston_ib_device_info", st->device_info[i], 1);
    render_port_gauges(st, e);
    render_counters(st, e);
    hn_expo_family(e, "houston_ib_port_read_errors_total",
                   "Collection cycles in which a file of the port could not be read.", HN_COUNTER);
    for (int i = 0; i < st->nports; i++) {
        const struct port *p = &st->ports[i];
        hn_expo_sample(e, "houston_ib_port_read_errors_total", p->labels, (double)p->read_errors);
    }
}

/* ---- read access for the push to the controller ---------------------------------------- */

int hn_ib_collector_nports(const void *state)
{
    const struct ib_state *st = state;
    return st ? st->nports : 0;
}

const struct hn_ib_port *hn_ib_collector_port(const void *state, int i)
{
    const struct ib_state *st = state;
    if (!st || i < 0 || i >= st->nports)
        return NULL;
    return &st->ports[i].pub;
}

double hn_ib_collector_counter(const void *state, int i, const char *file)
{
    const struct ib_state *st = state;
    if (!st || i < 0 || i >= st->nports)
        return NAN;
    const struct port *p = &st->ports[i];
    for (size_t c = 0; c < NCOUNTERS; c++) {
        if (strcmp(counter_defs[c].file, file) == 0)
            return p->present & (1ull << c) ? p->val[c] / counter_defs[c].scale : NAN;
    }
    return NAN;
}

const struct hn_collector hn_collector_ib = {
    .name = "ib",
    .init = ib_init,
    .collect = ib_collect,
    .render = ib_render,
    .fini = ib_fini,
};
