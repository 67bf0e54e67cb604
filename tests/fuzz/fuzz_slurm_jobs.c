/*
 * fuzz_slurm_jobs.c - libFuzzer target for the readers of squeue's output
 * (hn_slurm_parse_jobs and hn_slurm_parse_job_on_node in src/sched/slurm_parse.c).
 *
 * Input: squeue's text. Besides not crashing, the listing parser must keep its promises: the
 * sink's calls come in order (job, its nodes, job_end; nodes only for a running job), every
 * job has a state of the enum, an owner of -1 or a 32-bit uid, a time left of -1 or more, and
 * node names that are not empty. The job-on-node reader answers 0 or 1.
 */
#include "sched/sched.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct order {
    int in_job;
    const char *id;
};

static void on_begin(void *ctx)
{
    (void)ctx;
    abort(); /* list_jobs's, never the parser's */
}

static void on_job(void *ctx, const struct hn_sched_job *job)
{
    struct order *o = ctx;
    if (o->in_job || !job->id || job->state > HN_SCHED_JOB_ENDING || job->uid < -1 ||
        job->uid > (int64_t)UINT32_MAX || !(job->time_left >= -1))
        abort();
    o->in_job = 1;
    o->id = job->id;
}

static void on_node(void *ctx, const struct hn_sched_job *job, const char *node)
{
    struct order *o = ctx;
    if (!o->in_job || job->id != o->id || job->state != HN_SCHED_JOB_RUNNING || !node[0])
        abort();
}

static void on_job_end(void *ctx, const struct hn_sched_job *job)
{
    struct order *o = ctx;
    if (!o->in_job || job->id != o->id)
        abort();
    o->in_job = 0;
}

static const struct hn_sched_job_sink sink = {
    .begin = on_begin,
    .job = on_job,
    .node = on_node,
    .job_end = on_job_end,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct order o = {0, NULL};
    hn_slurm_parse_jobs(text, &sink, &o);
    if (o.in_job)
        abort();

    memcpy(text, data, size);
    text[size] = '\0';
    int on = hn_slurm_parse_job_on_node(text, "n1");
    if (on != 0 && on != 1)
        abort();
    free(text);
    return 0;
}
