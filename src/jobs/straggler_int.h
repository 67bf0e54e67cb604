/*
 * straggler_int.h - the straggler detector's internals that its unit tests reach
 * (tests/unit/test_straggler.c); not part of straggler.h's contract.
 */
#ifndef HN_STRAGGLER_INT_H
#define HN_STRAGGLER_INT_H

#include "jobs/straggler.h"

/* on = 0 sends every report through the full path (series_update), which the quick path
 * (quick_kernel) must match to the bit; on = 1, the default, lets it take the quick path. */
void hn_strag_set_quick(struct hn_strag *s, int on);

/* Sorts v[0..n), n <= HN_STRAG_RING, as the detector sorts a ring (a sorting network). */
void hn_strag_sort_ring(double *v, unsigned n);

#endif
