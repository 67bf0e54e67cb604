/*
 * subuid.h - whose subordinate uid a uid is: the ranges of /etc/subuid (subuid(5): one
 * `USER:START:COUNT` per line, USER a login name or a numeric uid) that let a user run
 * processes under other uids inside a user namespace (rootless podman's containers, for
 * instance). The kernel maps such a process's uid to one in the user's range, so the step
 * collector (agent/steps.c) sees that uid and asks here whom it stands for.
 *
 * Only newuidmap(1), a setuid helper that checks this file, or root can map a range into a
 * namespace, so a process under a uid of user U's range was started by U or by root: either
 * may report U's steps. Ranges that belong to root are left out (a system container under
 * root's range must not speak as root), and so is a uid that two users' ranges hold (an
 * overlap is a mistake in the file, and neither user is more likely than the other).
 */
#ifndef HN_SUBUID_H
#define HN_SUBUID_H

#include <stddef.h>
#include <stdint.h>

#define HN_SUBUID_MAX_RANGES 65536 /* more lines are refused (-E2BIG) */

struct hn_subuid_range {
    uint32_t start, count, owner;
};

struct hn_subuid {
    struct hn_subuid_range *range; /* sorted by start */
    size_t n;
    uint32_t max_count; /* the longest range's count */
    unsigned skipped;   /* lines left out: malformed, unknown user, root's, or count 0 */
};

/* Resolves a login name to its uid: 0, or -1 when there is no such user. */
typedef int (*hn_subuid_resolve_fn)(const char *name, uint32_t *uid);

/* Parses subuid(5) text (len bytes; blank lines and lines starting with '#' are ignored) into
 * out, resolving names with resolve (NULL: getpwnam_r). Lines that cannot be used are skipped
 * and counted in out->skipped, with the first one's line number and reason in err. Returns 0,
 * or -E2BIG for more than HN_SUBUID_MAX_RANGES lines (out is then empty). */
int hn_subuid_parse(const char *text, size_t len, hn_subuid_resolve_fn resolve,
                    struct hn_subuid *out, char *err, size_t errsize);

/* The user whose range holds uid: 1 with *owner, or 0 when none does or when two users'
 * ranges hold it. */
int hn_subuid_owner(const struct hn_subuid *t, uint32_t uid, uint32_t *owner);

void hn_subuid_fini(struct hn_subuid *t);

#endif
