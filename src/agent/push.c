#include "agent/push.h"

#include "agent/kmsg.h"
#include "agent/steps.h"
#include "agent/xidlog.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/util.h"

#include <assert.h>
#include <ctype.h>
#include "common/curl_dl.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REPLY_KEEP 200 /* bytes of a reply body kept for the log */

/* ---- the frame builder ------------------------------------------------------------------ */

void hn_push_builder_init(struct hn_push_builder *b, uint64_t boot_id)
{
    memset(b, 0, sizeof(*b));
    hn_buf_init(&b->frame, HN_FRAME_MAX);
    while (boot_id == 0) {
        if (getrandom(&boot_id, sizeof(boot_id), 0) != (ssize_t)sizeof(boot_id)) {
            /* Only before the kernel's pool is ready, or on a kernel older than 3.17. */
            boot_id = hn_mono_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
        }
    }
    b->boot_id = boot_id;
}

void hn_push_builder_fini(struct hn_push_builder *b)
{
    hn_buf_fini(&b->frame);
}

void hn_push_builder_resend_identity(struct hn_push_builder *b)
{
    b->resend_identity = 1;
}

/* FNV-1a over the three identity strings (NUL-separated), never 0 (0 means "not sent"). */
static uint64_t identity_hash(const struct hn_gpu *g)
{
    const char *parts[3] = {g->uuid, g->pci_bus_id, g->name};
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < HN_ARRAY_LEN(parts); i++) {
        for (const char *c = parts[i];; c++) {
            h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
            if (!*c)
                break;
        }
    }
    return h ? h : 1;
}

static int hex_field(const char **s, unsigned max, unsigned *out)
{
    const char *p = *s;
    unsigned long v = 0;
    int n = 0;
    while (isxdigit((unsigned char)*p)) {
        if (++n > 8)
            return -EINVAL;
        int d = isdigit((unsigned char)*p) ? *p - '0' : tolower((unsigned char)*p) - 'a' + 10;
        v = v * 16 + (unsigned long)d;
        p++;
    }
    if (n == 0 || v > max)
        return -EINVAL;
    *out = (unsigned)v;
    *s = p;
    return 0;
}

int hn_push_parse_pci(const char *s, unsigned *domain, unsigned *bus, unsigned *dev)
{
    unsigned a, b, c, fn;
    if (strncasecmp(s, "PCI:", 4) == 0)
        s += 4;
    if (hex_field(&s, 0xffffffffu, &a) != 0 || *s++ != ':' || hex_field(&s, 0xff, &b) != 0)
        return -EINVAL;
    if (*s == ':') {
        s++;
        if (hex_field(&s, 0x1f, &c) != 0)
            return -EINVAL;
        *domain = a;
        *bus = b;
        *dev = c;
    } else {
        if (a > 0xff || b > 0x1f)
            return -EINVAL;
        *domain = 0;
        *bus = a;
        *dev = b;
    }
    if (*s == '.') {
        s++;
        if (hex_field(&s, 7, &fn) != 0)
            return -EINVAL;
    }
    return *s ? -EINVAL : 0;
}

static struct hn_frame_str fstr(const char *s)
{
    return (struct hn_frame_str){s, strlen(s)};
}

/* The GPU whose PCI bus id names the same device as pci, or HN_FRAME_NO_GPU. */
static unsigned gpu_of_pci(const struct hn_gpu_set *s, unsigned n, const char *pci)
{
    unsigned dom, bus, dev;
    if (hn_push_parse_pci(pci, &dom, &bus, &dev) != 0)
        return HN_FRAME_NO_GPU;
    for (unsigned i = 0; i < n; i++) {
        unsigned d2, b2, v2;
        if (s->gpus[i].identified && hn_push_parse_pci(s->gpus[i].pci_bus_id, &d2, &b2, &v2) == 0 &&
            d2 == dom && b2 == bus && v2 == dev)
            return i;
    }
    return HN_FRAME_NO_GPU;
}

