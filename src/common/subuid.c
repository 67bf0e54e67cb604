#include "common/subuid.h"

#include "common/util.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int resolve_passwd(const char *name, uint32_t *uid)
{
    long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
    size_t n = hint > 0 ? (size_t)hint : 16384;
    for (;;) {
        struct passwd pw, *res = NULL;
        char *buf = xmalloc(n);
        int rc = getpwnam_r(name, &pw, buf, n, &res);
        if (rc == 0 && res)
            *uid = (uint32_t)res->pw_uid;
        free(buf);
        if (rc == ERANGE && n < (1u << 20)) {
            n *= 2; /* a long entry (many groups, a long gecos): a bigger buffer */
            continue;
        }
        /* glibc: 0 and no entry is "no such user"; any error is the name service's (sssd or
         * LDAP down answers ENOENT too), worth trying again later. */
        if (rc != 0)
            return -rc;
        return res ? 0 : 1;
    }
}

static int by_start(const void *a, const void *b)
{
    const struct hn_subuid_range *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* A field of 1 to 10 digits, nothing else (no sign, no blank: newuidmap reads it so), below
 * 2^32: 0 and *out, or -1. */
static int digits(const char *s, uint64_t *out)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 10 || s[n] != '\0')
        return -1;
    *out = strtoull(s, NULL, 10);
    return *out <= UINT32_MAX ? 0 : -1;
}

/* One line "USER:START:COUNT" into *r: 0 for a range that maps to its user (or, owner 0,
 * root's, which maps nothing); 1 for a range left out that still maps nothing, so that no
 * other user's range overlapping it maps either (an unknown user, a name the name service
 * failed on, a range among the accounts); -1 for a line that is no range. why says what is
 * wrong; *lookup_failed is set when the name service failed. */
static int parse_line(char *line, hn_subuid_resolve_fn resolve, struct hn_subuid_range *r,
                      int *lookup_failed, char *why, size_t whysize)
{
    char *f[3] = {line, strchr(line, ':'), NULL};
    if (f[1])
        f[2] = strchr(f[1] + 1, ':');
    if (!f[1] || !f[2] || strchr(f[2] + 1, ':') || f[1] == line) {
        hn_set_err(why, whysize, "not USER:START:COUNT");
        return -1;
    }
    *f[1]++ = '\0';
    *f[2]++ = '\0';
    uint64_t start, count, owner;
    int numeric = digits(f[0], &owner) == 0; /* a uid rather than a name */
    const char *bad = NULL;
    if (digits(f[1], &start) != 0 || digits(f[2], &count) != 0 || start + count > UINT32_MAX)
        bad = "START and COUNT must be digits only, within the uid space";
    else if (count == 0)
        bad = "COUNT is 0";
    else if (numeric && owner == UINT32_MAX)
        bad = "the uid is out of range";
    if (bad) {
        hn_set_err(why, whysize, "%s", bad);
        return -1;
    }
    /* From here on the line is a range: if it is left out, it still maps nothing. */
    *r = (struct hn_subuid_range){(uint32_t)start, (uint32_t)count, 0};
    if (!numeric) {
        uint32_t u = 0; /* a resolver that says 0 and sets nothing: root's, maps nothing */
        int rc = resolve(f[0], &u);
        if (rc > 0) {
            hn_set_err(why, whysize, "no such user '%s'", f[0]);
            return 1;
        }
        if (rc < 0) {
            hn_set_err(why, whysize, "looking up '%s' failed: %s", f[0], strerror(-rc));
            *lookup_failed = 1;
            return 1;
        }
        owner = u;
    }
    /* Root's ranges stay, as ranges that never map: a uid they hold is nobody's. */
    if (owner != 0 && start < HN_SUBUID_MIN)
        bad = "START is below 65536, where accounts live";
    else if (owner != 0 && owner >= start && owner - start < count)
        bad = "the range holds its owner's own uid";
    if (bad) {
        hn_set_err(why, whysize, "%s", bad);
        return 1;
    }
    r->owner = (uint32_t)owner;
    return 0;
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
        const char *at = p;
        p = nl ? nl + 1 : end;
        lineno++;
        char line[512], why[128] = "";
        struct hn_subuid_range r;
        int rc = -1, lookup_failed = 0;
        if (n >= sizeof(line)) {
            hn_set_err(why, sizeof(why), "longer than 511 bytes");
        } else if (memchr(at, '\0', n)) {
            hn_set_err(why, sizeof(why), "holds a NUL byte");
        } else {
            memcpy(line, at, n);
            line[n] = '\0';
            if (n == 0 || line[0] == '#')
                continue;
            rc = parse_line(line, resolve, &r, &lookup_failed, why, sizeof(why));
        }
        if (rc != 0) {
            if (!out->skipped++)
                hn_set_err(err, errsize, "line %u: %s", lineno, why);
            out->unresolved += (unsigned)lookup_failed;
            if (rc < 0)
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
        if (r->owner == 0 || (found && r->owner != who))
            return 0; /* root's, or two users' */
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
