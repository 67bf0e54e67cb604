/*
 * sched.c - the table of scheduler backends and the helpers they share (see sched.h).
 */
#include "sched/sched.h"

#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Adding a backend is adding a row. */
static const struct hn_sched_ops *const backends[] = {
    &hn_sched_slurm_ops,
    &hn_sched_dryrun_ops,
};

const struct hn_sched_ops *hn_sched_lookup(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < HN_ARRAY_LEN(backends); i++) {
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    }
    return NULL;
}

const char *hn_sched_names(void)
{
    return "slurm, dry-run";
}

void hn_sched_settings_default(struct hn_sched_settings *set)
{
    memset(set, 0, sizeof(*set));
    hn_strlcpy(set->scontrol, "scontrol", sizeof(set->scontrol));
    set->timeout_ms = 10000;
    set->output_max = (size_t)64 * 1024;
}

int hn_sched_init(struct hn_sched *s, const char *name, const struct hn_sched_settings *set)
{
    struct hn_sched_settings defaults;

    s->ops = NULL;
    s->ctx = NULL;
    const struct hn_sched_ops *ops = hn_sched_lookup(name);
    if (!ops)
        return -ENOENT;
    if (!set) {
        hn_sched_settings_default(&defaults);
        set = &defaults;
    }
    int rc = ops->init(set, &s->ctx);
    if (rc)
        return rc;
    s->ops = ops;
    return 0;
}

void hn_sched_fini(struct hn_sched *s)
{
    if (s->ops)
        s->ops->fini(s->ctx);
    s->ops = NULL;
    s->ctx = NULL;
}

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
