/*
 * bench_jobs - what the controller's job table costs with thousands of jobs (docs/jobs.md,
 * "jobs-max"), each figure against a peer measured in the same run:
 *   - finding a job by id among N jobs (every step report does): the hash table, against a
 *     linear scan of the same ids (the table before jobs-max, 256 jobs, scanned);
 *   - a step report that creates a job on a full table, which forgets one (a scan of the
 *     table), against a step report of a job already there;
 *   - a store read of a job id the brain does not have (a poll listing it, a report), absent
 *     and saved, against finding a job in memory.
 * Usage: bench_jobs [JOBS]   (default 4096; the forgetting figure also at 256 and 65536)
 */
#include "brain/brain.h"
#include "control/store.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct hn_step_in report(const char *job, uint64_t step)
{
    struct hn_step_in s;
    hn_step_in_init(&s, job, 0, step, 1);
    s.world = 1;
    return s;
}

/* A brain with a table of cap jobs, full: job ids "f0".."f<cap-1>", one report each. */
static struct hn_brain *full_brain(size_t cap)
{
    struct hn_brain_config cfg;
    hn_brain_config_default(&cfg);
    cfg.jobs_max = cap;
    struct hn_brain *b = hn_brain_new(&cfg);
    hn_brain_add_node(b, "n1", "r1", "H100", 8, HN_NODE_READY);
    char id[32];
    for (size_t k = 0; k < cap; k++) {
        snprintf(id, sizeof(id), "f%zu", k);
        struct hn_step_in in = report(id, 1);
        hn_brain_step(b, 1 + (double)k * 1e-6, 0, &in);
    }
    return b;
}

/* Microseconds per step report that creates a new job on a full table of cap jobs, and per
 * report of a job already there (*known). */
static double forget_us(size_t cap, double *known)
{
    struct hn_brain *b = full_brain(cap);
    int n = cap > 10000 ? 200 : 2000;
    char id[32];
    double t0 = now_s();
    for (int k = 0; k < n; k++) {
        snprintf(id, sizeof(id), "g%d", k);
        struct hn_step_in in = report(id, 1);
        hn_brain_step(b, 10 + k * 1e-6, 0, &in);
    }
    double t1 = now_s();
    for (int k = 0; k < n; k++) {
        snprintf(id, sizeof(id), "g%d", n - 1 - k % 64); /* among the newest: still there */
        struct hn_step_in in = report(id, 2 + (uint64_t)k);
        hn_brain_step(b, 20 + k * 1e-6, 0, &in);
    }
    double t2 = now_s();
    hn_brain_free(b);
    *known = (t2 - t1) / n * 1e6;
    return (t1 - t0) / n * 1e6;
}

int main(int argc, char **argv)
{
    size_t jobs = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 4096;
    if (jobs < 16 || jobs > 65536) {
        fprintf(stderr, "bench_jobs: JOBS is 16 to 65536\n");
        return 2;
    }
    const int lookups = 200000;

    /* Finding a job by id: the hash, and a scan of the same ids (the peer). */
    struct hn_brain *b = full_brain(jobs);
    char(*ids)[32] = xcalloc(jobs, sizeof(*ids));
    for (size_t k = 0; k < jobs; k++)
        snprintf(ids[k], sizeof(ids[k]), "f%zu", k);
    volatile long sink = 0;
    double t0 = now_s();
    for (int k = 0; k < lookups; k++)
        sink += hn_brain_find_job(b, ids[(size_t)k * 7919 % jobs]);
    double t1 = now_s();
    for (int k = 0; k < lookups; k++) {
        const char *want = ids[(size_t)k * 7919 % jobs];
        size_t i = 0;
        while (i < jobs && strcmp(ids[i], want) != 0)
            i++;
        sink += (long)i;
    }
    double t2 = now_s();
    double hash_ns = (t1 - t0) / lookups * 1e9, scan_ns = (t2 - t1) / lookups * 1e9;
    printf("find a job among %zu: hash %.0f ns, linear scan %.0f ns; ratio scan / hash %.0fx\n",
           jobs, hash_ns, scan_ns, scan_ns / hash_ns);

    /* A store read of an id the brain does not have, against finding one in memory. */
    char path[] = "/tmp/bench_jobs_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("bench_jobs: mkstemp");
        return 1;
    }
    close(fd);
    unlink(path);
    char err[256];
    struct hn_store *s = hn_store_open(path, err, sizeof(err));
    if (!s) {
        fprintf(stderr, "bench_jobs: %s\n", err);
        return 1;
    }
    hn_store_begin(s);
    for (size_t k = 0; k < jobs; k++) {
        struct hn_job_ledger l = {.ranks = 8, .last_report = (double)k, .checkpoint = -1};
        hn_strlcpy(l.id, ids[k], sizeof(l.id));
        hn_store_put_job(s, &l);
    }
    hn_store_commit(s);
    struct hn_job_ledger l;
    int reads = 50000;
    char id[32];
    t0 = now_s();
    for (int k = 0; k < reads; k++) {
        snprintf(id, sizeof(id), "x%d", k);
        sink += hn_store_load_job(s, id, &l);
    }
    t1 = now_s();
    for (int k = 0; k < reads; k++)
        sink += hn_store_load_job(s, ids[(size_t)k * 7919 % jobs], &l);
    t2 = now_s();
    hn_store_close(s);
    unlink(path);
    double absent_us = (t1 - t0) / reads * 1e6, saved_us = (t2 - t1) / reads * 1e6;
    printf("store read of a job id among %zu saved: absent %.2f us, saved %.2f us; ratio absent "
           "/ in-memory find %.0fx\n",
           jobs, absent_us, saved_us, absent_us * 1000 / hash_ns);
    hn_brain_free(b);
    free(ids);

    /* A new job on a full table forgets one: at 256, JOBS and 65536. */
    const size_t caps[] = {256, jobs, 65536};
    for (size_t c = 0; c < 3; c++) {
        if (c == 1 && (jobs == 256 || jobs == 65536))
            continue;
        double known, us = forget_us(caps[c], &known);
        printf("new job on a full table of %zu (forgets one): %.1f us; a report of a known job "
               "%.2f us; ratio %.0fx\n",
               caps[c], us, known, us / known);
    }
    return sink == 42 ? 3 : 0;
}
