/*
 * stats.c - order statistics on arrays of doubles (stats.h).
 */
#include "common/stats.h"

/* Puts the k-th smallest of a[0..n) at a[k], smaller-or-equal values before it and
 * greater-or-equal after (Hoare's FIND, CACM 4(7), 1961, with a median-of-3 pivot). O(n)
 * expected; deterministic. */
void hn_select_kth(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        /* Order a[lo], a[mid], a[hi]; the middle one is the pivot. */
        if (a[mid] < a[lo]) {
            double t = a[mid];
            a[mid] = a[lo];
            a[lo] = t;
        }
        if (a[hi] < a[lo]) {
            double t = a[hi];
            a[hi] = a[lo];
            a[lo] = t;
        }
        if (a[hi] < a[mid]) {
            double t = a[hi];
            a[hi] = a[mid];
            a[mid] = t;
        }
        double pivot = a[mid];
        size_t i = lo, j = hi;
        for (;;) {
            while (a[i] < pivot)
                i++;
            while (pivot < a[j])
                j--;
            if (i >= j)
                break;
            double t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* a[lo..j] <= pivot <= a[j+1..hi] */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
}

/* The median of a[0..n), n >= 1 (the mean of the two middle values when n is even). Reorders
 * a. */
double hn_median(double *a, size_t n)
{
    size_t k = n / 2;
    hn_select_kth(a, n, k);
    double upper = a[k];
    if (n % 2)
        return upper;
    double lower = a[0];
    for (size_t i = 1; i < k; i++) {
        if (a[i] > lower)
            lower = a[i];
    }
    return (lower + upper) / 2;
}

int hn_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