static void build_gpus(struct hn_push_builder *b, struct hn_frame_writer *w,
                       const struct hn_gpu_set *s, unsigned n, uint64_t time_ns)
{
    int all = b->resend_identity || b->since_identity >= HN_PUSH_IDENTITY_EVERY;
    for (unsigned i = 0; i < n; i++) {
        const struct hn_gpu *g = &s->gpus[i];
        if (!g->identified)
            continue;
        uint64_t h = identity_hash(g);
        if (all || h != b->identity[i])
            hn_frame_gpu(w, i, g->uuid, g->pci_bus_id, g->name);
        b->identity[i] = h;
    }
    if (all) {
        b->since_identity = 0;
        b->resend_identity = 0;
    } else {
        b->since_identity++;
    }
    for (unsigned i = 0; i < n; i++) {
        for (unsigned f = 0; f < HN_F_COUNT; f++) {
            if (!isnan(s->gpus[i].v[f]))
                hn_frame_sample(w, i, f, s->gpus[i].v[f]);
        }
    }
    for (unsigned i = 0; i < n; i++) {
        const struct hn_gpu *g = &s->gpus[i];
        for (unsigned l = 0; l < g->nlinks && l < NVML_NVLINK_MAX_LINKS; l++) {
            for (unsigned f = 0; f < HN_L_COUNT; f++) {
                if (!isnan(g->link[l][f]))
                    hn_frame_link_sample(w, i, l, f, g->link[l][f]);
            }
        }
    }
    /* NVML Xid events: the set keeps a count and the newest code per GPU, so a GPU whose count
     * grew gives one record with that code; the count itself travels as HN_F_XID_EVENTS. */
    for (unsigned i = 0; i < n; i++) {
        const struct hn_gpu *g = &s->gpus[i];
        if (g->xid_events < b->xid_seen[i])
            b->xid_seen[i] = 0;
        if (g->xid_events == b->xid_seen[i])
            continue;
        b->xid_seen[i] = g->xid_events;
        double code = g->v[HN_F_XID];
        struct hn_frame_xid x = {
            .gpu = i,
            .code = isnan(code) || code < 0 ? 0
                    : code > 0xffffffffu    ? 0xffffffffu
                                            : (unsigned)code,
            .time_ns = time_ns,
            .pci = fstr(g->pci_bus_id),
            .kind = 1,
        };
        hn_frame_xid(w, &x);
    }
}

static void build_kernel_xids(struct hn_frame_writer *w, const void *xid,
                              const struct hn_gpu_set *s, unsigned n)
{
    const struct hn_xidlog_event *ev;
    unsigned nev = hn_xidlog_cycle_events(xid, &ev);
    for (unsigned i = 0; i < nev; i++) {
        struct hn_frame_xid x = {
            .gpu = ev[i].kind == HN_XID ? gpu_of_pci(s, n, ev[i].pci) : HN_FRAME_NO_GPU,
            .code = ev[i].code,
            .time_ns = ev[i].time_ns,
            .pci = fstr(ev[i].pci),
            .kind = ev[i].kind == HN_SXID ? 2 : 1,
        };
        hn_frame_xid(w, &x);
    }
}

/* A counter that could not be read this cycle is sent as its last value read (0 before). */
static uint64_t counter_or_last(uint64_t *last, double v)
{
    if (!isnan(v) && v >= 0 && v < 18446744073709551616.0)
        *last = (uint64_t)v;
    return *last;
}

static void build_ib(struct hn_push_builder *b, struct hn_frame_writer *w, const void *ib)
{
    int n = hn_ib_collector_nports(ib);
    for (int i = 0; i < n && i < HN_IB_MAX_PORTS; i++) {
        const struct hn_ib_port *p = hn_ib_collector_port(ib, i);
        uint64_t port = 0;
        if (hn_parse_u64(p->port, 10, &port) != 0 || port > 0xffff)
            port = 0;
        uint64_t *last = b->ib_last[i];
        struct hn_frame_ibport r = {
            .device = fstr(p->device),
            .port = (unsigned)port,
            /* Unknown states (-1) travel as 0, which IBTA calls "no state change". */
            .state = p->state >= 0 && p->state <= 0xff ? (unsigned)p->state : 0,
            .phys_state = p->phys_state >= 0 && p->phys_state <= 0xff ? (unsigned)p->phys_state : 0,
            .rate_gbps = p->rate_gbps,
            .link_downed =
                counter_or_last(&last[0], p->link_downed_ok ? (double)p->link_downed : NAN),
            .symbol_errors =
                counter_or_last(&last[1], hn_ib_collector_counter(ib, i, "symbol_error")),
            .link_error_recovery =
                counter_or_last(&last[2], hn_ib_collector_counter(ib, i, "link_error_recovery")),
        };
        hn_frame_ibport(w, &r);
    }
}

