/*
 * bench_agent.c - what one collection cycle of the agent costs, and what serving a series costs
 * compared with Debian's prometheus-node-exporter, measured in the same run.
 *
 * usage: bench_agent NVML_LIB SYSFS_ROOT PROC_ROOT CYCLES AGENT_URL PEER_URL REQUESTS
 *
 * Prints key=value lines (bench/agent/run.sh records them):
 *   gpus, nvlinks, ib_ports             what was collected
 *   collect_cpu_us_per_cycle            CPU per cycle, all collectors, NVML included
 *   nvml_cpu_us_per_cycle               of which inside NVML (the fake's own accounting)
 *   houston_cpu_us_per_gpu              (GPU collector CPU - NVML) / GPUs
 *   steady_heap_calls                   malloc/calloc/realloc/strdup by houston's code over
 *                                       the measured cycles (goal 0)
 *   render_ns_per_series                rendering /metrics in process
 *   agent_serve_ns_per_series, peer_serve_ns_per_series, serve_ratio   over HTTP
 */
#include "agent/collector.h"
#include "agent/config.h"
#include "agent/gpu.h"
#include "agent/host.h"
#include "agent/ib.h"
#include "agent/xidlog.h"
#include "common/buf.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned long heap_calls;
static int counting;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t s);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

