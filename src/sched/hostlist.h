/*
 * hostlist.h - Slurm hostlist expressions: "n[1-4,7],gpu[001-003]x,login1" -> each name.
 *
 * Used for squeue's NodeList and topology.conf's Nodes=. Brackets hold comma-separated
 * numbers and ranges; zero padding is kept ("gpu[001-003]" -> gpu001..gpu003). One bracket
 * group per name (as Slurm prints them); a range wider than 100000 names or a name longer
 * than 255 bytes is refused.
 */
#ifndef HN_HOSTLIST_H
#define HN_HOSTLIST_H

#include <stddef.h>

typedef int (*hn_hostlist_fn)(void *ctx, const char *name);

/* Calls fn for each name in order; returns 0, -EINVAL for a malformed expression, or fn's
 * non-zero result. */
int hn_hostlist_expand(const char *expr, hn_hostlist_fn fn, void *ctx);

/* 1 when name is one of expr's names, 0 when not or when expr is malformed. */
int hn_hostlist_contains(const char *expr, const char *name);

#endif
