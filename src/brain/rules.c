/*
 * rules.c - rules over one node's samples and events (brain.h): DCGM-like limits on ECC,
 * retired pages, row remapping, NVLink and PCIe errors, power and thermal violations, a GPU
 * lost or missing, Xid (the catalog says which are fatal), IB ports going down, a silent
 * agent, and the predictive correctable-ECC trend. Each finding goes to hb_found.
 */
#include "brain/fleet.h"
#include "brain/out.h"
#include "brain/removal.h"
#include "common/util.h"
#include "common/xid.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rising(const struct gpu_st *g, int f)
{
    return !isnan(g->prev[f]) && !isnan(g->v[f]) && g->v[f] > g->prev[f];
}

static double rate_per_s(const struct gpu_st *g, int f)
{
    double dt = g->t[f] - g->prev_t[f];
    if (isnan(g->prev[f]) || isnan(g->v[f]) || dt <= 0)
        return NAN;
    return (g->v[f] - g->prev[f]) / dt;
}

/* The thresholds for node n: the fleet's, with its SKU's overrides. */
static void thresholds(const struct hn_brain *b, const struct node *n, struct hn_sku_rules *t)
{
    t->retired_pages_limit = b->cfg.retired_pages_limit;
    t->nvlink_crc_per_s_limit = b->cfg.nvlink_crc_per_s_limit;
    t->pcie_replay_per_lane_min = b->cfg.pcie_replay_per_lane_min;
    for (size_t i = 0; i < b->cfg.nsku_rules; i++) {
        const struct hn_sku_rules *r = &b->cfg.sku_rules[i];
        if (strcasecmp(r->sku, n->sku) != 0)
            continue;
        if (!isnan(r->retired_pages_limit))
            t->retired_pages_limit = r->retired_pages_limit;
        if (!isnan(r->nvlink_crc_per_s_limit))
            t->nvlink_crc_per_s_limit = r->nvlink_crc_per_s_limit;
        if (!isnan(r->pcie_replay_per_lane_min))
            t->pcie_replay_per_lane_min = r->pcie_replay_per_lane_min;
    }
}

