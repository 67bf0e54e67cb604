/*
 * fleet.c - the brain's node table (fleet.h): nodes added and found by name, their views, and
 * what their agents' frames say about time (hn_brain_node_heard).
 */
#include "brain/fleet.h"

#include "common/sku.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[HN_NODE_NSTATES] = {
    "new", "burnin", "ready", "suspect", "draining", "quarantined", "repair", "retired",
};

const char *hn_node_state_name(enum hn_node_state s)
{
    return (unsigned)s < HN_NODE_NSTATES ? state_names[s] : "unknown";
}

int hn_node_state_parse(const char *s, enum hn_node_state *out)
{
    for (int i = 0; i < HN_NODE_NSTATES; i++) {
        if (strcmp(s, state_names[i]) == 0) {
            *out = (enum hn_node_state)i;
            return 0;
        }
    }
    return -EINVAL;
}

int hb_in_service(enum hn_node_state s)
{
    return s == HN_NODE_NEW || s == HN_NODE_BURNIN || s == HN_NODE_READY || s == HN_NODE_SUSPECT;
}

int hb_node_runs(const struct node *n, const char *job)
{
    for (unsigned k = 0; k < n->njobs; k++) {
        if (strcmp(n->jobs[k], job) == 0)
            return 1;
    }
    return 0;
}

/* The node table's index (FNV-1a, hn_str_hash): names are short and the table at most half
 * full, so probes are few. Every frame looks its node up, so this must not be a scan of the
 * fleet. */
static void index_insert(struct hn_brain *b, int node)
{
    size_t mask = b->index_cap - 1;
    size_t i = hn_str_hash(b->nodes[node].name) & mask;
    while (b->index[i])
        i = (i + 1) & mask;
    b->index[i] = node + 1;
}

/* Keeps the index at most half full; rebuilt on growth. */
static void index_grow(struct hn_brain *b)
{
    if (b->index_cap >= 2 * (b->nnodes + 1))
        return;
    size_t cap = b->index_cap ? b->index_cap : 64;
    while (cap < 2 * (b->nnodes + 1))
        cap *= 2;
    free(b->index);
    b->index = xcalloc(cap, sizeof(*b->index));
    b->index_cap = cap;
    for (size_t n = 0; n < b->nnodes; n++)
        index_insert(b, (int)n);
}

int hn_brain_add_node(struct hn_brain *b, const char *name, const char *rack, const char *sku,
                      unsigned gpus, enum hn_node_state state)
{
    if (!name || !name[0] || strlen(name) >= HN_NAME_MAX || gpus > 1024 ||
        (unsigned)state >= HN_NODE_NSTATES)
        return -EINVAL;
    if (hn_brain_find_node(b, name) >= 0)
        return -EEXIST;
    if (b->nnodes == b->capnodes) {
        b->capnodes = b->capnodes ? b->capnodes * 2 : 16;
        b->nodes = xrealloc(b->nodes, b->capnodes * sizeof(*b->nodes));
    }
    struct node *n = &b->nodes[b->nnodes];
    memset(n, 0, sizeof(*n));
    hn_strlcpy(n->name, name, sizeof(n->name));
    hn_strlcpy(n->rack, rack && rack[0] ? rack : name, sizeof(n->rack));
    hn_strlcpy(n->sku, sku ? sku : "", sizeof(n->sku));
    const struct hn_sku *row = b->cfg.skus ? hn_sku_find(b->cfg.skus, n->sku) : NULL;
    n->peak = row ? hn_sku_peak_flops(row, b->cfg.mfu_dtype) : NAN;
    n->state = state;
    n->gpus_expected = gpus;
    n->gpus = xcalloc(gpus ? gpus : 1, sizeof(*n->gpus));
    for (unsigned g = 0; g < gpus; g++) {
        for (int f = 0; f < HN_F_COUNT; f++)
            n->gpus[g].v[f] = n->gpus[g].prev[f] = NAN;
    }
    index_grow(b);
    index_insert(b, (int)b->nnodes);
    return (int)b->nnodes++;
}

int hn_brain_find_node(const struct hn_brain *b, const char *name)
{
    if (!b->index_cap)
        return -ENOENT;
    size_t mask = b->index_cap - 1;
    for (size_t i = hn_str_hash(name) & mask; b->index[i]; i = (i + 1) & mask) {
        int n = b->index[i] - 1;
        if (strcmp(b->nodes[n].name, name) == 0)
            return n;
    }
    return -ENOENT;
}

int hn_brain_restore_removal(struct hn_brain *b, int node, double removed_at, double removed_from,
                             int cause)
{
    if (node < 0 || (size_t)node >= b->nnodes || cause < 0 || cause >= HN_LOSS_NCAUSES ||
        !isfinite(removed_at) || !isfinite(removed_from))
        return -EINVAL;
    struct node *n = &b->nodes[node];
    n->removed_at = removed_at;
    n->removed_from = removed_from;
    n->removed_cause = (enum hn_loss_cause)cause;
    /* No scheduler input of this controller's is the one the removal went by. */
    n->removed_gen = UINT64_MAX;
    return 0;
}

size_t hn_brain_node_count(const struct hn_brain *b)
{
    return b->nnodes;
}

struct node *hb_node_at(struct hn_brain *b, int node)
{
    return node >= 0 && (size_t)node < b->nnodes ? &b->nodes[node] : NULL;
}

int hn_brain_gpu_values(const struct hn_brain *b, int node, unsigned gpu, const unsigned *fields,
                        double *values, unsigned n, int *lost)
{
    if (node < 0 || (size_t)node >= b->nnodes || gpu >= b->nodes[node].gpus_expected)
        return -EINVAL;
    const struct gpu_st *g = &b->nodes[node].gpus[gpu];
    for (unsigned k = 0; k < n; k++)
        values[k] = fields[k] < HN_F_COUNT ? g->v[fields[k]] : NAN;
    *lost = g->lost;
    return 0;
}

int hn_brain_node_view(const struct hn_brain *b, int node, struct hn_node_view *out)
{
    if (node < 0 || (size_t)node >= b->nnodes)
        return -EINVAL;
    const struct node *n = &b->nodes[node];
    out->name = n->name;
    out->rack = n->rack;
    out->sku = n->sku;
    out->state = n->state;
    out->gpus_expected = n->gpus_expected;
    out->gpus_seen = n->gpus_seen;
    out->drained_by_houston = n->drained_by_houston;
    out->held = n->held;
    out->since = n->since;
    hn_strlcpy(out->reason, n->reason, sizeof(out->reason));
    out->removed_at = n->removed_at;
    out->removed_from = n->removed_from;
    out->removed_cause = (int)n->removed_cause;
    return 0;
}

int hn_brain_node_heard(struct hn_brain *b, double now, int node, double collected, int follows)
{
    struct node *n = hb_node_at(b, node);
    if (!n || !(collected >= 0) || !(now >= 0))
        return -EINVAL;
    if (!follows || n->heard_at <= 0)
        n->heard_from = collected;
    if (collected > n->heard) {
        n->heard_before = n->heard;
        n->heard = collected;
    }
    if (n->heard_at <= 0 || now - n->heard_at > b->cfg.hang_min_s / 2)
        n->live_from = now;
    if (now > n->heard_at)
        n->heard_at = now;
    return 0;
}

int hb_fire_once(struct gpu_st *g, int r)
{
    if (g->fired & (1u << r))
        return 0;
    g->fired |= 1u << r;
    return 1;
}
