/*
 * peers.c - peers.h says what this part does and owns.
 */
#include "brain/peers.h"

#include "brain/fleet.h"
#include "brain/removal.h"
#include "brain/out.h"
#include "common/stats.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int loaded(const struct hn_brain *b, double now, const struct node *n,
                  const struct gpu_st *g)
{
    return (n->state == HN_NODE_READY || n->state == HN_NODE_SUSPECT) && !g->lost &&
           !isnan(g->v[HN_F_SM_CLOCK]) && g->v[HN_F_GPU_UTIL] >= b->cfg.laggard_min_util &&
           now - g->t[HN_F_SM_CLOCK] <= b->cfg.laggard_max_age_s;
}

/* A statistic compared across same-SKU peers: which field, which side of the median is bad,
 * how far it must be (relative to the median, or absolute), the rule it fires. */
struct peer_rule {
    int field;
    int sign;         /* -1: below the median is bad; +1: above */
    double min_rel;   /* minimum |v - median| / median */
    double min_abs;   /* minimum |v - median| */
    int equal_power;  /* peers limited to GPUs within 10% of the median power */
    const char *rule; /* finding name */
    int bit;          /* fire-once bit */
    int slot;         /* streak slot in struct gpu_st */
};

/* Collects field f of the peers (loaded GPUs of sku, and within 10% of median power when
 * asked) into b->scratch; returns how many. */
static size_t peer_values(struct hn_brain *b, double now, const char *sku, int f, double power_med)
{
    size_t k = 0;
    for (size_t i = 0; i < b->nnodes; i++) {
        const struct node *nd = &b->nodes[i];
        if (strcmp(nd->sku, sku) != 0)
            continue;
        for (unsigned g = 0; g < nd->gpus_expected; g++) {
            const struct gpu_st *gs = &nd->gpus[g];
            if (!loaded(b, now, nd, gs) || isnan(gs->v[f]))
                continue;
            if (!isnan(power_med) && !(fabs(gs->v[HN_F_POWER] - power_med) <= 0.1 * power_med))
                continue;
            if (k == b->capscratch) {
                b->capscratch = b->capscratch ? b->capscratch * 2 : 1024;
                b->scratch = xrealloc(b->scratch, b->capscratch * sizeof(double));
            }
            b->scratch[k++] = gs->v[f];
        }
    }
    return k;
}

/* Robust statistics of field f among the peers: median and 1.4826 x MAD (a standard deviation
 * estimate that the outliers we look for do not inflate). Returns the peer count. */
static size_t peer_stats(struct hn_brain *b, double now, const char *sku, int f, double power_med,
                         double *med, double *sigma)
{
    size_t n = peer_values(b, now, sku, f, power_med);
    if (n < (size_t)b->cfg.laggard_min_peers)
        return n;
    *med = hn_median(b->scratch, n);
    for (size_t i = 0; i < n; i++)
        b->scratch[i] = fabs(b->scratch[i] - *med);
    *sigma = 1.4826 * hn_median(b->scratch, n);
    return n;
}

/* 1 when field f of g holds a sample that streak `slot` has not counted yet, which it now
 * has: persistence counts samples, not ticks, so a tick with no new sample changes nothing. */
static int new_sample(struct gpu_st *g, int f, int slot)
{
    if (g->t[f] == g->streak_t[slot])
        return 0;
    g->streak_t[slot] = g->t[f];
    return 1;
}

/* Counts a new sample into streak `slot` of g: one out of line extends the streak, one in line
 * ends it. Returns 1 when the streak reaches laggard_cycles and rule `bit` had not fired yet
 * (it fires now). */
static int streak_fires(const struct hn_brain *b, struct gpu_st *g, int slot, int bit,
                        int out_of_line)
{
    if (!out_of_line) {
        g->streak[slot] = 0;
        return 0;
    }
    return ++g->streak[slot] >= b->cfg.laggard_cycles && hb_fire_once(g, bit);
}