static void check_gpu(struct hn_brain *b, double now, struct node *n, unsigned gi)
{
    struct gpu_st *g = &n->gpus[gi];
    struct hn_sku_rules limits;
    thresholds(b, n, &limits);
    const struct hn_sku_rules *c = &limits;
    struct hn_finding f;
    char ev[320];
    int gpu = (int)gi;

    /* Any new volatile DBE fails (DCGM). Volatile counters reset with the driver, so a
     * non-zero value on first sight is new since the last reset too. */
    double dbe = g->v[HN_F_ECC_DBE_VOL];
    if (!isnan(dbe) && dbe > 0 &&
        (isnan(g->prev[HN_F_ECC_DBE_VOL]) || rising(g, HN_F_ECC_DBE_VOL)) &&
        hb_fire_once(g, R_DBE)) {
        snprintf(ev, sizeof(ev), "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL=%.0f previous=%.0f limit=any new",
                 dbe, g->prev[HN_F_ECC_DBE_VOL]);
        hb_finding_set(&f, "dbe_new", HN_SEV_FATAL, gpu, ev,
                       "GPU %u: new uncorrectable ECC error (%.0f volatile)", gi, dbe);
        hb_found(b, now, n, &f);
    }
    /* Predictive: correctable errors at a rate that announces an uncorrectable one (Meta's
     * and NVIDIA's field experience: HBM failures are often preceded by rising correctable
     * counts). The node is suspect; with `predictive` on, its jobs replace it at their next
     * checkpoint (brain/jobs.c). */
    double sbe_rate = rate_per_s(g, HN_F_ECC_SBE_VOL) * 3600;
    if (b->cfg.sbe_rate_per_h > 0 && sbe_rate >= b->cfg.sbe_rate_per_h &&
        hb_fire_once(g, R_SBE_TREND)) {
        snprintf(ev, sizeof(ev), "ecc_sbe_volatile=%.0f rate_per_h=%.0f limit_per_h=%.0f",
                 g->v[HN_F_ECC_SBE_VOL], sbe_rate, b->cfg.sbe_rate_per_h);
        hb_finding_set(&f, "ecc_trend", HN_SEV_SUSPECT, gpu, ev,
                       "GPU %u: correctable ECC errors at %.0f/h, a failure may follow", gi,
                       sbe_rate);
        hb_found(b, now, n, &f);
        if (b->cfg.predictive)
            n->replace_at_ckpt = 1;
    }
    /* Either cause alone can reach the limit: an unknown one counts as 0. */
    double sbe = g->v[HN_F_RETIRED_SBE], dbe2 = g->v[HN_F_RETIRED_DBE];
    double retired =
        isnan(sbe) && isnan(dbe2) ? NAN : (isnan(sbe) ? 0 : sbe) + (isnan(dbe2) ? 0 : dbe2);
    if (!isnan(retired) && retired >= c->retired_pages_limit && hb_fire_once(g, R_RETIRED)) {
        snprintf(ev, sizeof(ev), "retired_sbe=%.0f retired_dbe=%.0f limit=%.0f",
                 g->v[HN_F_RETIRED_SBE], g->v[HN_F_RETIRED_DBE], c->retired_pages_limit);
        hb_finding_set(&f, "retired_pages", HN_SEV_FATAL, gpu, ev, "GPU %u: %.0f retired pages", gi,
                       retired);
        hb_found(b, now, n, &f);
    }
    if (g->v[HN_F_REMAP_FAILURE] > 0 && hb_fire_once(g, R_REMAP_FAIL)) {
        snprintf(ev, sizeof(ev), "DCGM_FI_DEV_ROW_REMAP_FAILURE=1 uncorrectable_rows=%.0f",
                 g->v[HN_F_REMAP_UNCORRECTABLE]);
        hb_finding_set(&f, "row_remap_failure", HN_SEV_FATAL, gpu, ev,
                       "GPU %u: row remapping failed", gi);
        hb_found(b, now, n, &f);
    }
    if (g->v[HN_F_REMAP_PENDING] > 0 && hb_fire_once(g, R_REMAP_PENDING)) {
        hb_finding_set(&f, "row_remap_pending", HN_SEV_WARN, gpu, "DCGM_FI_DEV_ROW_REMAP_PENDING=1",
                       "GPU %u: row remap pending, reset the GPU at the next job boundary", gi);
        hb_found(b, now, n, &f);
    }
    if (rising(g, HN_F_NVLINK_REPLAY) && hb_fire_once(g, R_NVL_REPLAY)) {
        snprintf(ev, sizeof(ev), "nvlink_replay=%.0f previous=%.0f", g->v[HN_F_NVLINK_REPLAY],
                 g->prev[HN_F_NVLINK_REPLAY]);
        hb_finding_set(&f, "nvlink_replay", HN_SEV_FATAL, gpu, ev, "GPU %u: NVLink replay errors",
                       gi);
        hb_found(b, now, n, &f);
    }
    if (rising(g, HN_F_NVLINK_RECOVERY) && hb_fire_once(g, R_NVL_RECOVERY)) {
        snprintf(ev, sizeof(ev), "nvlink_recovery=%.0f previous=%.0f", g->v[HN_F_NVLINK_RECOVERY],
                 g->prev[HN_F_NVLINK_RECOVERY]);
        hb_finding_set(&f, "nvlink_recovery", HN_SEV_FATAL, gpu, ev,
                       "GPU %u: NVLink recovery errors", gi);
        hb_found(b, now, n, &f);
    }
    double crc = rate_per_s(g, HN_F_NVLINK_CRC_FLIT);
    double crc_data = rate_per_s(g, HN_F_NVLINK_CRC_DATA);
    if (!isnan(crc_data))
        crc = isnan(crc) ? crc_data : crc + crc_data;
    if (!isnan(crc) && crc >= c->nvlink_crc_per_s_limit && hb_fire_once(g, R_NVL_CRC)) {
        snprintf(ev, sizeof(ev), "nvlink_crc_rate=%.1f/s limit=%.0f/s", crc,
                 c->nvlink_crc_per_s_limit);
        hb_finding_set(&f, "nvlink_crc", HN_SEV_FATAL, gpu, ev, "GPU %u: NVLink CRC errors %.0f/s",
                       gi, crc);
        hb_found(b, now, n, &f);
    }
    double replay = rate_per_s(g, HN_F_PCIE_REPLAY) * 60;
    double width = isnan(g->v[HN_F_PCIE_WIDTH]) ? 16 : g->v[HN_F_PCIE_WIDTH];
    if (!isnan(replay) && replay > c->pcie_replay_per_lane_min * width && hb_fire_once(g, R_PCIE)) {
        snprintf(ev, sizeof(ev), "pcie_replay_rate=%.1f/min budget=%.2f/lane/min width=%.0f",
                 replay, c->pcie_replay_per_lane_min, width);
        hb_finding_set(&f, "pcie_replay", HN_SEV_WARN, gpu, ev, "GPU %u: PCIe replays %.1f/min", gi,
                       replay);
        hb_found(b, now, n, &f);
    }
    static const struct {
        int field, rule;
        const char *name;
    } viol[] = {{HN_F_POWER_VIOLATION, R_POWER_VIOL, "power_violation"},
                {HN_F_THERMAL_VIOLATION, R_THERMAL_VIOL, "thermal_violation"}};
    for (size_t i = 0; i < HN_ARRAY_LEN(viol); i++) {
        if (!rising(g, viol[i].field)) {
            g->fired &= ~(1u << viol[i].rule); /* re-armed once the counter stops rising */
            continue;
        }
        if (!hb_fire_once(g, viol[i].rule))
            continue;
        snprintf(ev, sizeof(ev), "%s_us=%.0f previous=%.0f", viol[i].name, g->v[viol[i].field],
                 g->prev[viol[i].field]);
        hb_finding_set(&f, viol[i].name, HN_SEV_WARN, gpu, ev, "GPU %u: %s counter rising", gi,
                       viol[i].name);
        hb_found(b, now, n, &f);
    }
}