static uint32_t u32_or_none(int64_t v)
{
    return v >= 0 && v < HN_FRAME_NO_U32 ? (uint32_t)v : HN_FRAME_NO_U32;
}

/* The GPU a rank runs on: its explicit gpu=, else its local rank (one GPU per local rank, the
 * launchers' convention), when that names a GPU of this node. */
static unsigned gpu_of_step(const struct hn_step_msg *m, unsigned n)
{
    int64_t g = m->gpu >= 0 ? m->gpu : m->local_rank;
    return g >= 0 && g < (int64_t)n ? (unsigned)g : HN_FRAME_NO_GPU;
}

static void build_steps(struct hn_frame_writer *w, const struct hn_steps_report *r, unsigned nr,
                        unsigned n)
{
    for (unsigned i = 0; i < nr; i++) {
        const struct hn_step_msg *m = &r[i].msg;
        struct hn_frame_step f = {
            .job = fstr(m->job),
            .rank = u32_or_none(m->rank),
            .local_rank = u32_or_none(m->local_rank),
            .world = u32_or_none(m->world),
            .gpu = gpu_of_step(m, n),
            .step = m->step,
            .time_ns = r[i].time_ns,
            .seconds = m->seconds,
            .tokens = m->tokens,
            .forward_s = m->forward_s,
            .backward_s = m->backward_s,
            .optimizer_s = m->optimizer_s,
            .comm_s = m->comm_s,
            .checkpoint = m->checkpoint >= 0 ? (uint64_t)m->checkpoint : HN_FRAME_NO_U64,
            .tflops = m->tflops,
            .flops_per_token = m->flops_per_token,
            .uid = r[i].uid,
            .pause = (unsigned)m->pause,
        };
        hn_frame_step(w, &f);
    }
}

int hn_push_build(struct hn_push_builder *b, const struct hn_push_sources *src, uint64_t time_ns)
{
    const struct hn_gpu_set *s = src->gpus;
    unsigned n = s ? s->count : 0;
    if (n > HN_MAX_GPUS)
        n = HN_MAX_GPUS;
    const char *model = s && n && s->gpus[0].identified ? s->gpus[0].name : "";
    struct hn_frame_writer w;
    hn_frame_begin(&w, &b->frame, b->boot_id, ++b->seq, time_ns);
    hn_frame_node(&w, src->hostname ? src->hostname : "", n, model);
    if (s)
        build_gpus(b, &w, s, n, time_ns);
    if (src->xid)
        build_kernel_xids(&w, src->xid, s, n);
    if (src->ib)
        build_ib(b, &w, src->ib);
    if (src->steps)
        build_steps(&w, src->steps, src->nsteps, n);
    return hn_frame_end(&w);
}

/* ---- the token --------------------------------------------------------------------------- */

int hn_push_read_token(const char *path, char *out, size_t size, char *err, size_t errsize)
{
    char buf[HN_PUSH_TOKEN_MAX + 2];
    int rc;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        snprintf(err, errsize, "token-file %s: %s", path, strerror(-rc));
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = -EINVAL;
        snprintf(err, errsize, "token-file %s: not a regular file", path);
        goto out_close;
    }
    if (st.st_mode & 077)
        hn_warn("token-file %s: readable by group or others (mode %03o); chmod 600 it", path,
                (unsigned)(st.st_mode & 0777));
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    if (n < 0) {
        rc = -errno;
        snprintf(err, errsize, "token-file %s: %s", path, strerror(-rc));
        goto out_close;
    }
    buf[n] = '\0';
    char *nl = strchr(buf, '\n');
    if (!nl && (size_t)n == sizeof(buf) - 1) {
        rc = -E2BIG;
        snprintf(err, errsize, "token-file %s: the token is longer than %d bytes", path,
                 HN_PUSH_TOKEN_MAX - 1);
        goto out_close;
    }
    if (nl)
        *nl = '\0';
    char *tok = hn_trim(buf);
    size_t len = strlen(tok);
    rc = -EINVAL;
    if (len == 0) {
        snprintf(err, errsize, "token-file %s: the first line is empty", path);
        goto out_close;
    }
    if (len >= size || len >= HN_PUSH_TOKEN_MAX) {
        snprintf(err, errsize, "token-file %s: the token is longer than %zu bytes", path,
                 (size < HN_PUSH_TOKEN_MAX ? size : HN_PUSH_TOKEN_MAX) - 1);
        goto out_close;
    }
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)tok[i] <= ' ' || (unsigned char)tok[i] >= 0x7f) {
            snprintf(err, errsize, "token-file %s: the token holds a blank or non-ASCII byte",
                     path);
            goto out_close;
        }
    }
    memcpy(out, tok, len + 1);
    rc = 0;
