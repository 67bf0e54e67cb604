/*
 * fuzz_subuid.c - libFuzzer target for the subordinate uid reader (src/common/subuid.c).
 *
 * Any bytes: the parse gives ranges that are sorted, non-empty, within the uid space and, but
 * for root's, above the accounts; hn_subuid_owner agrees with a plain scan of every range at
 * each range's edges and at uids taken from the input, and never answers root.
 */
#include "common/subuid.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two users besides the numeric ones: alice (1000) and bob (1001). */
static int resolve(const char *name, uint32_t *uid)
{
    if (strcmp(name, "alice") == 0 || strcmp(name, "bob") == 0) {
        *uid = name[0] == 'a' ? 1000 : 1001;
        return 0;
    }
    return strcmp(name, "ldap") == 0 ? -EIO : 1;
}

/* What hn_subuid_owner must say: 1 and the owner when every range holding uid has the same
 * owner and it is not root, 0 when none does, one is root's or two disagree. */
static int scan(const struct hn_subuid *t, uint32_t uid, uint32_t *owner)
{
    int found = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct hn_subuid_range *r = &t->range[i];
        if ((uint64_t)uid < r->start || (uint64_t)uid >= (uint64_t)r->start + r->count)
            continue;
        if (r->owner == 0 || (found && *owner != r->owner))
            return 0;
        found = 1;
        *owner = r->owner;
    }
    return found;
}

static void check_uid(const struct hn_subuid *t, uint32_t uid)
{
    uint32_t a = 0, b = 0;
    int fa = hn_subuid_owner(t, uid, &a), fb = scan(t, uid, &b);
    if (fa != fb || (fa && (a != b || a == 0)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hn_subuid t;
    char err[160] = "";
    if (hn_subuid_parse((const char *)data, size, resolve, &t, err, sizeof(err)) != 0) {
        if (t.n != 0 || t.range || !err[0])
            abort();
        return 0;
    }
    if ((t.skipped && !err[0]) || t.unresolved > t.skipped)
        abort();
    for (size_t i = 0; i < t.n; i++) {
        const struct hn_subuid_range *r = &t.range[i];
        if (r->count == 0 || (r->owner != 0 && r->start < HN_SUBUID_MIN) ||
            (uint64_t)r->start + r->count > UINT32_MAX || r->count > t.max_count ||
            (i && r->start < t.range[i - 1].start))
            abort();
        check_uid(&t, r->start);
        check_uid(&t, r->start + r->count - 1);
        check_uid(&t, r->start + r->count);
        if (r->start)
            check_uid(&t, r->start - 1);
    }
    for (size_t i = 0; i + 4 <= size && i < 256; i += 4) {
        uint32_t u;
        memcpy(&u, data + i, sizeof(u));
        check_uid(&t, u);
    }
    hn_subuid_fini(&t);
    return 0;
}