static void peer_check(struct hn_brain *b, double now, const char *sku, const struct peer_rule *r)
{
    double power_med = NAN, med = 0, sigma = 0, unused;
    if (r->equal_power) {
        if (peer_stats(b, now, sku, HN_F_POWER, NAN, &power_med, &unused) <
                (size_t)b->cfg.laggard_min_peers ||
            !(power_med > 0))
            return;
    }
    size_t n = peer_stats(b, now, sku, r->field, power_med, &med, &sigma);
    if (n < (size_t)b->cfg.laggard_min_peers)
        return;
    for (size_t i = 0; i < b->nnodes; i++) {
        struct node *nd = &b->nodes[i];
        if (strcmp(nd->sku, sku) != 0)
            continue;
        for (unsigned gi = 0; gi < nd->gpus_expected; gi++) {
            struct gpu_st *g = &nd->gpus[gi];
            double v = g->v[r->field];
            if (!loaded(b, now, nd, g) || isnan(v) ||
                (r->equal_power && !(fabs(g->v[HN_F_POWER] - power_med) <= 0.1 * power_med))) {
                g->streak[r->slot] = 0;
                continue;
            }
            if (!new_sample(g, r->field, r->slot))
                continue;
            double dev = r->sign * (v - med);
            double rel = med != 0 ? dev / fabs(med) : 0;
            double z = sigma > 0 ? dev / sigma : (dev > 0 ? INFINITY : 0);
            int out = !(dev <= 0 || rel < r->min_rel || dev < r->min_abs || z < b->cfg.laggard_k);
            if (!streak_fires(b, g, r->slot, r->bit, out))
                continue;
            char ev[320];
            snprintf(ev, sizeof(ev),
                     "%s=%.0f peer_median=%.0f robust_sigma=%.1f deviation=%.1f%% z=%.1f "
                     "peers=%zu util=%.0f power=%.0f temp=%.0f clock_reasons=0x%llx cycles=%d",
                     r->field == HN_F_SM_CLOCK ? "sm_clock" : "gpu_temp", v, med, sigma, rel * 100,
                     z, n, g->v[HN_F_GPU_UTIL], g->v[HN_F_POWER], g->v[HN_F_GPU_TEMP],
                     isnan(g->v[HN_F_CLOCK_REASONS]) ? 0ull
                                                     : (unsigned long long)g->v[HN_F_CLOCK_REASONS],
                     g->streak[r->slot]);
            struct hn_finding f;
            if (r->field == HN_F_SM_CLOCK)
                hb_finding_set(&f, r->rule, HN_SEV_SUSPECT, (int)gi, ev,
                               "GPU %u: SM clock %.0f MHz, %.0f%% below its %s peers", gi, v,
                               rel * 100, sku);
            else
                hb_finding_set(&f, r->rule, HN_SEV_SUSPECT, (int)gi, ev,
                               "GPU %u: %.0f C, %.0f C hotter than its %s peers at equal power", gi,
                               v, v - med, sku);
            hb_found(b, now, nd, &f);
        }
    }
}

/* NVML's clock event (throttle) reasons that mean the GPU is held back rather than idle or
 * set that way (nvmlClocksEventReasons: SW power cap, HW slowdown, SW thermal, HW thermal,
 * HW power brake). */