int hn_brain_samples(struct hn_brain *b, double now, int node, unsigned gpu, const unsigned *fields,
                     const double *values, unsigned n)
{
    struct node *nd = hb_node_at(b, node);
    if (!nd || gpu >= nd->gpus_expected)
        return -EINVAL;
    struct gpu_st *g = &nd->gpus[gpu];
    nd->silent_fired = 0;
    nd->last_data = now;
    for (unsigned i = 0; i < n; i++) {
        unsigned f = fields[i];
        if (f >= HN_F_COUNT)
            continue; /* a newer agent's field */
        g->prev[f] = g->v[f];
        g->prev_t[f] = g->t[f];
        g->v[f] = values[i];
        g->t[f] = now;
    }
    check_gpu(b, now, nd, gpu);
    if (g->v[HN_F_GPU_UP] == 0 && !g->lost)
        hn_brain_gpu_lost(b, now, node, gpu, 1);
    else if (g->v[HN_F_GPU_UP] == 1)
        g->lost = 0;
    return 0;
}

int hn_brain_gpu_count(struct hn_brain *b, double now, int node, unsigned count)
{
    struct node *n = hb_node_at(b, node);
    if (!n)
        return -EINVAL;
    n->gpus_seen = count;
    if (count >= n->gpus_expected) {
        n->count_fired = 0;
        return 0;
    }
    if (n->count_fired)
        return 0;
    n->count_fired = 1;
    struct hn_finding f;
    char ev[96];
    snprintf(ev, sizeof(ev), "gpus=%u expected=%u", count, n->gpus_expected);
    hb_finding_set(&f, "gpu_count", HN_SEV_FATAL, -1, ev, "%u GPUs found, %u expected", count,
                   n->gpus_expected);
    hb_found(b, now, n, &f);
    return 0;
}

int hn_brain_gpu_lost(struct hn_brain *b, double now, int node, unsigned gpu, int lost)
{
    struct node *n = hb_node_at(b, node);
    if (!n || gpu >= n->gpus_expected)
        return -EINVAL;
    struct gpu_st *g = &n->gpus[gpu];
    g->lost = lost;
    if (!lost || !hb_fire_once(g, R_LOST))
        return 0;
    struct hn_finding f;
    hb_finding_set(&f, "gpu_lost", HN_SEV_FATAL, (int)gpu, "nvml=GPU_IS_LOST",
                   "GPU %u is lost (fell off the bus)", gpu);
    hb_found(b, now, n, &f);
    return 0;
}

