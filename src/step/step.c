/*
 * step.c - the step-report client (include/houston/step.h, docs/steps.md).
 *
 * Built twice, as libhouston-step.so for training programs and as a static library inside
 * houston (`houston tail`), so it uses libc only: no houston_core, no xmalloc, no logging.
 *
 * Sending is one sendto() on an unconnected, non-blocking datagram socket with the agent's
 * address each time. Nothing is connected, so an agent that restarts (and binds a new socket
 * file) receives the next report without any reconnect logic here. The socket is created by
 * hn_step_open(), or, if that failed (out of descriptors), by the first report that can; two
 * threads racing to create it settle with a compare-and-swap and the loser closes its own.
 */
#include "houston/step.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

struct hn_step_client {
    char job[HN_STEP_JOB_MAX + 1]; /* sanitised: printable ASCII without '=' */
    int rank, local_rank, world, gpu;
    struct sockaddr_un addr;
    socklen_t addr_len;
    int addr_err; /* non-zero: the path did not fit addr, every report drops with it */
    _Atomic int fd;
    _Atomic uint64_t dropped;
    _Atomic int last_errno;
};

/* The stand-in hn_step_open() returns when it cannot allocate: it has no job id, so every
 * report through it is dropped and counted, and the setters leave it alone. */
static struct hn_step_client dead = {
    .rank = -1, .local_rank = -1, .world = -1, .gpu = -1, .addr_err = ENOMEM, .fd = -1};

/* ---- identity ---- */

/* Copies job into c->job, making every byte outside 0x21..0x7e and every '=' an '_' (they
 * would break the key=value text) and cutting it at HN_STEP_JOB_MAX bytes. */
static void set_job(struct hn_step_client *c, const char *job)
{
    size_t n = strnlen(job, HN_STEP_JOB_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)job[i];
        c->job[i] = (b <= ' ' || b > '~' || b == '=') ? '_' : (char)b;
    }
    c->job[n] = '\0';
}

/* A rank, local rank or world size from the environment: decimal digits only, at most
 * HN_STEP_COUNT_MAX; anything else is -1. */
static int parse_count(const char *s)
{
    long long v = 0;
    if (!s || *s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v > HN_STEP_COUNT_MAX)
            return -1;
    }
    return (int)v;
}