void *__wrap_malloc(size_t n)
{
    heap_calls += (unsigned long)counting;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s)
{
    heap_calls += (unsigned long)counting;
    return __real_calloc(n, s);
}
void *__wrap_realloc(void *p, size_t n)
{
    heap_calls += (unsigned long)counting;
    return __real_realloc(p, n);
}
char *__wrap_strdup(const char *s)
{
    heap_calls += (unsigned long)counting;
    return __real_strdup(s);
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One HTTP/1.0 GET of url ("http://127.0.0.1:PORT/path"); returns the body's series count
 * (non-comment lines) or -1. */
static long http_get_series(const char *url, struct hn_buf *resp)
{
    unsigned port;
    char path[256];
    if (sscanf(url, "http://127.0.0.1:%u%255s", &port, path) != 2)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    char req[512];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    hn_buf_reset(resp);
    char chunk[65536];
    ssize_t r;
    while ((r = read(fd, chunk, sizeof(chunk))) > 0)
        hn_buf_append(resp, chunk, (size_t)r);
    close(fd);
    const char *body = strstr(resp->data ? resp->data : "", "\r\n\r\n");
    if (!body)
        return -1;
    long series = 0;
    for (const char *p = body + 4; *p;) {
        const char *nl = strchr(p, '\n');
        if (*p != '#' && *p != '\n')
            series++;
        if (!nl)
            break;
        p = nl + 1;
    }
    return series;
}

/* Mean wall time per request and the series count of the last response. */
static double serve_ns_per_series(const char *url, int requests, long *series)
{
    struct hn_buf resp;
    hn_buf_init(&resp, 64u << 20);
    *series = http_get_series(url, &resp); /* warm-up */
    double t0 = wall_s();
    for (int i = 0; i < requests; i++)
        *series = http_get_series(url, &resp);
    double dt = wall_s() - t0;
    hn_buf_fini(&resp);
    if (*series <= 0)
        return -1;
    return dt / requests / (double)*series * 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: bench_agent NVML_LIB SYSFS_ROOT PROC_ROOT CYCLES AGENT_URL "
                        "PEER_URL REQUESTS\n");
        return 2;
    }
    struct hn_agent_config cfg;
    hn_agent_config_defaults(&cfg);
    hn_strlcpy(cfg.nvml_lib, argv[1], sizeof(cfg.nvml_lib));
    hn_strlcpy(cfg.sysfs_root, argv[2], sizeof(cfg.sysfs_root));
    hn_strlcpy(cfg.proc_root, argv[3], sizeof(cfg.proc_root));
    hn_strlcpy(cfg.kmsg, "/dev/null", sizeof(cfg.kmsg));
    int cycles = atoi(argv[4]);   /* NOLINT(cert-err34-c): bench argument */
    int requests = atoi(argv[7]); /* NOLINT(cert-err34-c) */

    /* The fake NVML accounts the time spent inside it when asked to. */
    setenv("HN_FAKENVML_ACCOUNT", "1", 1);
    const struct hn_collector *cols[] = {&hn_collector_gpu, &hn_collector_ib, &hn_collector_host,
                                         &hn_collector_xid};
    void *st[4];
    for (int i = 0; i < 4; i++) {
        if (cols[i]->init(&cfg, &st[i]) != 0) {
            fprintf(stderr, "collector %s failed to start\n", cols[i]->name);
            return 1;
        }
    }
    struct hn_gpu_set *gs = st[0];
    /* The fake's accounting is for one thread: the Xid event thread is not part of a cycle. */
    hn_gpus_events_stop(gs);
    void (*fake_stats)(unsigned long long *, unsigned long long *);
    void *sym = dlsym(gs->nvml.dl, "hn_fakenvml_account");
    memcpy(&fake_stats, &sym, sizeof(sym)); /* POSIX: dlsym results convert to functions */
    struct hn_buf out;
    hn_buf_init(&out, 32u << 20);
    struct hn_expo e;
    /* Warm-up: buffers grow to their steady size. */
    for (int w = 0; w < 3; w++) {
        hn_buf_reset(&out);
        hn_expo_init(&e, &out);
        for (int i = 0; i < 4; i++) {
            cols[i]->collect(st[i]);
            cols[i]->render(st[i], &e);
        }
    }
    unsigned long long calls0 = 0, ns0 = 0, calls1 = 0, ns1 = 0;
    if (fake_stats)
        fake_stats(&calls0, &ns0);
    double gpu_cpu = 0, all_cpu = 0, render_cpu = 0;
    unsigned series = 0;
    counting = 1;
    for (int c = 0; c < cycles; c++) {
        for (int i = 0; i < 4; i++) {
            double t0 = cpu_s();
            cols[i]->collect(st[i]);
            double dt = cpu_s() - t0;
            all_cpu += dt;
            if (i == 0)
                gpu_cpu += dt;
        }
        double r0 = cpu_s();
        hn_buf_reset(&out);
        hn_expo_init(&e, &out);
        for (int i = 0; i < 4; i++)
            cols[i]->render(st[i], &e);
        render_cpu += cpu_s() - r0;
        series = e.series;
    }
    counting = 0;
    if (fake_stats)
        fake_stats(&calls1, &ns1);
    double nvml_s = (double)(ns1 - ns0) / 1e9;
    unsigned links = 0;
    for (unsigned i = 0; i < gs->count; i++)
        links += gs->gpus[i].nlinks;
    printf("gpus=%u\nnvlinks=%u\n", gs->count, links);
    printf("series=%u\n", series);
    printf("collect_cpu_us_per_cycle=%.1f\n", all_cpu / cycles * 1e6);
    printf("nvml_calls_per_cycle=%.0f\n", (double)(calls1 - calls0) / cycles);
    printf("nvml_cpu_us_per_cycle=%.1f\n", fake_stats ? nvml_s / cycles * 1e6 : -1.0);
    printf("houston_cpu_us_per_gpu=%.2f\n",
           fake_stats && gs->count ? (gpu_cpu - nvml_s) / cycles / gs->count * 1e6 : -1.0);
    printf("steady_heap_calls=%lu\n", heap_calls);
    printf("render_ns_per_series=%.1f\n", render_cpu / cycles / (series ? series : 1) * 1e9);

    long agent_series = 0, peer_series = 0;
    double a = serve_ns_per_series(argv[5], requests, &agent_series);
    double p = serve_ns_per_series(argv[6], requests, &peer_series);
    printf("agent_series=%ld\nagent_serve_ns_per_series=%.1f\n", agent_series, a);
    printf("peer_series=%ld\npeer_serve_ns_per_series=%.1f\n", peer_series, p);
    printf("serve_ratio=%.1f\n", a > 0 && p > 0 ? p / a : -1.0);

    for (int i = 0; i < 4; i++)
        cols[i]->fini(st[i]);
    hn_buf_fini(&out);
    return 0;
}
