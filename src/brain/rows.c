/*
 * rows.c - rows.h says what this part does and owns.
 */
#include "brain/rows.h"

#include "brain/job.h"
#include "brain/jobtab.h"
#include "brain/runs.h"
#include "brain/strag_found.h"
#include "brain/strag_hold.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void flush_row(struct hn_brain *b, double now, struct job *j, struct row *r)
{
    if (r->have)
        hb_resize(b, now, j);
    if (r->have && j->l.ranks >= 2) {
        if (!j->strag.det) {
            j->strag.det = hn_strag_new(&b->cfg.straggler, j->l.ranks);
            j->strag.ndrift = 0; /* a new detector: no episode goes on */
        }
        if (j->strag.det && hn_strag_step(j->strag.det, r->step, r->secs) > 0) {
            struct hn_strag_detection d;
            while (hn_strag_poll(j->strag.det, &d))
                hb_detection(b, now, j, &d);
        }
        if (j->strag.det && j->strag.ndrift)
            hb_drift_watch(b, now, j, r->step);
        if (j->strag.det && j->strag.nquiet)
            hb_quiet_tell(b, now, j, 0);
        if (j->strag.det && (j->strag.next || (j->strag.rank >= 0 && j->strag.from_start)))
            hb_strag_watch(b, now, j, r->step);
        if (j->strag.det && j->strag.rank >= 0)
            hb_strag_follow(b, now, j, r->step);
    }
    for (unsigned k = 0; k < j->l.ranks && r->have; k++)
        r->secs[k] = NAN;
    r->have = 0;
}

/*
 * Files one rank's time for a step; rows leave in step order once complete or pushed out by
 * later steps. Reports older than the oldest row in flight are too late and left out.
 *
 * Agents forward a node's reports once per collection (10 s by default), each at its own
 * moment, so a row is complete only once every node's next frame has come: ROWS steps in
 * flight cover that only for steps of a few seconds. With faster steps the rows would leave
 * before most nodes' reports arrive, every row would lack a quorum and the detector would see
 * nothing. So the detector takes every stride-th step only, counted from the run's first
 * reported step (so that a client reporting every tenth step, 1, 11, 21..., is sampled too;
 * the detector's steps may have gaps), and the stride doubles whenever a row's worth of
 * reports (one per rank) came too late since it was last set, until ROWS rows span the
 * agents' delay: 0.3 s steps and 10 s frames on eight nodes settle at 4, a row every 1.2 s.
 * Reports from before the last change do not count, so one batch of late reports doubles it
 * once. After STRIDE_CALM rows in a row completed while the newest step filed was less than
 * half the window ahead (so half the stride would have held them), it is halved again, so that
 * the backlog of an agent's outage does not leave it high for the rest of the run. A new run
 * starts again at 1.
 */
static void restride(struct job *j, uint32_t to)
{
    uint64_t top = j->feed.next_row, base = j->feed.row_base;
    for (size_t q = 0; q < ROWS; q++) {
        if (j->feed.rows[q].have && j->feed.rows[q].step - base >= top)
            top = j->feed.rows[q].step - base + 1;
    }
    hb_clear_rows(j); /* the rows in flight are dropped: some of their reports are filed already */
    j->feed.rows_started = 1;
    j->feed.row_base = base;
    j->feed.stride = to;
    j->feed.next_row = (top + to - 1) / to * to;
    j->feed.late_from = j->feed.next_row;
    j->feed.top_at = j->feed.next_row / to;
}

void hb_row_put(struct hn_brain *b, double now, struct job *j, unsigned rank, uint64_t step,
                double secs)
{
    if (!j->feed.rows_started) {
        j->feed.rows_started = 1;
        j->feed.row_base = step;
        j->feed.next_row = 0;
    }
    if (step < j->feed.row_base) { /* before the first this run reported: too late for any row */
        j->feed.late_total++;
        return;
    }
    uint64_t k = j->feed.stride,
             d = step - j->feed.row_base; /* next_row and late_from count like d */
    if (d % k)
        return;
    if (d < j->feed.next_row) {
        j->feed.late_total++;
        if (d >= j->feed.late_from && ++j->feed.late >= j->l.ranks && k < STRIDE_MAX)
            restride(j, (uint32_t)k * 2);
        return;
    }
    uint64_t at = d / k, next = j->feed.next_row / k;
    if (at >= next + (uint64_t)2 * ROWS) { /* a jump: hand over what is there, start again */
        for (uint64_t q = next; q < next + ROWS; q++) {
            struct row *r = &j->feed.rows[q % ROWS];
            if (r->have && r->step - j->feed.row_base == q * k)
                flush_row(b, now, j, r);
        }
        next = at - ROWS + 1;
        j->feed.calm = 0;
    }
    while (at >= next + ROWS) { /* pushed out, complete or not */
        struct row *r = &j->feed.rows[next % ROWS];
        if (r->have && r->step - j->feed.row_base == next * k)
            flush_row(b, now, j, r);
        next++;
        j->feed.calm = 0;
    }
    struct row *r = &j->feed.rows[at % ROWS];
    if (r->step != step) {
        if (r->have)
            flush_row(b, now, j, r);
        r->step = step;
    }
    if (isnan(r->secs[rank]))
        r->have++;
    r->secs[rank] = secs;
    j->feed.top_at = at > j->feed.top_at ? at : j->feed.top_at;
    while (1) {
        r = &j->feed.rows[next % ROWS];
        if (r->step - j->feed.row_base != next * k || r->have < j->l.ranks)
            break;
        flush_row(b, now, j, r);
        /* Complete while the newest step filed is less than half the rows ahead: half the
         * stride would still have held it. */
        j->feed.calm = j->feed.top_at - next < ROWS / 2 ? j->feed.calm + 1 : 0;
        next++;
    }
    j->feed.next_row = next * k;
    if (k > 1 && j->feed.calm >= STRIDE_CALM)
        restride(j, (uint32_t)k / 2);
}
