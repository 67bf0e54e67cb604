#include "common/subuid.h"

#include "common/util.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int resolve_passwd(const char *name, uint32_t *uid)
{
    struct passwd pw, *res = NULL;
    long size = sysconf(_SC_GETPW_R_SIZE_MAX);
    char *buf = xmalloc(size > 0 ? (size_t)size : 16384);
    int rc = getpwnam_r(name, &pw, buf, size > 0 ? (size_t)size : 16384, &res);
    if (rc == 0 && res)
        *uid = (uint32_t)res->pw_uid;
    free(buf);
    return rc == 0 && res ? 0 : -1;
}

static int by_start(const void *a, const void *b)
{
    const struct hn_subuid_range *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* One line "USER:START:COUNT" into *r; NULL, or why it cannot be used. */
static const char *parse_line(char *line, hn_subuid_resolve_fn resolve, struct hn_subuid_range *r)
{
    char *f[3] = {line, strchr(line, ':'), NULL};
    if (f[1])
        f[2] = strchr(f[1] + 1, ':');
    if (!f[1] || !f[2] || strchr(f[2] + 1, ':'))
        return "not USER:START:COUNT";
    *f[1]++ = '\0';
    *f[2]++ = '\0';
    for (int i = 0; i < 3; i++)
        f[i] = hn_trim(f[i]);
    if (!f[0][0])
        return "not USER:START:COUNT";
    uint64_t start, count, owner;
    if (hn_parse_u64(f[1], 10, &start) != 0 || hn_parse_u64(f[2], 10, &count) != 0 ||
        start >= UINT32_MAX || count > (uint64_t)UINT32_MAX - start)
        return "START and COUNT must be whole numbers within the uid space";
    if (count == 0)
        return "COUNT is 0";
    if (hn_parse_u64(f[0], 10, &owner) == 0) {
        if (owner >= UINT32_MAX)
            return "the uid is out of range";
    } else {
        uint32_t u;
        if (resolve(f[0], &u) != 0)
            return "no such user";
        owner = u;
    }
    if (owner == 0)
        return "root's range (never mapped)";
    *r = (struct hn_subuid_range){(uint32_t)start, (uint32_t)count, (uint32_t)owner};
    return NULL;
}

int hn_subuid_parse(const char *text, size_t len, hn_subuid_resolve_fn resolve,
                    struct hn_subuid *out, char *err, size_t errsize)
{
    memset(out, 0, sizeof(*out));
    if (!resolve)
        resolve = resolve_passwd;
    size_t cap = 0;
    unsigned lineno = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        char line[512];
        const char *why = NULL;
        struct hn_subuid_range r;
        if (n >= sizeof(line)) {
            why = "longer than 511 bytes";
        } else if (memchr(p, '\0', n)) {
            why = "holds a NUL byte";
        } else {
            memcpy(line, p, n);
            line[n] = '\0';
            char *t = hn_trim(line);
            if (!*t || *t == '#') {
                p += n + 1;
                continue;
            }
            why = parse_line(t, resolve, &r);
        }
        p += n + 1;
        if (why) {
            if (!out->skipped++)
                hn_set_err(err, errsize, "line %u: %s", lineno, why);
            continue;
        }
        if (out->n == HN_SUBUID_MAX_RANGES) {
            hn_subuid_fini(out);
            hn_set_err(err, errsize, "more than %d ranges", HN_SUBUID_MAX_RANGES);
            return -E2BIG;
        }
        if (out->n == cap) {
            cap = cap ? 2 * cap : 16;
            out->range = xrealloc(out->range, cap * sizeof(*out->range));
        }
        out->range[out->n++] = r;
        if (r.count > out->max_count)
            out->max_count = r.count;
    }
    if (out->n)
        qsort(out->range, out->n, sizeof(*out->range), by_start);
    return 0;
}

int hn_subuid_owner(const struct hn_subuid *t, uint32_t uid, uint32_t *owner)
{
    /* Ranges are sorted by start: only those that start at or below uid and less than the
     * longest count below it can hold it, usually one. Every one of them is looked at, so
     * that an overlap is seen. */
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->range[mid].start <= uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    int found = 0;
    uint32_t who = 0;
    for (size_t i = lo; i-- > 0 && (uint64_t)uid - t->range[i].start < t->max_count;) {
        const struct hn_subuid_range *r = &t->range[i];
        if ((uint64_t)uid - r->start >= r->count)
            continue;
        if (found && r->owner != who)
            return 0;
        found = 1;
        who = r->owner;
    }
    if (found)
        *owner = who;
    return found;
}

void hn_subuid_fini(struct hn_subuid *t)
{
    free(t->range);
    memset(t, 0, sizeof(*t));
}