out_close:
    close(fd);
    explicit_bzero(buf, sizeof(buf));
    return rc;
}

/* ---- the queue and the sender ------------------------------------------------------------ */

struct slot {
    struct hn_buf buf;
    uint64_t id; /* queue-wide order of arrival, from 1 */
};

enum outcome { SENT, REFUSED, RETRY };

struct hn_push {
    const struct hn_curl_ops *cu; /* libcurl, loaded by hn_push_new */
    char url[1024 + sizeof(HN_PUSH_INGEST_PATH)];
    char token[HN_PUSH_TOKEN_MAX];
    double backoff_min_s, backoff_max_s, connect_timeout_s, timeout_s;
    struct hn_push_builder builder; /* collect thread */

    pthread_mutex_t lock; /* guards everything down to st */
    pthread_cond_t cond;  /* CLOCK_MONOTONIC; signalled on enqueue and stop */
    struct slot *slots;
    unsigned max, head, count;
    uint64_t next_id;
    uint64_t inflight_id; /* id of the frame the sender is posting, 0 when none */
    struct hn_push_stats st;

    atomic_int stopping;
    _Atomic uint64_t deadline_ns; /* monotonic: when stopping, give up at this time */
    pthread_t thread;
    int running;

    /* The sender thread's own. */
    CURL *curl;
    struct curl_slist *headers;
    struct hn_buf sending;
    char reply[REPLY_KEEP + 1];
    size_t reply_len;
    char curl_err[CURL_ERROR_SIZE];
    struct hn_complain fail;
    struct hn_complain refused[100];
};

struct hn_push *hn_push_new(const struct hn_push_config *cfg, char *err, size_t errsize)
{
    char url[sizeof(((struct hn_push *)0)->url)];
    size_t len = cfg->url ? hn_strlcpy(url, cfg->url, sizeof(url)) : 0;
    while (len > 0 && len < sizeof(url) && url[len - 1] == '/')
        url[--len] = '\0';
    if (len == 0 || len + sizeof(HN_PUSH_INGEST_PATH) > sizeof(url) ||
        (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)) {
        snprintf(err, errsize, "controller: '%s' is not an http:// or https:// URL",
                 cfg->url ? cfg->url : "");
        return NULL;
    }
    const char *tok = cfg->token ? cfg->token : "";
    if (strlen(tok) >= HN_PUSH_TOKEN_MAX) {
        snprintf(err, errsize, "token: longer than %d bytes", HN_PUSH_TOKEN_MAX - 1);
        return NULL;
    }
    for (const char *c = tok; *c; c++) {
        if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f) {
            snprintf(err, errsize, "token: holds a blank or non-ASCII byte");
            return NULL;
        }
    }
    if (cfg->queue_max < 1) {
        snprintf(err, errsize, "push-queue: must be at least 1");
        return NULL;
    }
    /* libcurl is loaded now, only by agents that push (common/curl_dl.h). */
    const struct hn_curl_ops *cu = hn_curl_load(err, errsize);
    if (!cu)
        return NULL;

    struct hn_push *p = xcalloc(1, sizeof(*p));
    p->cu = cu;
    hn_strlcpy(p->url, url, sizeof(p->url));
    hn_strlcpy(p->url + len, HN_PUSH_INGEST_PATH, sizeof(p->url) - len);
    hn_strlcpy(p->token, tok, sizeof(p->token));
    p->backoff_min_s = cfg->backoff_min_s > 0 ? cfg->backoff_min_s : 1;
    p->backoff_max_s = cfg->backoff_max_s >= p->backoff_min_s ? cfg->backoff_max_s : 60;
    p->connect_timeout_s = cfg->connect_timeout_s > 0 ? cfg->connect_timeout_s : 2;
    p->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 10;
    hn_push_builder_init(&p->builder, cfg->boot_id);

    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &ca);
    pthread_condattr_destroy(&ca);
    p->max = cfg->queue_max;
    p->slots = xcalloc(p->max, sizeof(*p->slots));
    for (unsigned i = 0; i < p->max; i++)
        hn_buf_init(&p->slots[i].buf, HN_FRAME_MAX);
    hn_buf_init(&p->sending, HN_FRAME_MAX);
    return p;
}