static const struct {
    unsigned bit;
    const char *name;
} throttle_bits[] = {
    {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"},     {0x20, "sw_thermal"},
    {0x40, "hw_thermal"},  {0x80, "hw_power_brake"},
};

/* The reason bits of a clock_reasons sample (0 when it is not a 32-bit value). */
static unsigned reason_bits(double v)
{
    return v >= 0 && v < 4294967296.0 ? (unsigned)v : 0;
}

/* Throttled among unthrottled peers: a loaded GPU holding a throttle reason that fewer than a
 * quarter of its loaded same-SKU peers hold, laggard_cycles samples in a row. A reason most
 * peers share (every GPU at its power cap under a heavy job) is the workload, not the part. */
static void throttle_check(struct hn_brain *b, double now, const char *sku)
{
    /* The peers: loaded GPUs of the SKU whose clock reasons are known. */
    size_t loaded_n = peer_values(b, now, sku, HN_F_CLOCK_REASONS, NAN);
    size_t with[HN_ARRAY_LEN(throttle_bits)] = {0};
    for (size_t i = 0; i < loaded_n; i++) {
        unsigned reasons = reason_bits(b->scratch[i]);
        for (size_t k = 0; k < HN_ARRAY_LEN(throttle_bits); k++)
            with[k] += (reasons & throttle_bits[k].bit) != 0;
    }
    if (loaded_n < (size_t)b->cfg.laggard_min_peers)
        return;
    for (size_t i = 0; i < b->nnodes; i++) {
        struct node *nd = &b->nodes[i];
        if (strcmp(nd->sku, sku) != 0)
            continue;
        for (unsigned gi = 0; gi < nd->gpus_expected; gi++) {
            struct gpu_st *g = &nd->gpus[gi];
            if (!loaded(b, now, nd, g) || isnan(g->v[HN_F_CLOCK_REASONS])) {
                g->streak[2] = 0;
                continue;
            }
            if (!new_sample(g, HN_F_CLOCK_REASONS, 2))
                continue;
            unsigned reasons = reason_bits(g->v[HN_F_CLOCK_REASONS]);
            size_t odd = HN_ARRAY_LEN(throttle_bits);
            for (size_t k = 0;
                 k < HN_ARRAY_LEN(throttle_bits) && odd == HN_ARRAY_LEN(throttle_bits); k++) {
                /* Peers other than this GPU that hold the reason. */
                if ((reasons & throttle_bits[k].bit) && 4 * (with[k] - 1) < loaded_n - 1)
                    odd = k;
            }
            if (!streak_fires(b, g, 2, R_THROTTLED, odd < HN_ARRAY_LEN(throttle_bits)))
                continue;
            char ev[320];
            snprintf(ev, sizeof(ev),
                     "clock_reasons=0x%x reason=%s peers_with_it=%zu/%zu sm_clock=%.0f "
                     "util=%.0f power=%.0f temp=%.0f cycles=%d",
                     reasons, throttle_bits[odd].name, with[odd] - 1, loaded_n - 1,
                     g->v[HN_F_SM_CLOCK], g->v[HN_F_GPU_UTIL], g->v[HN_F_POWER],
                     g->v[HN_F_GPU_TEMP], g->streak[2]);
            struct hn_finding f;
            hb_finding_set(&f, "throttled", HN_SEV_SUSPECT, (int)gi, ev,
                           "GPU %u: throttled (%s) while its %s peers are not", gi,
                           throttle_bits[odd].name, sku);
            hb_found(b, now, nd, &f);
        }
    }
}

/* Silent laggards (a slow SM clock under load), hot parts (temperature above peers drawing
 * the same power: cooling, not load) and throttled parts (a throttle reason peers lack). */
static void laggards(struct hn_brain *b, double now, const char *sku)
{
    throttle_check(b, now, sku);
    const struct peer_rule rules[] = {
        {HN_F_SM_CLOCK, -1, b->cfg.laggard_min_drop, 0, 0, "laggard", R_LAGGARD, 0},
        {HN_F_GPU_TEMP, +1, 0, b->cfg.hot_min_delta_c, 1, "hot", R_HOT, 1},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(rules); i++)
        peer_check(b, now, sku, &rules[i]);
}

void hb_peers_tick(struct hn_brain *b, double now)
{
    /* Each SKU once, in node order (deterministic). */
    for (size_t i = 0; i < b->nnodes; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(b->nodes[j].sku, b->nodes[i].sku) == 0;
        if (!seen)
            laggards(b, now, b->nodes[i].sku);
    }
}
