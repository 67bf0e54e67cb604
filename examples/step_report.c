/*
 * step_report.c - a training loop that reports every step to the houston agent
 * (include/houston/step.h, docs/steps.md).
 *
 * The "model" here sleeps instead of computing; a real program puts its forward, backward and
 * optimizer calls where the sleeps are. Build against the shared library and run:
 *
 *   cc -std=c11 -I include examples/step_report.c -L build -lhouston-step \
 *      -Wl,-rpath,"$PWD/build" -o step_report
 *   HOUSTON_JOB_ID=demo ./step_report 20
 *
 * Under srun or torchrun the job id and ranks come from the launcher's environment.
 */
#define _POSIX_C_SOURCE 200809L

#include <houston/step.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Stands in for one phase of a step: forward, backward or the optimizer. */
static double phase(long ms)
{
    double t0 = now_s();
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
    const int64_t tokens_per_step = 8 * 2048; /* micro-batch x sequence length on this rank */
    const long save_every = 10;               /* steps between checkpoints */
    long sent = 0;

    struct hn_step_client *c = hn_step_open(); /* identity from the environment */
    for (long i = 0; i < steps; i++) {
        double t0 = now_s();
        struct hn_step s;
        hn_step_init(&s);
        s.forward_s = phase(10);
        s.backward_s = phase(20);
        s.optimizer_s = phase(5);
        s.step = (uint64_t)i + 1; /* steps completed, as a checkpoint here would be named */
        s.seconds = now_s() - t0;
        s.tokens = tokens_per_step;
        hn_step_report(c, &s); /* never blocks; a drop is counted, not an error */
        sent++;
        if ((i + 1) % save_every == 0) {
            /* Say so before a save: houston then allows a long one (hang-pause-max) instead
             * of calling the job hung once it outlasts the step rhythm. */
            hn_step_pause(c, s.step, HN_STEP_PAUSE_CHECKPOINT);
            sent++;
            phase(50); /* the save */
        }
    }
    uint64_t dropped = hn_step_dropped(c);
    if (dropped > 0)
        fprintf(stderr, "step_report: %llu of %ld reports dropped (last: %s)\n",
                (unsigned long long)dropped, sent, strerror(hn_step_last_errno(c)));
    hn_step_close(c);
    return 0;
}