const struct hn_push_builder *hn_push_get_builder(const struct hn_push *p)
{
    return &p->builder;
}

/* Removes the oldest frame; lock held, count > 0. */
static void pop_head(struct hn_push *p)
{
    p->head = (p->head + 1) % p->max;
    p->count--;
}

/* Queues a copy of the frame; returns 1 when an older frame was dropped to make room, 0, or
 * -ENOSPC. */
static int enqueue(struct hn_push *p, const void *frame, size_t len)
{
    if (len > HN_FRAME_MAX)
        return -ENOSPC;
    int dropped = 0;
    pthread_mutex_lock(&p->lock);
    if (p->count == p->max) {
        /* Drop the oldest frame, unless the sender is posting it: then the one after it, so
         * that the frame in flight is still the head when its answer comes. */
        if (p->count >= 2 && p->slots[p->head].id == p->inflight_id) {
            unsigned next = (p->head + 1) % p->max;
            struct slot tmp = p->slots[p->head];
            p->slots[p->head] = p->slots[next];
            p->slots[next] = tmp;
        }
        pop_head(p);
        p->st.dropped++;
        dropped = 1;
    }
    struct slot *s = &p->slots[(p->head + p->count) % p->max];
    hn_buf_reset(&s->buf);
    int rc = hn_buf_append(&s->buf, frame, len);
    if (rc == 0) {
        s->id = ++p->next_id;
        p->count++;
        p->st.frames++;
        pthread_cond_signal(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    return rc ? rc : dropped;
}

int hn_push_enqueue(struct hn_push *p, const void *frame, size_t len)
{
    int rc = enqueue(p, frame, len);
    return rc < 0 ? rc : 0;
}

int hn_push_cycle(struct hn_push *p, const struct hn_push_sources *src)
{
    int rc = hn_push_build(&p->builder, src, hn_wall_ns());
    if (rc == 0)
        rc = enqueue(p, p->builder.frame.data, p->builder.frame.len);
    if (rc < 0) {
        pthread_mutex_lock(&p->lock);
        p->st.build_errors++;
        pthread_mutex_unlock(&p->lock);
        hn_warn("push: frame seq %llu not built: %s", (unsigned long long)p->builder.seq,
                strerror(-rc));
        /* The controller may have missed identities that changed in this frame. */
        hn_push_builder_resend_identity(&p->builder);
        return rc;
    }
    if (rc == 1) /* the dropped frame may have carried identities */
        hn_push_builder_resend_identity(&p->builder);
    return 0;
}

/* libcurl callbacks: keep the start of the reply for the log; cut the transfer at the stop
 * deadline. */
static size_t on_reply(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct hn_push *p = ctx;
    size_t n = size * nmemb;
    for (size_t i = 0; i < n && p->reply_len < REPLY_KEEP; i++) {
        unsigned char c = (unsigned char)data[i];
        p->reply[p->reply_len++] = c >= ' ' && c < 0x7f ? (char)c : ' ';
    }
    p->reply[p->reply_len] = '\0';
    return n;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    struct hn_push *p = ctx;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return atomic_load(&p->stopping) && hn_mono_ns() >= atomic_load(&p->deadline_ns);
}

/* Appends one header line to p->headers (libcurl copies it). 0 or -ENOMEM. */
static int add_header(struct hn_push *p, const char *line)
{
    struct curl_slist *h = p->cu->slist_append(p->headers, line);
    if (!h)
        return -ENOMEM;
    p->headers = h;
    return 0;
}

static int curl_setup(struct hn_push *p)
{
    p->curl = p->cu->easy_init();
    if (!p->curl)
        return -ENOMEM;
    int rc = add_header(p, "Content-Type: " HN_PUSH_CONTENT_TYPE);
    if (rc == 0 && p->token[0]) {
        char auth[HN_PUSH_TOKEN_MAX + 32];
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", p->token);
        rc = add_header(p, auth);
        explicit_bzero(auth, sizeof(auth));
    }
    /* No "Expect: 100-continue" round trip before a large frame. */
    if (rc == 0)
        rc = add_header(p, "Expect:");
    if (rc != 0)
        return rc;
    CURL *c = p->curl;
    int bad = 0;
    bad |= p->cu->easy_setopt(c, CURLOPT_URL, p->url) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_HTTPHEADER, p->headers) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(p->connect_timeout_s * 1000)) !=
           CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(p->timeout_s * 1000)) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_USERAGENT, "houston-agent/" HN_VERSION) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_reply) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_WRITEDATA, p) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_NOPROGRESS, 0L) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_XFERINFODATA, p) != CURLE_OK;
    bad |= p->cu->easy_setopt(c, CURLOPT_ERRORBUFFER, p->curl_err) != CURLE_OK;
    return bad ? -EINVAL : 0;
}

