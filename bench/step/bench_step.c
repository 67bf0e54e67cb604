/*
 * bench_step.c - what reporting a training step costs the training process: hn_step_report()
 * (format + one non-blocking Unix datagram to a receiver that drains like the agent's) against
 * the usual peer, a StatsD metric over UDP to localhost (the Etsy StatsD line protocol,
 * "name:value|ms|#tags", as DogStatsD clients send it), measured in the same run.
 *
 * Prints the caller's CPU and wall time per report for both, the ratio, and the overhead on a
 * 100 ms step. Run by bench/step/run.sh (make bench); by hand: bench_step [REPORTS].
 */
#include "common/dgram.h"
#include "common/util.h"
#include "houston/step.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PAUSE_US 100 /* between bursts of 8 reports (a node's ranks finishing a step) */

static atomic_int stop;
static unsigned queue_len;

static double now_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Drains fd until stop, counting datagrams (the agent's receiver does the same, plus parsing
 * on its own thread, which is not the training process's time). */
static void *drain(void *arg)
{
    int fd = *(int *)arg;
    char buf[1024];
    struct timeval tv = {0, 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    unsigned long n = 0;
    while (!atomic_load(&stop)) {
        if (recv(fd, buf, sizeof(buf), 0) > 0)
            n++;
    }
    return (void *)(uintptr_t)n;
}

struct result {
    double cpu_us, wall_us;
    unsigned long received;
    uint64_t dropped;
};

static struct result run_houston(const char *path, unsigned n)
{
    /* The agent's socket: the same helper, the same queue depth. */
    unlink(path);
    unsigned qlen = 0;
    int fd = hn_dgram_bind(path, 1024, &qlen);
    if (fd < 0) {
        fprintf(stderr, "bench_step: bind %s: %s\n", path, strerror(-fd));
        exit(1);
    }
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* the drain thread blocks with a timeout */
    queue_len = qlen;
    atomic_store(&stop, 0);
    pthread_t t;
    pthread_create(&t, NULL, drain, &fd);
    setenv("SLURM_JOB_ID", "4242", 1);
    setenv("RANK", "17", 1);
    setenv("LOCAL_RANK", "1", 1);
    setenv("WORLD_SIZE", "512", 1);
    struct hn_step_client *c = hn_step_open();
    hn_step_set_socket(c, path);
    struct hn_step s;
    hn_step_init(&s);
    s.tokens = 16384;
    s.comm_s = 0.12;
    s.checkpoint = 1000;
    s.tflops = 412.5;
    double c0 = now_s(CLOCK_THREAD_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
    for (unsigned i = 0; i < n; i++) {
        s.step = 1001 + i;
        s.seconds = 1.5 + (double)(i % 7) * 1e-3;
        (void)hn_step_report(c, &s);
        if ((i & 7) == 7)
            usleep(PAUSE_US); /* a node's 8 ranks report at once, then train */
    }
    struct result r;
    r.cpu_us = (now_s(CLOCK_THREAD_CPUTIME_ID) - c0) / n * 1e6;
    r.wall_us = (now_s(CLOCK_MONOTONIC) - w0 - (double)(n / 8) * PAUSE_US * 1e-6) / n * 1e6;
    r.dropped = hn_step_dropped(c);
    usleep(200000);
    atomic_store(&stop, 1);
    void *got;
    pthread_join(t, &got);
    r.received = (unsigned long)(uintptr_t)got;
    hn_step_close(c);
    close(fd);
    unlink(path);
    return r;
}

static struct result run_statsd(unsigned n)
{
    int rfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (rfd < 0 || bind(rfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        getsockname(rfd, (struct sockaddr *)&sa, &len) != 0) {
        perror("bench_step: udp");
        exit(1);
    }
    atomic_store(&stop, 0);
    pthread_t t;
    pthread_create(&t, NULL, drain, &rfd);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    char line[512];
    unsigned long failed = 0;
    double c0 = now_s(CLOCK_THREAD_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
    for (unsigned i = 0; i < n; i++) {
        /* The same facts as houston's report, as DogStatsD timers with tags. */
        int k = snprintf(line, sizeof(line),
                         "train.step_time:%.9g|ms|#job:4242,rank:17,local_rank:1,world:512,"
                         "step:%u,tokens:16384,comm:0.12,ckpt:1000,tflops:412.5",
                         (1.5 + (double)(i % 7) * 1e-3) * 1000, 1001 + i);
        if (sendto(fd, line, (size_t)k, MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa)) < 0)
            failed++;
        if ((i & 7) == 7)
            usleep(PAUSE_US);
    }
    struct result r;
    r.cpu_us = (now_s(CLOCK_THREAD_CPUTIME_ID) - c0) / n * 1e6;
    r.wall_us = (now_s(CLOCK_MONOTONIC) - w0 - (double)(n / 8) * PAUSE_US * 1e-6) / n * 1e6;
    r.dropped = failed;
    usleep(200000);
    atomic_store(&stop, 1);
    void *got;
    pthread_join(t, &got);
    r.received = (unsigned long)(uintptr_t)got;
    close(fd);
    close(rfd);
    return r;
}

int main(int argc, char **argv)
{
    uint64_t want = 200000;
    if (argc > 1 && (hn_parse_u64(argv[1], 10, &want) != 0 || want > 100000000)) {
        fprintf(stderr, "usage: bench_step [REPORTS (1000..100000000, default 200000)]\n");
        return 2;
    }
    unsigned n = want < 1000 ? 1000 : (unsigned)want;
    char path[108];
    snprintf(path, sizeof(path), "/tmp/houston-bench-step.%d.sock", (int)getpid());
    /* Warm-up of both paths, then three alternating rounds; the best round of each counts
     * (the machine is shared: the minimum is the least disturbed). */
    (void)run_houston(path, 2000);
    (void)run_statsd(2000);
    struct result h = {1e9, 1e9, 0, 0}, u = {1e9, 1e9, 0, 0};
    for (int round = 0; round < 3; round++) {
        struct result a = run_houston(path, n), b = run_statsd(n);
        if (a.cpu_us < h.cpu_us)
            h = a;
        if (b.cpu_us < u.cpu_us)
            u = b;
    }
    printf("reports per round: %u in bursts of 8 (best of 3 rounds each); Unix socket queue %u\n",
           n, queue_len);
    printf("houston hn_step_report: %.2f us CPU, %.2f us wall per report; received %lu, "
           "dropped %llu\n",
           h.cpu_us, h.wall_us, h.received, (unsigned long long)h.dropped);
    printf("StatsD over UDP:        %.2f us CPU, %.2f us wall per report; received %lu, "
           "failed %llu\n",
           u.cpu_us, u.wall_us, u.received, (unsigned long long)u.dropped);
    printf("ratio statsd / houston CPU per report: %.2fx\n", u.cpu_us / h.cpu_us);
    printf("overhead on a 100 ms step: %.4f%%\n", h.wall_us / 100000.0 * 100);
    return 0;
}
