#include "sched/hostlist.h"

#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 256
#define RANGE_MAX    100000

/* Expands one name with at most one [..] group: prefix[list]suffix. */
static int expand_one(const char *s, size_t len, hn_hostlist_fn fn, void *ctx)
{
    char name[NAME_MAX_LEN];
    const char *open = memchr(s, '[', len);
    if (!open) {
        if (len == 0 || len >= sizeof(name) || memchr(s, ']', len))
            return -EINVAL;
        memcpy(name, s, len);
        name[len] = '\0';
        return fn(ctx, name);
    }
    const char *close = memchr(open, ']', len - (size_t)(open - s));
    if (!close)
        return -EINVAL;
    size_t plen = (size_t)(open - s);
    const char *suffix = close + 1;
    size_t slen = len - (size_t)(suffix - s);
    if (memchr(suffix, '[', slen) || memchr(suffix, ']', slen))
        return -EINVAL;
    const char *p = open + 1;
    if (p == close)
        return -EINVAL;
    while (p < close) {
        const char *end = memchr(p, ',', (size_t)(close - p));
        if (!end)
            end = close;
        const char *dash = memchr(p, '-', (size_t)(end - p));
        char lo_s[16], hi_s[16];
        size_t lo_len = (size_t)((dash ? dash : end) - p);
        size_t hi_len = dash ? (size_t)(end - dash - 1) : lo_len;
        if (lo_len == 0 || lo_len >= sizeof(lo_s) || hi_len == 0 || hi_len >= sizeof(hi_s))
            return -EINVAL;
        memcpy(lo_s, p, lo_len);
        lo_s[lo_len] = '\0';
        memcpy(hi_s, dash ? dash + 1 : p, hi_len);
        hi_s[hi_len] = '\0';
        uint64_t lo, hi;
        if (hn_parse_u64(lo_s, 10, &lo) || hn_parse_u64(hi_s, 10, &hi) || hi < lo ||
            hi - lo > RANGE_MAX || strspn(lo_s, "0123456789") != lo_len ||
            strspn(hi_s, "0123456789") != hi_len)
            return -EINVAL;
        int width = (int)lo_len; /* zero padding of the low bound, as Slurm prints it */
        for (uint64_t v = lo; v <= hi; v++) {
            int n = snprintf(name, sizeof(name), "%.*s%0*llu%.*s", (int)plen, s, width,
                             (unsigned long long)v, (int)slen, suffix);
            if (n < 0 || (size_t)n >= sizeof(name))
                return -EINVAL;
            int rc = fn(ctx, name);
            if (rc)
                return rc;
        }
        p = end + 1;
    }
    return 0;
}

int hn_hostlist_expand(const char *expr, hn_hostlist_fn fn, void *ctx)
{
    const char *s = expr;
    while (*s) {
        /* A comma inside brackets belongs to the group. */
        const char *e = s;
        int depth = 0;
        while (*e && (depth > 0 || *e != ',')) {
            if (*e == '[')
                depth++;
            else if (*e == ']')
                depth--;
            if (depth < 0 || depth > 1)
                return -EINVAL;
            e++;
        }
        if (depth != 0)
            return -EINVAL;
        int rc = expand_one(s, (size_t)(e - s), fn, ctx);
        if (rc)
            return rc;
        s = *e ? e + 1 : e;
    }
    return 0;
}

static int match(void *ctx, const char *name)
{
    return strcmp(ctx, name) == 0 ? 1 : 0;
}

int hn_hostlist_contains(const char *expr, const char *name)
{
    return hn_hostlist_expand(expr, match, (void *)name) == 1;
}