/* POSTs p->sending; returns what to do with the frame and the status in *status. */
static enum outcome post(struct hn_push *p, long *status)
{
    p->reply_len = 0;
    p->reply[0] = '\0';
    p->curl_err[0] = '\0';
    *status = 0;
    p->cu->easy_setopt(p->curl, CURLOPT_POSTFIELDS, p->sending.data);
    p->cu->easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->sending.len);
    CURLcode rc = p->cu->easy_perform(p->curl);
    if (rc != CURLE_OK) {
        if (!p->curl_err[0])
            hn_strlcpy(p->curl_err, p->cu->easy_strerror(rc), sizeof(p->curl_err));
        return RETRY;
    }
    p->cu->easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, status);
    if (*status >= 200 && *status < 300)
        return SENT;
    if (*status >= 400 && *status < 500 && *status != 408 && *status != 429)
        return REFUSED;
    return RETRY;
}

static uint64_t frame_seq(const struct hn_buf *f)
{
    uint64_t seq = 0;
    if (f->len >= 24) {
        for (int i = 7; i >= 0; i--)
            seq = seq << 8 | (unsigned char)f->data[16 + i];
    }
    return seq;
}

/* Sleeps seconds unless stop is called; returns 1 when stopping. */
static int wait_backoff(struct hn_push *p, double seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)(seconds * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    pthread_mutex_lock(&p->lock);
    while (!atomic_load(&p->stopping)) {
        if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT)
            break;
    }
    int stopping = atomic_load(&p->stopping);
    pthread_mutex_unlock(&p->lock);
    return stopping;
}

static void report(struct hn_push *p, enum outcome o, long status, uint64_t seq, double backoff,
                   unsigned queued)
{
    if (o == SENT) {
        hn_complain_clear(&p->fail, "push: %s takes frames again", p->url);
    } else if (o == REFUSED) {
        hn_complain(&p->refused[status - 400],
                    "push: %s refused frame seq %llu with HTTP %ld (%s); frame dropped", p->url,
                    (unsigned long long)seq, status, p->reply[0] ? p->reply : "no reason given");
    } else if (status) {
        hn_complain(&p->fail,
                    "push: %s answered HTTP %ld (%s); %u frame(s) kept, retrying in %.3g s", p->url,
                    status, p->reply[0] ? p->reply : "no reason given", queued, backoff);
    } else {
        hn_complain(&p->fail, "push: %s: %s; %u frame(s) kept, retrying in %.3g s", p->url,
                    p->curl_err, queued, backoff);
    }
}

static void *sender_main(void *arg)
{
    struct hn_push *p = arg;
    double backoff = p->backoff_min_s;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (p->count == 0 && !atomic_load(&p->stopping))
            pthread_cond_wait(&p->cond, &p->lock);
        if (p->count == 0 ||
            (atomic_load(&p->stopping) && hn_mono_ns() >= atomic_load(&p->deadline_ns))) {
            pthread_mutex_unlock(&p->lock);
            break;
        }
        const struct slot *head = &p->slots[p->head];
        hn_buf_reset(&p->sending);
        int rc = hn_buf_append(&p->sending, head->buf.data, head->buf.len);
        uint64_t id = head->id;
        p->inflight_id = id;
        pthread_mutex_unlock(&p->lock);
        assert(rc == 0); /* both buffers have the same cap */
        (void)rc;

        long status;
        enum outcome o = post(p, &status);

        pthread_mutex_lock(&p->lock);
        p->inflight_id = 0;
        if (o != RETRY && p->count > 0 && p->slots[p->head].id == id)
            pop_head(p);
        if (o == SENT) {
            p->st.sent++;
            p->st.last_success = hn_wall_s();
        } else if (o == REFUSED) {
            p->st.refused++;
            p->st.refused_by_code[status - 400]++;
        } else {
            p->st.errors++;
        }
        unsigned queued = p->count;
        pthread_mutex_unlock(&p->lock);

        report(p, o, status, frame_seq(&p->sending), backoff, queued);
        if (o != RETRY) {
            backoff = p->backoff_min_s;
            continue;
        }
        if (atomic_load(&p->stopping) || wait_backoff(p, backoff))
            break;
        backoff = backoff * 2 < p->backoff_max_s ? backoff * 2 : p->backoff_max_s;
    }
    return NULL;
}

