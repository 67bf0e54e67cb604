/*
 * sched.c - the helpers the scheduler backends share: which node and job names may be handed
 * to a scheduler, the drain reason houston writes, and whether a drain is houston's (see
 * sched.h). The backend table is in registry.c.
 */
#include "sched/sched.h"

#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int hn_sched_drained_by_houston(const struct hn_sched_node *n)
{
    return n->drain &&
           strncmp(n->reason, HN_SCHED_REASON_PREFIX, strlen(HN_SCHED_REASON_PREFIX)) == 0;
}

int hn_sched_valid_node(const char *node)
{
    size_t n = node ? strlen(node) : 0;
    if (n == 0 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)node[i];
        if (!isalnum(c) && c != '.' && c != '_' && c != '-')
            return 0;
    }
    /* A leading '-' would read as an option to the scheduler's commands, and Slurm takes
     * "ALL" as every node. */
    return node[0] != '-' && strcasecmp(node, "ALL") != 0;
}

int hn_sched_valid_jobid(const char *jobid)
{
    size_t n = jobid ? strlen(jobid) : 0;
    size_t i = 0, digits = 0;
    if (n == 0 || n > 32)
        return 0;
    while (i < n && isdigit((unsigned char)jobid[i]))
        i++;
    if (i == 0)
        return 0;
    if (i == n)
        return 1;
    if (jobid[i] != '_' && jobid[i] != '+')
        return 0;
    for (i++; i < n; i++, digits++) {
        if (!isdigit((unsigned char)jobid[i]))
            return 0;
    }
    return digits > 0;
}

int hn_sched_reason_format(char *out, size_t size, const char *reason)
{
    char clean[256];
    const char *prefix = HN_SCHED_REASON_PREFIX;
    size_t plen = strlen(prefix);

    if (!reason)
        return -EINVAL;
    hn_strlcpy(clean, reason, sizeof(clean));
    for (char *p = clean; *p; p++) {
        if (iscntrl((unsigned char)*p))
            *p = ' ';
    }
    char *body = hn_trim(clean);
    if (strncmp(body, prefix, plen) == 0)
        body = hn_trim(body + plen);
    if (!*body)
        return -EINVAL;
    snprintf(out, size, "%s %s", prefix, body);
    return 0;
}