/* The first of two variables that holds a valid count, else -1. */
static int env_count(const char *first, const char *second)
{
    int v = parse_count(getenv(first));
    return v >= 0 ? v : parse_count(getenv(second));
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* ---- the client ---- */

static int is_dead(const struct hn_step_client *c)
{
    return c == &dead;
}

struct hn_step_client *hn_step_open(void)
{
    int saved = errno; /* calloc and socket may set it; the caller's errno is not ours */
    struct hn_step_client *c = calloc(1, sizeof(*c));
    errno = saved;
    if (!c)
        return &dead;
    const char *job = env_nonempty("SLURM_JOB_ID");
    if (!job)
        job = env_nonempty("HOUSTON_JOB_ID");
    if (job)
        set_job(c, job); /* else "" from calloc: no job id */
    c->rank = env_count("RANK", "SLURM_PROCID");
    c->local_rank = env_count("LOCAL_RANK", "SLURM_LOCALID");
    c->world = env_count("WORLD_SIZE", "SLURM_NTASKS");
    c->gpu = -1;
    const char *path = env_nonempty("HOUSTON_STEP_SOCKET");
    hn_step_set_socket(c, path ? path : HN_STEP_SOCKET_DEFAULT);
    atomic_init(&c->dropped, 0);
    atomic_init(&c->last_errno, 0);
    atomic_init(&c->fd, socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    errno = saved;
    return c;
}

void hn_step_set_identity(struct hn_step_client *c, const char *job, int rank, int local_rank,
                          int world)
{
    if (!c || is_dead(c))
        return;
    if (job)
        set_job(c, job);
    if (rank >= 0 && rank <= HN_STEP_COUNT_MAX)
        c->rank = rank;
    if (local_rank >= 0 && local_rank <= HN_STEP_COUNT_MAX)
        c->local_rank = local_rank;
    if (world >= 0 && world <= HN_STEP_COUNT_MAX)
        c->world = world;
}

void hn_step_set_socket(struct hn_step_client *c, const char *path)
{
    if (!c || is_dead(c) || !path)
        return;
    size_t n = strlen(path);
    memset(&c->addr, 0, sizeof(c->addr));
    c->addr.sun_family = AF_UNIX;
    c->addr_len = 0;
    if (n == 0) {
        c->addr_err = EINVAL;
        return;
    }
    if (n >= sizeof(c->addr.sun_path)) {
        c->addr_err = ENAMETOOLONG;
        return;
    }
    memcpy(c->addr.sun_path, path, n + 1);
    c->addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    c->addr_err = 0;
}

void hn_step_set_gpu(struct hn_step_client *c, int gpu)
{
    if (!c || is_dead(c))
        return;
    c->gpu = gpu >= 0 && gpu <= HN_STEP_COUNT_MAX ? gpu : -1;
}

void hn_step_identity_get(const struct hn_step_client *c, const char **job, int *rank,
                          int *local_rank, int *world)
{
    if (job)
        *job = c ? c->job : "";
    if (rank)
        *rank = c ? c->rank : -1;
    if (local_rank)
        *local_rank = c ? c->local_rank : -1;
    if (world)
        *world = c ? c->world : -1;
}

void hn_step_init(struct hn_step *s)
{
    s->step = 0;
    s->seconds = NAN;
    s->tokens = -1;
    s->forward_s = s->backward_s = s->optimizer_s = s->comm_s = s->tflops = NAN;
    s->flops_per_token = NAN;
    s->checkpoint = -1;
}

uint64_t hn_step_dropped(const struct hn_step_client *c)
{
    /* The cast drops const only for C11's atomic_load signature (C17 allows const). */
    return c ? atomic_load_explicit((_Atomic uint64_t *)&c->dropped, memory_order_relaxed) : 0;
}

int hn_step_last_errno(const struct hn_step_client *c)
{
    return c ? atomic_load_explicit((_Atomic int *)&c->last_errno, memory_order_relaxed) : 0;
}

void hn_step_close(struct hn_step_client *c)
{
    if (!c || is_dead(c))
        return;
    int saved = errno;
    int fd = atomic_load(&c->fd);
    if (fd >= 0)
        close(fd);
    free(c);
    errno = saved;
}

/* ---- the datagram ---- */

struct out {
    char *buf;
    size_t size;
    size_t len;
    int overflow;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
    if (o->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->size - o->len) {
        o->overflow = 1;
        return;
    }
    o->len += (size_t)n;
}

/* True for a real worth sending: finite and not negative. */
static int real_ok(double v)
{
    return isfinite(v) && v >= 0;
}

/*
 * Appends " key=V" with V = "%.9g" of v in the C locale. printf takes its decimal point from
 * LC_NUMERIC, which the program may have set to anything ("," in de_DE, a two-byte character
 * in some locales); "%g" writes only ASCII digits, '-', '+', 'e' and that separator, so the
 * one run of other bytes is the separator and becomes '.'. Nine significant digits keep a
 * duration to the nanosecond up to one second and to the microsecond up to 15 minutes.
 */
static void put_real(struct out *o, const char *key, double v)
{
    char raw[64], num[64];
    if (v == 0)
        v = 0.0; /* -0 prints as "-0" */
    int n = snprintf(raw, sizeof(raw), "%.9g", v);
    if (n < 0 || (size_t)n >= sizeof(raw)) {
        o->overflow = 1;
        return;
    }
    size_t k = 0;
    int in_sep = 0;
    for (int i = 0; i < n; i++) {
        char ch = raw[i];
        int plain = (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == 'e';
        if (plain)
            num[k++] = ch;
        else if (!in_sep)
            num[k++] = '.';
        in_sep = !plain;
    }
    num[k] = '\0';
    put(o, " %s=%s", key, num);
}

/* " gpu=G" when known, then the datagram's length, or -1 (buf emptied) when it did not fit. */
static int put_end(struct out *o, const struct hn_step_client *c)
{
    if (c->gpu >= 0)
        put(o, " gpu=%d", c->gpu);
    if (o->overflow) {
        o->buf[0] = '\0';
        return -1;
    }
    return (int)o->len;
}

/* "hs1 job=J [rank=R] [lrank=L] [world=W]": what every datagram starts with. */
static void put_identity(struct out *o, const struct hn_step_client *c)
{
    put(o, "hs1 job=%s", c->job);
    if (c->rank >= 0)
        put(o, " rank=%d", c->rank);
    if (c->local_rank >= 0)
        put(o, " lrank=%d", c->local_rank);
    if (c->world >= 0)
        put(o, " world=%d", c->world);
}

int hn_step_format(const struct hn_step_client *c, const struct hn_step *s, char *buf,
                   unsigned size)
{
    if (!c || !s || !buf || size == 0)
        return -1;
    buf[0] = '\0';
    if (c->job[0] == '\0' || !real_ok(s->seconds))
        return -1;
    struct out o = {.buf = buf, .size = size};
    put_identity(&o, c);
    put(&o, " step=%" PRIu64, s->step);
    put_real(&o, "dur", s->seconds);
    if (s->tokens >= 0)
        put(&o, " tokens=%" PRId64, s->tokens);
    if (real_ok(s->forward_s))
        put_real(&o, "fwd", s->forward_s);
    if (real_ok(s->backward_s))
        put_real(&o, "bwd", s->backward_s);
    if (real_ok(s->optimizer_s))
        put_real(&o, "opt", s->optimizer_s);
    if (real_ok(s->comm_s))
        put_real(&o, "comm", s->comm_s);
    if (s->checkpoint >= 0)
        put(&o, " ckpt=%" PRId64, s->checkpoint);
    if (real_ok(s->tflops))
        put_real(&o, "tflops", s->tflops);
    if (real_ok(s->flops_per_token))
        put_real(&o, "fpt", s->flops_per_token);
    return put_end(&o, c);
}

static const char *pause_word(enum hn_step_pause kind)
{
    switch (kind) {
    case HN_STEP_PAUSE_CHECKPOINT:
        return "checkpoint";
    case HN_STEP_PAUSE_EVAL:
        return "eval";
    case HN_STEP_PAUSE_OTHER:
        return "other";
    }
    return NULL;
}

int hn_step_format_pause(const struct hn_step_client *c, uint64_t step, enum hn_step_pause kind,
                         char *buf, unsigned size)
{
    if (!c || !buf || size == 0)
        return -1;
    buf[0] = '\0';
    const char *word = pause_word(kind);
    if (c->job[0] == '\0' || !word)
        return -1;
    struct out o = {.buf = buf, .size = size};
    put_identity(&o, c);
    put(&o, " step=%" PRIu64 " pause=%s", step, word);
    return put_end(&o, c);
}

/* ---- sending ---- */

static int drop(struct hn_step_client *c, int err)
{
    atomic_fetch_add_explicit(&c->dropped, 1, memory_order_relaxed);
    atomic_store_explicit(&c->last_errno, err, memory_order_relaxed);
    return -1;
}

/* The client's socket, created now if hn_step_open() could not; -1 with errno set. */
static int client_fd(struct hn_step_client *c)
{
    int fd = atomic_load_explicit(&c->fd, memory_order_acquire);
    if (fd >= 0)
        return fd;
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int expected = -1;
    if (!atomic_compare_exchange_strong(&c->fd, &expected, fd)) {
        close(fd); /* another thread won the race: use its socket */
        return expected;
    }
    return fd;
}

/* Sends buf[0..n) (n < 0: the datagram could not be made). */
static int send_dgram(struct hn_step_client *c, const char *buf, int n)
{
    if (c->addr_err)
        return drop(c, c->addr_err);
    if (n < 0)
        return drop(c, EINVAL);
    int fd = client_fd(c);
    if (fd < 0)
        return drop(c, errno);
    ssize_t w;
    do {
        w = sendto(fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL,
                   (const struct sockaddr *)&c->addr, c->addr_len);
    } while (w < 0 && errno == EINTR);
    if (w < 0)
        return drop(c, errno);
    if (w != n)
        return drop(c, EMSGSIZE);
    return 0;
}

int hn_step_report(struct hn_step_client *c, const struct hn_step *s)
{
    if (!c)
        return -1;
    int saved = errno; /* a training loop's errno is none of our business */
    char buf[HN_STEP_DGRAM_MAX];
    int rc = send_dgram(c, buf, s ? hn_step_format(c, s, buf, sizeof(buf)) : -1);
    errno = saved;
    return rc;
}

int hn_step_pause(struct hn_step_client *c, uint64_t step, enum hn_step_pause kind)
{
    if (!c)
        return -1;
    int saved = errno;
    char buf[HN_STEP_DGRAM_MAX];
    int rc = send_dgram(c, buf, hn_step_format_pause(c, step, kind, buf, sizeof(buf)));
    errno = saved;
    return rc;
}
