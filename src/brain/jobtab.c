/*
 * jobtab.c - jobtab.h says what this part does and owns.
 */
#include "brain/jobtab.h"

#include "brain/job.h"
#include "brain/fleet.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const hb_phase_names[PHASES] = {"forward", "backward", "optimizer"};

_Static_assert(OWNERS_MAX < OWNERS_CAP, "a free slot ends every probe (owner_slot)");

struct hn_jobs *hb_jobs_new(size_t cap)
{
    struct hn_jobs *js = xcalloc(1, sizeof(*js));
    js->cap = cap ? cap : HN_JOBS_MAX_DEFAULT;
    if (js->cap > (size_t)INT_MAX / 4)
        js->cap = (size_t)INT_MAX / 4; /* indices are ints */
    js->v = xcalloc(js->cap, sizeof(struct job *));
    for (js->nindex = 16; js->nindex < 2 * js->cap; js->nindex *= 2)
        ;
    js->index = xcalloc(js->nindex, sizeof(int));
    memset(js->index, 0xff, js->nindex * sizeof(int)); /* -1: empty */
    js->owners = xcalloc(OWNERS_CAP, sizeof(struct owner));
    return js;
}

static void job_free(struct job *j)
{
    for (size_t r = 0; r < ROWS; r++)
        free(j->feed.rows[r].secs);
    free(j->ranks);
    free(j->nodes.t);
    hn_strag_free(j->strag.det);
    free(j);
}

void hb_jobs_free(struct hn_jobs *js)
{
    if (!js)
        return;
    for (size_t i = 0; i < js->n; i++)
        job_free(js->v[i]);
    free(js->changed);
    free(js->v);
    free(js->index);
    free(js->owners);
    free(js);
}

int hb_find_job(const struct hn_jobs *js, const char *id)
{
    size_t mask = js->nindex - 1;
    for (size_t h = hn_str_hash(id) & mask; js->index[h] >= 0; h = (h + 1) & mask) {
        if (strcmp(js->v[js->index[h]]->l.id, id) == 0)
            return js->index[h];
    }
    return -1;
}

static void index_put(struct hn_jobs *js, size_t k)
{
    size_t mask = js->nindex - 1, h = hn_str_hash(js->v[k]->l.id) & mask;
    while (js->index[h] >= 0)
        h = (h + 1) & mask;
    js->index[h] = (int)k;
}

/* Forgets slot k of v (its job already freed): the slots after it move down, in the index
 * too, and k's entry is taken out of its probe chain by moving later entries of the chain
 * back (linear probing's deletion), so no hash is computed but those of that chain. */
static void index_remove(struct hn_jobs *js, size_t k, const char *id)
{
    size_t mask = js->nindex - 1, h = hn_str_hash(id) & mask;
    while (js->index[h] != (int)k)
        h = (h + 1) & mask;
    size_t hole = h;
    for (size_t j = (h + 1) & mask; js->index[j] >= 0; j = (j + 1) & mask) {
        size_t home = hn_str_hash(js->v[js->index[j]]->l.id) & mask;
        /* The entry at j moves back into the hole unless its home lies cyclically in
         * (hole, j]: then it is found from there without passing the hole. */
        int stays = hole <= j ? home > hole && home <= j : home > hole || home <= j;
        if (!stays) {
            js->index[hole] = js->index[j];
            hole = j;
        }
    }
    js->index[hole] = -1;
    memmove(js->v + k, js->v + k + 1, (js->n - k - 1) * sizeof(struct job *));
    js->n--;
    for (size_t i = 0; i < js->nindex; i++) {
        if (js->index[i] > (int)k)
            js->index[i]--;
    }
}

/* ---- owners: who may report a job's steps ---- */

/* The slot of job id in the owner table: where it is, or the free slot where it would go. */
static struct owner *owner_slot(const struct hn_jobs *js, const char *id)
{
    for (size_t i = hn_str_hash(id) & (OWNERS_CAP - 1);; i = (i + 1) & (OWNERS_CAP - 1)) {
        struct owner *o = &js->owners[i];
        if (!o->id[0] || strcmp(o->id, id) == 0)
            return o; /* the table is never full (OWNERS_MAX), so a free slot ends the probe */
    }
}

int hn_brain_job_owner(struct hn_brain *b, const char *job, int64_t uid)
{
    struct hn_jobs *js = b->jobs;
    if (!job || !job[0]) {
        memset(js->owners, 0, OWNERS_CAP * sizeof(struct owner));
        js->nowners = 0;
        return 0;
    }
    if (strlen(job) >= HN_JOB_ID_SIZE || uid < 0 || uid > UINT32_MAX)
        return -EINVAL;
    struct owner *o = owner_slot(js, job);
    if (!o->id[0]) {
        if (js->nowners == OWNERS_MAX)
            return -ENOSPC;
        hn_strlcpy(o->id, job, sizeof(o->id));
        js->nowners++;
    }
    o->uid = (uint32_t)uid;
    return 0;
}