int hn_brain_xid(struct hn_brain *b, double now, int node, unsigned gpu, unsigned code)
{
    struct node *n = hb_node_at(b, node);
    if (!n)
        return -EINVAL;
    const struct hn_xid_entry *e =
        b->cfg.xid_catalog ? hn_xid_lookup(b->cfg.xid_catalog, code) : NULL;
    int fatal = hn_xid_is_fatal(e);
    struct hn_finding f;
    char ev[320];
    snprintf(ev, sizeof(ev), "xid=%u action=%s catalog=%s", code,
             e && e->immediate_resolution[0] ? e->immediate_resolution : "none",
             e ? "yes" : "unknown code");
    /* Catalog mnemonics may hold newlines; a reason is one line. */
    char mnemonic[96];
    hn_strlcpy(mnemonic, e ? e->mnemonic : "unknown", sizeof(mnemonic));
    for (char *p = mnemonic; *p; p++) {
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    }
    int g = gpu == 0xffffu || gpu >= n->gpus_expected ? -1 : (int)gpu;
    if (g >= 0)
        hb_finding_set(&f, "xid", fatal ? HN_SEV_FATAL : HN_SEV_WARN, g, ev,
                       "xid %u (%s) on GPU %d", code, mnemonic, g);
    else
        hb_finding_set(&f, "xid", fatal ? HN_SEV_FATAL : HN_SEV_WARN, g, ev, "xid %u (%s)", code,
                       mnemonic);
    hb_found(b, now, n, &f);
    return 0;
}

int hn_brain_ib_port(struct hn_brain *b, double now, int node, const char *port, int active,
                     uint64_t link_downed)
{
    struct node *n = hb_node_at(b, node);
    if (!n || !port)
        return -EINVAL;
    struct ib_st *p = NULL;
    for (unsigned i = 0; i < n->nib; i++) {
        if (strcmp(n->ib[i].key, port) == 0)
            p = &n->ib[i];
    }
    if (!p) {
        if (n->nib == MAX_IB_PORTS)
            return -ENOSPC;
        p = &n->ib[n->nib++];
        hn_strlcpy(p->key, port, sizeof(p->key));
        p->active = active;
        p->link_downed = link_downed;
        if (active)
            return 0;
    }
    struct hn_finding f;
    char ev[160];
    int was_active = p->active;
    uint64_t before = p->link_downed;
    p->active = active;
    p->link_downed = link_downed;
    if (link_downed > before) {
        snprintf(ev, sizeof(ev), "link_downed=%llu previous=%llu", (unsigned long long)link_downed,
                 (unsigned long long)before);
        hb_finding_set(&f, "ib_link_downed", HN_SEV_FATAL, -1, ev, "IB port %s went down", port);
        hb_found(b, now, n, &f);
    } else if (!active && (was_active || before == link_downed)) {
        if (!was_active && n->state != HN_NODE_READY && n->state != HN_NODE_NEW)
            return 0;
        snprintf(ev, sizeof(ev), "state=not ACTIVE link_downed=%llu",
                 (unsigned long long)link_downed);
        hb_finding_set(&f, "ib_port_down", HN_SEV_FATAL, -1, ev, "IB port %s is not ACTIVE", port);
        hb_found(b, now, n, &f);
    }
    return 0;
}

int hn_brain_node_silent(struct hn_brain *b, double now, int node, double silent_s)
{
    struct node *n = hb_node_at(b, node);
    if (!n)
        return -EINVAL;
    if (n->silent_fired)
        return 0;
    n->silent_fired = 1;
    struct hn_finding f;
    char ev[96];
    snprintf(ev, sizeof(ev), "silent_for=%.0fs", silent_s);
    hb_finding_set(&f, "agent_silent", HN_SEV_SUSPECT, -1, ev,
                   "no telemetry from the node's agent for %.0f s", silent_s);
    hb_found(b, now, n, &f);
    return 0;
}
