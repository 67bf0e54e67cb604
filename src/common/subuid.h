/*
 * subuid.h - whose subordinate uid a uid is: the ranges of /etc/subuid (subuid(5): one
 * `USER:START:COUNT` per line, USER a login name or a numeric uid) that let a user run
 * processes under other uids inside a user namespace (rootless podman's containers, for
 * instance). The kernel maps such a process's uid to one in the user's range, so the step
 * collector (agent/steps.c) sees that uid and asks here whom it stands for.
 *
 * Only newuidmap(1), a setuid helper that checks this file, or root can map a range into a
 * namespace, so a process under a uid of user U's range was started by U or by root: either
 * may report U's steps. The lines are read as newuidmap reads them (no blanks, digits only)
 * and only what cannot be anyone else's maps:
 *   - a uid that a range of root's holds never maps (a system container under root's range,
 *     LXD's for instance, must not speak as root or as a user whose range overlaps it);
 *   - nor does a uid that two users' ranges hold (an overlap is a mistake in the file, and
 *     neither user is more likely than the other);
 *   - a user's range that starts below HN_SUBUID_MIN (system and login accounts live there)
 *     or holds the user's own uid, and a range of a user the name service does not know or
 *     cannot look up now, are left out and map nothing, as root's.
 * A uid that is also an account's would still map if a range held it; such a file already
 * lets its user become that account through newuidmap, and useradd(8) allocates ranges from
 * 100000 up (SUB_UID_MIN) so that it does not happen.
 */
#ifndef HN_SUBUID_H
#define HN_SUBUID_H

#include <stddef.h>
#include <stdint.h>

#define HN_SUBUID_MAX_RANGES 65536 /* more ranges are refused (-E2BIG) */
#define HN_SUBUID_MIN        65536 /* a user's range must start at or above */

struct hn_subuid_range {
    uint32_t start, count, owner;
};

struct hn_subuid {
    struct hn_subuid_range *range; /* sorted by start */
    size_t n;
    uint32_t max_count;  /* the longest range's count */
    unsigned skipped;    /* lines left out: malformed, an unknown user, a range refused */
    unsigned unresolved; /* of those, lines whose name the name service failed to look up */
    /* A line left out that is a range (all but the malformed ones) stays in range[] with
     * owner 0, as root's do: a uid it holds maps to nobody, so that a mistake or a name the
     * name service cannot look up now never hands its uids to an overlapping user's range. */
};

/* Resolves a login name to its uid: 0, 1 when there is no such user, a negative errno when
 * the lookup failed (the name service is down). */
typedef int (*hn_subuid_resolve_fn)(const char *name, uint32_t *uid);

/* Parses subuid(5) text (len bytes; empty lines and lines starting with '#' are ignored) into
 * out, resolving names with resolve (NULL: getpwnam_r, with a bigger buffer on ERANGE). Lines
 * that cannot be used are counted in out->skipped, with the first one's line number and
 * reason in err. Returns 0, or -E2BIG for more than HN_SUBUID_MAX_RANGES ranges (out is then
 * empty). */
int hn_subuid_parse(const char *text, size_t len, hn_subuid_resolve_fn resolve,
                    struct hn_subuid *out, char *err, size_t errsize);

/* The user whose range holds uid: 1 with *owner (never 0), or 0 when no range holds it, a
 * range of root's does, or two users' ranges do. */
int hn_subuid_owner(const struct hn_subuid *t, uint32_t uid, uint32_t *owner);

void hn_subuid_fini(struct hn_subuid *t);

#endif