int64_t hb_owner_of(const struct hn_jobs *js, const char *id)
{
    const struct owner *o = owner_slot(js, id);
    return o->id[0] ? (int64_t)o->uid : -1;
}

/* Whether job a goes before job v when the table is full: an ended job first, then one the
 * scheduler never listed (a made-up id from the step socket, which anyone on a node can write
 * to, or a job outside the scheduler), then the one that reported least recently. So a flood
 * of made-up ids evicts its own jobs, not running ones the scheduler lists. */
static int evict_before(const struct job *a, const struct job *v)
{
    if (a->l.ended != v->l.ended)
        return a->l.ended;
    int a_listed = a->sched.seen >= 0, v_listed = v->sched.seen >= 0;
    if (a_listed != v_listed)
        return !a_listed;
    return a->l.last_report < v->l.last_report;
}

struct job *hb_job_alloc(const char *id, double now)
{
    struct job *j = xcalloc(1, sizeof(*j));
    hn_strlcpy(j->l.id, id, sizeof(j->l.id));
    j->l.checkpoint = -1;
    j->l.first_seen = now;
    j->rate.tflops = j->rate.tokens_per_s_rank = j->rate.mfu = NAN;
    j->strag.rank = -1;
    j->strag.others_node = -1;
    j->sched.seen = -1;
    j->sched.run_listed = -1;
    j->sched.ran_again = -1;
    j->sched.time_left = -1;
    j->sched.owner = -1;
    j->hist.series_dt = SERIES_DT;
    j->feed.stride = 1;
    j->restart.charged_s = NAN;
    return j;
}

struct job *hb_new_job(struct hn_jobs *js, const char *id, double now)
{
    if (js->n == js->cap) {
        size_t victim = 0;
        for (size_t i = 1; i < js->n; i++) {
            if (evict_before(js->v[i], js->v[victim]))
                victim = i;
        }
        char gone[sizeof(js->v[victim]->l.id)];
        hn_strlcpy(gone, js->v[victim]->l.id, sizeof(gone));
        hb_job_forget(js, js->v[victim]);
        js->v[victim] = NULL;
        index_remove(js, victim, gone);
    }
    struct job *j = hb_job_alloc(id, now);
    js->v[js->n++] = j;
    index_put(js, js->n - 1);
    return j;
}

void hb_clear_rows(struct job *j)
{
    for (size_t k = 0; k < ROWS; k++) {
        j->feed.rows[k].have = 0;
        j->feed.rows[k].step = 0;
        for (unsigned r = 0; r < j->l.ranks; r++)
            j->feed.rows[k].secs[r] = NAN;
    }
    j->feed.next_row = 0;
    j->feed.stride = 1;
    j->feed.late = 0;
    j->feed.late_from = 0;
    j->feed.rows_started = 0;
    j->feed.calm = 0;
    j->feed.top_at = 0;
}

/* Knuth's multiplicative hash, its top bits (cap a power of two, at least 2): the low bits of
 * the product depend only on the node index's low bits, so that indexes spaced by a power of
 * two would share home slots. */
static uint32_t jn_hash(int node, uint32_t cap)
{
    return ((uint32_t)node * 2654435761u) >> (32 - __builtin_ctz(cap));
}

static struct job_node *jn_slot(struct job_node *t, uint32_t cap, int node)
{
    uint32_t i = jn_hash(node, cap);
    while (t[i].node >= 0 && t[i].node != node)
        i = (i + 1) & (cap - 1);
    return &t[i];
}

/* Rebuilds j's table at least cap entries, keeping the entries that still count for
 * something (a rank there, or a report in this run), at most half full. */
static void jn_rebuild(struct job *j, uint32_t cap)
{
    uint32_t keep = 0;
    for (uint32_t i = 0; i < j->nodes.cap; i++)
        keep += j->nodes.t[i].node >= 0 && (j->nodes.t[i].ranks || j->nodes.t[i].reported);
    while (cap < 2 * (keep + 1))
        cap *= 2;
    struct job_node *t = xmalloc((size_t)cap * sizeof(*t));
    for (uint32_t i = 0; i < cap; i++)
        t[i] = (struct job_node){-1, 0, 0};
    uint32_t used = 0;
    for (uint32_t i = 0; i < j->nodes.cap; i++) {
        if (j->nodes.t[i].node >= 0 && (j->nodes.t[i].ranks || j->nodes.t[i].reported)) {
            *jn_slot(t, cap, j->nodes.t[i].node) = j->nodes.t[i];
            used++;
        }
    }
    free(j->nodes.t);
    j->nodes.t = t;
    j->nodes.cap = cap;
    j->nodes.used = used;
}

