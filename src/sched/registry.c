/*
 * registry.c - the table of scheduler backends: looking one up by name, opening and closing it
 * (see sched.h).
 *
 * The table is the only place that names the backends, so it lives apart from the helpers the
 * backends share (sched.c): a backend calls those, and this file calls into the backends.
 */
#include "sched/sched.h"

#include "common/util.h"

#include <errno.h>
#include <string.h>

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
    hn_strlcpy(set->squeue, "squeue", sizeof(set->squeue));
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
