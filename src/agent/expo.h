/*
 * expo.h - writing the Prometheus text exposition format (version 0.0.4).
 *
 * A collector renders its metric families in one pass: hn_expo_family() once per family
 * (# HELP and # TYPE lines), then hn_expo_sample() for every series of that family, so each
 * family's samples are contiguous as the format requires. Labels are passed preformatted
 * (name="value",...) and built with hn_expo_label(), which escapes \, " and newlines.
 *
 * Rendering appends to a struct hn_buf that the agent keeps across cycles, so the steady state
 * does no heap allocation. A full buffer makes every later call a no-op and sets e->truncated.
 * Owned and used by one thread (the collect loop).
 */
#ifndef HN_EXPO_H
#define HN_EXPO_H

#include "common/buf.h"

#include <stddef.h>

enum hn_metric_type { HN_GAUGE, HN_COUNTER };

struct hn_expo {
    struct hn_buf *out;
    unsigned series;   /* samples written */
    unsigned families; /* families written */
    int truncated;     /* the buffer hit its cap */
};

void hn_expo_init(struct hn_expo *e, struct hn_buf *out);
void hn_expo_family(struct hn_expo *e, const char *name, const char *help,
                    enum hn_metric_type type);
/* labels may be NULL or "" for a series without labels. NaN values are skipped. */
void hn_expo_sample(struct hn_expo *e, const char *name, const char *labels, double value);
/* A family of one unlabelled sample: hn_expo_family, then hn_expo_sample. */
void hn_expo_one(struct hn_expo *e, const char *name, const char *help, enum hn_metric_type type,
                 double value);

/* Appends `,name="escaped value"` (no comma when *len is 0) to a label buffer; returns 0 or
 * -ENOSPC when it does not fit (the buffer is left as it was). */
int hn_expo_label(char *buf, size_t size, size_t *len, const char *name, const char *value);

#endif