/* j's entry for node; NULL when it has none. */
static struct job_node *jn_find(const struct job *j, int node)
{
    if (!j->nodes.cap)
        return NULL;
    struct job_node *e = jn_slot(j->nodes.t, j->nodes.cap, node);
    return e->node == node ? e : NULL;
}

/* j's entry for node, a new one when it has none. */
static struct job_node *jn_add(struct job *j, int node)
{
    struct job_node *e = jn_find(j, node);
    if (e)
        return e;
    if (2 * (j->nodes.used + 1) > j->nodes.cap)
        jn_rebuild(j, j->nodes.cap ? 2 * j->nodes.cap : 8);
    e = jn_slot(j->nodes.t, j->nodes.cap, node);
    *e = (struct job_node){node, 0, 0};
    j->nodes.used++;
    return e;
}

unsigned hb_ranks_on(const struct job *j, int node)
{
    const struct job_node *e = jn_find(j, node);
    return e ? e->ranks : 0;
}

void hb_set_rank_node(struct job *j, struct rank_st *r, int node)
{
    if (r->node == node)
        return;
    if (r->node >= 0) {
        struct job_node *e = jn_find(j, r->node);
        if (e && e->ranks > 0 && --e->ranks == 0)
            j->nodes.n--;
    }
    if (node >= 0 && jn_add(j, node)->ranks++ == 0)
        j->nodes.n++;
    r->node = node;
}

void hb_add_reporter(struct job *j, int node)
{
    struct job_node *e = jn_add(j, node);
    if (!e->reported) {
        e->reported = 1;
        j->nodes.reporters++;
    }
}

void hb_new_run_nodes(struct job *j, int node)
{
    for (uint32_t i = 0; i < j->nodes.cap; i++)
        j->nodes.t[i].reported = 0;
    j->nodes.reporters = 0;
    jn_rebuild(j, 8);
    hb_add_reporter(j, node);
}

unsigned hb_run_ranks(const struct job *j)
{
    return j->size.run_world && !j->size.mixed_worlds && j->size.run_claim < j->l.ranks
               ? j->size.run_claim
               : j->l.ranks;
}

unsigned hb_ranks_per_node(const struct hn_brain *b)
{
    return b->cfg.ranks_per_node_max ? b->cfg.ranks_per_node_max : 1;
}

unsigned hb_rank_cap(const struct hn_brain *b, struct job *j)
{
    if (j->size.cap_nreporters == j->nodes.reporters && j->size.cap_gen == b->jobs->sched_gen)
        return j->size.cap;
    unsigned sched = 0;
    for (size_t i = 0; i < b->nnodes; i++)
        sched += (unsigned)hb_node_runs(&b->nodes[i], j->l.id);
    /* A job the last poll listed before its first report came is listed (evict_before). */
    if (sched > 0 && j->sched.seen < b->jobs->sched_poll)
        j->sched.seen = b->jobs->sched_poll;
    uint64_t cap =
        (uint64_t)hb_ranks_per_node(b) * (sched > j->nodes.reporters ? sched : j->nodes.reporters);
    j->size.cap = cap < RANKS_MAX ? (unsigned)cap : RANKS_MAX;
    j->size.cap_sched = sched;
    j->size.cap_nreporters = j->nodes.reporters;
    j->size.cap_gen = b->jobs->sched_gen;
    return j->size.cap;
}

void hb_told(struct hn_jobs *js, double now)
{
    if (now > js->now)
        js->now = now;
}

struct node *hb_rank_node(struct hn_brain *b, const struct job *j, unsigned rank)
{
    return rank < j->l.ranks && j->ranks[rank].node >= 0 ? &b->nodes[j->ranks[rank].node] : NULL;
}

int hb_acts_on(const struct hn_brain *b, const struct job *j)
{
    return !b->jobs->sched_lists || j->sched.seen >= 0;
}

uint64_t hb_waited_step(const struct job *j)
{
    return j->watch.front ? j->watch.front : j->l.step;
}

int hb_job_uses(const struct job *j, int node)
{
    for (unsigned r = 0; r < j->l.ranks; r++) {
        if (j->ranks[r].node == node && j->ranks[r].run == j->run)
            return 1;
    }
    return 0;
}

void hb_job_changed(struct hn_jobs *js, struct job *j)
{
    if (j->changed == 0) {
        if (js->nchanged == js->capchanged) {
            js->capchanged = js->capchanged ? 2 * js->capchanged : 64;
            js->changed = xrealloc(js->changed, js->capchanged * sizeof(struct job *));
        }
        js->changed[js->nchanged++] = j;
    }
    j->changed = 1;
}

void hb_job_forget(struct hn_jobs *js, struct job *j)
{
    for (size_t k = 0; j->changed && k < js->nchanged; k++) {
        if (js->changed[k] == j) {
            memmove(js->changed + k, js->changed + k + 1,
                    (js->nchanged - k - 1) * sizeof(struct job *));
            js->nchanged--;
            break;
        }
    }
    job_free(j);
}
