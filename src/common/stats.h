/*
 * stats.h - order statistics on arrays of doubles: selection and the median, for the callers
 * that need a median of a few to many values (the brain's peer rules, the jobs model, the API,
 * the straggler detector and its benchmark). Values are numbers; callers leave NaN out.
 */
#ifndef HN_STATS_H
#define HN_STATS_H

#include <stddef.h>

/* Puts the k-th smallest (0-based, k < n) of a[0..n) at a[k], smaller-or-equal values before
 * it and greater-or-equal after. O(n) expected; deterministic. */
void hn_select_kth(double *a, size_t n, size_t k);

/* The median of a[0..n), n >= 1: the mean of the two middle values when n is even. Reorders
 * a. */
double hn_median(double *a, size_t n);

/* qsort comparison of two doubles, ascending. */
int hn_cmp_double(const void *a, const void *b);

#endif