int hn_push_start(struct hn_push *p)
{
    if (p->running)
        return 0;
    int rc = curl_setup(p);
    if (rc != 0)
        return rc;
    atomic_store(&p->stopping, 0);
    if (pthread_create(&p->thread, NULL, sender_main, p) != 0)
        return -EAGAIN;
    p->running = 1;
    return 0;
}

void hn_push_stop(struct hn_push *p, double flush_s)
{
    if (!p->running)
        return;
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->deadline_ns, hn_mono_ns() + (uint64_t)(flush_s > 0 ? flush_s * 1e9 : 0));
    atomic_store(&p->stopping, 1);
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    p->running = 0;
}

void hn_push_free(struct hn_push *p)
{
    if (!p)
        return;
    hn_push_stop(p, 0);
    if (p->curl)
        p->cu->easy_cleanup(p->curl);
    p->cu->slist_free_all(p->headers);
    for (unsigned i = 0; i < p->max; i++)
        hn_buf_fini(&p->slots[i].buf);
    free(p->slots);
    hn_buf_fini(&p->sending);
    hn_push_builder_fini(&p->builder);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    explicit_bzero(p->token, sizeof(p->token));
    free(p);
}

void hn_push_get_stats(struct hn_push *p, struct hn_push_stats *st)
{
    pthread_mutex_lock(&p->lock);
    *st = p->st;
    st->queued = p->count;
    pthread_mutex_unlock(&p->lock);
}

void hn_push_render(struct hn_push *p, struct hn_expo *e)
{
    struct hn_push_stats st;
    hn_push_get_stats(p, &st);
    static const struct {
        const char *name, *help;
        enum hn_metric_type type;
        size_t off;
    } plain[] = {
        {"houston_agent_push_frames_total", "Frames built for the controller and queued.",
         HN_COUNTER, offsetof(struct hn_push_stats, frames)},
        {"houston_agent_push_sent_total", "Frames the controller accepted (HTTP 2xx).", HN_COUNTER,
         offsetof(struct hn_push_stats, sent)},
        {"houston_agent_push_dropped_total",
         "Frames dropped unsent because the queue (push-queue) was full.", HN_COUNTER,
         offsetof(struct hn_push_stats, dropped)},
        {"houston_agent_push_errors_total",
         "Sends that failed and are retried (no answer, 5xx, 408, 429).", HN_COUNTER,
         offsetof(struct hn_push_stats, errors)},
        {"houston_agent_push_build_errors_total", "Frames that could not be built or queued.",
         HN_COUNTER, offsetof(struct hn_push_stats, build_errors)},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(plain); i++) {
        uint64_t v;
        memcpy(&v, (const char *)&st + plain[i].off, sizeof(v));
        hn_expo_family(e, plain[i].name, plain[i].help, plain[i].type);
        hn_expo_sample(e, plain[i].name, NULL, (double)v);
    }
    hn_expo_family(e, "houston_agent_push_refused_total",
                   "Frames the controller refused for good (HTTP 4xx but 408 and 429), by status.",
                   HN_COUNTER);
    for (unsigned c = 0; c < HN_ARRAY_LEN(st.refused_by_code); c++) {
        if (!st.refused_by_code[c])
            continue;
        char labels[32];
        snprintf(labels, sizeof(labels), "code=\"%u\"", 400 + c);
        hn_expo_sample(e, "houston_agent_push_refused_total", labels,
                       (double)st.refused_by_code[c]);
    }
    hn_expo_family(e, "houston_agent_push_queue_frames",
                   "Frames waiting to be sent, the one being sent included.", HN_GAUGE);
    hn_expo_sample(e, "houston_agent_push_queue_frames", NULL, st.queued);
    hn_expo_family(e, "houston_agent_push_last_success_timestamp_seconds",
                   "Unix time the controller last accepted a frame, 0 before the first.", HN_GAUGE);
    hn_expo_sample(e, "houston_agent_push_last_success_timestamp_seconds", NULL, st.last_success);
}
