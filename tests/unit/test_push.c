/*
 * test_push.c - the agent's push to the controller (agent/push.h): a frame built from the fake
 * NVML's GPUs, a kernel-log Xid and the H100 sysfs fixture's IB ports decodes
 * (common/frame.h) back to the values the collectors hold; GPU identities go out on the first
 * frame, after a change, on request and every HN_PUSH_IDENTITY_EVERY frames; the queue keeps
 * the newest push-queue frames; and the sender, against a small HTTP server on 127.0.0.1
 * (common/http.h) that fails the first requests, delivers every frame once, in order, with the
 * token, and drops what the server refuses (401). Also the token file and PCI id parsing.
 */
#include "testutil.h"

#include "agent/config.h"
#include "agent/gpu.h"
#include "agent/ib.h"
#include "agent/push.h"
#include "agent/steps.h"
#include "agent/xidlog.h"
#include "common/frame.h"
#include "common/http.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>

/* ---- decoding a frame into plain arrays -------------------------------------------------- */

#define MAX_XIDS  16
#define MAX_PORTS 16
#define MAX_STEPS 8

struct decoded {
    struct hn_frame_header h;
    char node[256], model[128];
    unsigned gpus;
    unsigned ngpu_records;
    char uuid[HN_MAX_GPUS][128];
    double v[HN_MAX_GPUS][HN_F_COUNT];
    unsigned nsamples;
    double link[HN_MAX_GPUS][NVML_NVLINK_MAX_LINKS][HN_L_COUNT];
    unsigned nlink_samples;
    struct {
        unsigned gpu, code, kind;
        uint64_t time_ns;
        char pci[64];
    } xid[MAX_XIDS];
    unsigned nxid;
    struct {
        char device[64];
        unsigned port, state, phys_state;
        double rate;
        uint64_t downed, symbol, recovery;
    } ib[MAX_PORTS];
    unsigned nib;
    struct {
        char job[64];
        uint32_t rank, local_rank, world, uid;
        unsigned gpu, pause;
        uint64_t step, time_ns, checkpoint;
        double seconds, tokens;
    } step[MAX_STEPS];
    unsigned nstep;
};

static void copy_str(char *dst, size_t size, struct hn_frame_str s)
{
    assert_true(s.len < size);
    memcpy(dst, s.p, s.len);
    dst[s.len] = '\0';
}

static int d_header(void *ctx, const struct hn_frame_header *h)
{
    ((struct decoded *)ctx)->h = *h;
    return 0;
}

static int d_node(void *ctx, struct hn_frame_str name, unsigned gpus, struct hn_frame_str model)
{
    struct decoded *d = ctx;
    copy_str(d->node, sizeof(d->node), name);
    copy_str(d->model, sizeof(d->model), model);
    d->gpus = gpus;
    return 0;
}

static int d_gpu(void *ctx, unsigned gpu, struct hn_frame_str uuid, struct hn_frame_str pci,
                 struct hn_frame_str model)
{
    struct decoded *d = ctx;
    (void)pci;
    (void)model;
    copy_str(d->uuid[gpu], sizeof(d->uuid[gpu]), uuid);
    d->ngpu_records++;
    return 0;
}

static int d_samples(void *ctx, unsigned gpu, const struct hn_frame_field *f, unsigned n)
{
    struct decoded *d = ctx;
    for (unsigned i = 0; i < n; i++) {
        assert_true(f[i].field < HN_F_COUNT);
        d->v[gpu][f[i].field] = f[i].value;
        d->nsamples++;
    }
    return 0;
}

static int d_link(void *ctx, unsigned gpu, unsigned link, const struct hn_frame_field *f,
                  unsigned n)
{
    struct decoded *d = ctx;
    assert_true(link < NVML_NVLINK_MAX_LINKS);
    for (unsigned i = 0; i < n; i++) {
        assert_true(f[i].field < HN_L_COUNT);
        d->link[gpu][link][f[i].field] = f[i].value;
        d->nlink_samples++;
    }
    return 0;
}

static int d_xid(void *ctx, const struct hn_frame_xid *x)
{
    struct decoded *d = ctx;
    assert_true(d->nxid < MAX_XIDS);
    d->xid[d->nxid].gpu = x->gpu;
    d->xid[d->nxid].code = x->code;
    d->xid[d->nxid].kind = x->kind;
    d->xid[d->nxid].time_ns = x->time_ns;
    copy_str(d->xid[d->nxid].pci, sizeof(d->xid[0].pci), x->pci);
    d->nxid++;
    return 0;
}

static int d_ibport(void *ctx, const struct hn_frame_ibport *p)
{
    struct decoded *d = ctx;
    assert_true(d->nib < MAX_PORTS);
    copy_str(d->ib[d->nib].device, sizeof(d->ib[0].device), p->device);
    d->ib[d->nib].port = p->port;
    d->ib[d->nib].state = p->state;
    d->ib[d->nib].phys_state = p->phys_state;
    d->ib[d->nib].rate = p->rate_gbps;
    d->ib[d->nib].downed = p->link_downed;
    d->ib[d->nib].symbol = p->symbol_errors;
    d->ib[d->nib].recovery = p->link_error_recovery;
    d->nib++;
    return 0;
}

static int d_step(void *ctx, const struct hn_frame_step *f)
{
    struct decoded *d = ctx;
    assert_true(d->nstep < MAX_STEPS);
    copy_str(d->step[d->nstep].job, sizeof(d->step[0].job), f->job);
    d->step[d->nstep].rank = f->rank;
    d->step[d->nstep].local_rank = f->local_rank;
    d->step[d->nstep].world = f->world;
    d->step[d->nstep].uid = f->uid;
    d->step[d->nstep].gpu = f->gpu;
    d->step[d->nstep].pause = f->pause;
    d->step[d->nstep].step = f->step;
    d->step[d->nstep].time_ns = f->time_ns;
    d->step[d->nstep].checkpoint = f->checkpoint;
    d->step[d->nstep].seconds = f->seconds;
    d->step[d->nstep].tokens = f->tokens;
    d->nstep++;
    return 0;
}

static const struct hn_frame_sink sink = {d_header, d_node, d_gpu,    d_samples,
                                          d_link,   d_xid,  d_ibport, d_step};

/* Decodes frame[0..len) into *d (cleared first: values that were not sent stay NaN). */
static void decode(const void *frame, size_t len, struct decoded *d)
{
    memset(d, 0, sizeof(*d));
    for (unsigned g = 0; g < HN_MAX_GPUS; g++) {
        for (unsigned f = 0; f < HN_F_COUNT; f++)
            d->v[g][f] = NAN;
        for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
            for (unsigned f = 0; f < HN_L_COUNT; f++)
                d->link[g][l][f] = NAN;
        }
    }
    char err[256] = "";
    int rc = hn_frame_decode(frame, len, HN_FRAME_MAX, &sink, d, err, sizeof(err));
    if (rc != 0)
        fail_msg("hn_frame_decode: %d %s", rc, err);
}

/* The same double, NaN included. */
static void assert_same(double want, double got)
{
    if (isnan(want))
        assert_true(isnan(got));
    else
        assert_true(want == got);
}

/* ---- building frames from the collectors ------------------------------------------------- */

struct sources {
    struct hn_gpu_set *gpus;
    void *xid, *ib;
    struct hn_agent_config cfg;
    char kmsg[PATH_MAX], state[PATH_MAX];
};

static void sources_open(struct sources *s, const char *nvml_state)
{
    const char *lib = getenv("HN_FAKENVML");
    if (!lib || !*lib)
        fail_msg("HN_FAKENVML is not set (run through ctest)");
    hn_agent_config_defaults(&s->cfg);
    tu_write_in(s->state, sizeof(s->state), tu_tmpdir(), "nvml.state", nvml_state);
    assert_int_equal(setenv("HN_FAKENVML_STATE", s->state, 1), 0);
    s->gpus = xmalloc(sizeof(*s->gpus));
    hn_gpus_init(s->gpus, lib, "pushhost");
    assert_int_equal(s->gpus->open, 1);
    assert_int_equal(hn_gpus_events_start(s->gpus), 0);

    tu_write_in(s->kmsg, sizeof(s->kmsg), tu_tmpdir(), "kmsg", "");
    hn_strlcpy(s->cfg.kmsg, s->kmsg, sizeof(s->cfg.kmsg));
    assert_int_equal(hn_collector_xid.init(&s->cfg, &s->xid), 0);
    char sysfs[PATH_MAX];
    hn_strlcpy(s->cfg.sysfs_root, tu_fixture(sysfs, sizeof(sysfs), "sysfs-h100"),
               sizeof(s->cfg.sysfs_root));
    assert_int_equal(hn_collector_ib.init(&s->cfg, &s->ib), 0);
}

static void sources_collect(struct sources *s)
{
    assert_int_equal(hn_gpus_collect(s->gpus), 0);
    assert_int_equal(hn_collector_xid.collect(s->xid), 0);
    assert_int_equal(hn_collector_ib.collect(s->ib), 0);
}

static void sources_close(struct sources *s)
{
    hn_gpus_fini(s->gpus);
    free(s->gpus);
    hn_collector_xid.fini(s->xid);
    hn_collector_ib.fini(s->ib);
}

static const struct hn_push_sources *as_push(const struct sources *s)
{
    static struct hn_push_sources ps;
    ps = (struct hn_push_sources){"pushhost", s->gpus, s->xid, s->ib, NULL, 0};
    return &ps;
}

static void test_frame_decodes_to_collected_values(void **unused)
{
    (void)unused;
    struct sources s;
    sources_open(&s, "gpu 4 temp 71\ngpu 6 nvlink 3 down\n");
    sources_collect(&s);

    struct hn_push_builder b;
    hn_push_builder_init(&b, 0x1234abcd);
    assert_int_equal(hn_push_build(&b, as_push(&s), 1764496000123456789ull), 0);
    struct decoded *d = xcalloc(1, sizeof(*d));
    decode(b.frame.data, b.frame.len, d);

    assert_true(d->h.boot_id == 0x1234abcd);
    assert_true(d->h.seq == 1);
    assert_true(d->h.time_ns == 1764496000123456789ull);
    assert_string_equal(d->node, "pushhost");
    assert_int_equal(d->gpus, 8);
    assert_string_equal(d->model, "NVIDIA H100 80GB HBM3");
    assert_int_equal(d->ngpu_records, 8);
    unsigned want_samples = 0, want_links = 0;
    for (unsigned g = 0; g < 8; g++) {
        const struct hn_gpu *gpu = &s.gpus->gpus[g];
        assert_string_equal(d->uuid[g], gpu->uuid);
        for (unsigned f = 0; f < HN_F_COUNT; f++) {
            assert_same(gpu->v[f], d->v[g][f]);
            want_samples += !isnan(gpu->v[f]);
        }
        for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
            for (unsigned f = 0; f < HN_L_COUNT; f++) {
                assert_same(l < gpu->nlinks ? gpu->link[l][f] : NAN, d->link[g][l][f]);
                want_links += l < gpu->nlinks && !isnan(gpu->link[l][f]);
            }
        }
    }
    assert_int_equal(d->nsamples, want_samples);
    assert_int_equal(d->nlink_samples, want_links);
    assert_true(d->v[4][HN_F_GPU_TEMP] == 71);
    assert_true(d->v[0][HN_F_GPU_UP] == 1);
    assert_true(d->link[6][3][HN_L_UP] == 0);
    assert_true(d->link[6][2][HN_L_UP] == 1);
    assert_int_equal(d->nxid, 0);

    /* Every IB port of the fixture, as the collector read it. */
    int nports = hn_ib_collector_nports(s.ib);
    assert_true(nports > 0);
    assert_int_equal(d->nib, nports);
    for (int i = 0; i < nports; i++) {
        const struct hn_ib_port *p = hn_ib_collector_port(s.ib, i);
        assert_string_equal(d->ib[i].device, p->device);
        assert_int_equal(d->ib[i].port, strtoul(p->port, NULL, 10));
        assert_int_equal(d->ib[i].state, p->state);
        assert_int_equal(d->ib[i].phys_state, p->phys_state);
        assert_same(p->rate_gbps, d->ib[i].rate);
        assert_true(d->ib[i].downed == p->link_downed);
        double sym = hn_ib_collector_counter(s.ib, i, "symbol_error");
        assert_true(d->ib[i].symbol == (isnan(sym) ? 0 : (uint64_t)sym));
    }

    /* The second frame: identities unchanged, so no GPU records; samples again. */
    assert_int_equal(hn_push_build(&b, as_push(&s), 2), 0);
    decode(b.frame.data, b.frame.len, d);
    assert_true(d->h.seq == 2);
    assert_int_equal(d->ngpu_records, 0);
    assert_int_equal(d->nsamples, want_samples);

    /* Xids: one through NVML (GPU 2), one in the kernel log for GPU 5's bus id (0xA8), one
     * SXid from an NVSwitch (no GPU). */
    tu_fakenvml_change(s.state, "gpu 4 temp 71\ngpu 6 nvlink 3 down\ngpu 2 xid 79 id=1\n");
    FILE *k = fopen(s.kmsg, "a");
    assert_non_null(k);
    fprintf(k, "[ 12.5] NVRM: Xid (PCI:0000:a8:00): 48, pid=1, DBE\n");
    fprintf(k, "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32\n");
    assert_int_equal(fclose(k), 0);
    for (int tries = 0; tries < 500 && s.gpus->gpus[2].xid_events == 0; tries++) {
        tu_sleep_ms(20);
        assert_int_equal(hn_gpus_collect(s.gpus), 0);
    }
    assert_true(s.gpus->gpus[2].xid_events == 1);
    assert_int_equal(hn_collector_xid.collect(s.xid), 0);
    assert_int_equal(hn_push_build(&b, as_push(&s), 3), 0);
    decode(b.frame.data, b.frame.len, d);
    assert_int_equal(d->nxid, 3);
    assert_int_equal(d->xid[0].gpu, 2);
    assert_int_equal(d->xid[0].code, 79);
    assert_int_equal(d->xid[0].kind, 1);
    assert_string_equal(d->xid[0].pci, s.gpus->gpus[2].pci_bus_id);
    assert_true(d->xid[0].time_ns == 3);
    assert_int_equal(d->xid[1].gpu, 5);
    assert_int_equal(d->xid[1].code, 48);
    assert_int_equal(d->xid[1].kind, 1);
    assert_string_equal(d->xid[1].pci, "PCI:0000:a8:00");
    assert_true(d->xid[1].time_ns > 0);
    assert_int_equal(d->xid[2].gpu, HN_FRAME_NO_GPU);
    assert_int_equal(d->xid[2].code, 12028);
    assert_int_equal(d->xid[2].kind, 2);
    assert_true(d->v[2][HN_F_XID_EVENTS] == 1);

    /* Nothing new: no Xid records in the next frame. */
    sources_collect(&s);
    assert_int_equal(hn_push_build(&b, as_push(&s), 4), 0);
    decode(b.frame.data, b.frame.len, d);
    assert_int_equal(d->nxid, 0);

    /* A lost GPU: its identity stays known; GPU_UP 0 travels. */
    tu_fakenvml_change(s.state, "gpu 1 lost\n");
    (void)hn_gpus_collect(s.gpus);
    assert_int_equal(hn_push_build(&b, as_push(&s), 5), 0);
    decode(b.frame.data, b.frame.len, d);
    assert_true(d->v[1][HN_F_GPU_UP] == 0);
    assert_true(d->v[0][HN_F_GPU_UP] == 1);

    free(d);
    hn_push_builder_fini(&b);
    sources_close(&s);
}

static void test_identity_repeats(void **unused)
{
    (void)unused;
    struct sources s;
    sources_open(&s, "");
    sources_collect(&s);
    struct hn_push_builder b;
    hn_push_builder_init(&b, 0);
    assert_true(b.boot_id != 0);
    struct decoded *d = xcalloc(1, sizeof(*d));
    unsigned with_identity = 0;
    for (unsigned i = 1; i <= 2 * HN_PUSH_IDENTITY_EVERY + 2; i++) {
        assert_int_equal(hn_push_build(&b, as_push(&s), i), 0);
        decode(b.frame.data, b.frame.len, d);
        assert_true(d->h.seq == i);
        assert_true(d->ngpu_records == 0 || d->ngpu_records == 8);
        with_identity += d->ngpu_records == 8;
    }
    /* The first frame and once every HN_PUSH_IDENTITY_EVERY after it. */
    assert_int_equal(with_identity, 3);
    hn_push_builder_resend_identity(&b);
    assert_int_equal(hn_push_build(&b, as_push(&s), 1000), 0);
    decode(b.frame.data, b.frame.len, d);
    assert_int_equal(d->ngpu_records, 8);

    /* A frame without any source still decodes. */
    struct hn_push_sources none = {"bare", NULL, NULL, NULL, NULL, 0};
    assert_int_equal(hn_push_build(&b, &none, 1), 0);
    decode(b.frame.data, b.frame.len, d);
    assert_int_equal(d->gpus, 0);
    assert_string_equal(d->node, "bare");
    free(d);
    hn_push_builder_fini(&b);
    sources_close(&s);
}

/* A cycle's step reports become STEP and PAUSE records in order, each rank on its GPU: gpu=
 * when given, else its local rank when the node has that GPU, else none. */
static void test_steps_are_sent(void **unused)
{
    (void)unused;
    struct sources s;
    sources_open(&s, "");
    sources_collect(&s);
    struct hn_steps_report r[4];
    for (unsigned i = 0; i < 4; i++) {
        hn_stepmsg_clear(&r[i].msg);
        snprintf(r[i].msg.job, sizeof(r[i].msg.job), "j%u", i);
        r[i].msg.rank = 10 + i;
        r[i].msg.step = 100 + i;
        r[i].msg.seconds = 0.5;
        r[i].time_ns = 1000 + i;
        r[i].uid = 1000;
    }
    r[0].msg.local_rank = 5; /* on GPU 5 */
    r[0].msg.world = 32;
    r[0].msg.tokens = 4096;
    r[0].msg.checkpoint = 90;
    r[1].msg.local_rank = 9; /* the node has 8 GPUs: not mapped */
    r[2].msg.local_rank = 1; /* gpu= wins */
    r[2].msg.gpu = 6;
    r[3].msg.pause = HN_PAUSE_CHECKPOINT;
    r[3].uid = HN_FRAME_NO_U32;
    struct hn_push_sources src = *as_push(&s);
    src.steps = r;
    src.nsteps = 4;
    struct hn_push_builder b;
    hn_push_builder_init(&b, 0);
    struct decoded *d = xcalloc(1, sizeof(*d));
    assert_int_equal(hn_push_build(&b, &src, 7), 0);
    decode(b.frame.data, b.frame.len, d);
    assert_int_equal(d->nstep, 4);
    for (unsigned i = 0; i < 4; i++) {
        char job[8];
        snprintf(job, sizeof(job), "j%u", i);
        assert_string_equal(d->step[i].job, job);
        assert_int_equal(d->step[i].rank, 10 + i);
        assert_int_equal(d->step[i].step, 100 + i);
        assert_int_equal(d->step[i].time_ns, 1000 + i);
    }
    assert_int_equal(d->step[0].gpu, 5);
    assert_int_equal(d->step[0].local_rank, 5);
    assert_int_equal(d->step[0].world, 32);
    assert_true(d->step[0].seconds == 0.5 && d->step[0].tokens == 4096);
    assert_int_equal(d->step[0].checkpoint, 90);
    assert_int_equal(d->step[0].uid, 1000);
    assert_int_equal(d->step[0].pause, 0);
    assert_int_equal(d->step[1].gpu, HN_FRAME_NO_GPU);
    assert_int_equal(d->step[1].world, HN_FRAME_NO_U32);
    assert_int_equal(d->step[1].checkpoint, HN_FRAME_NO_U64);
    assert_true(isnan(d->step[1].tokens));
    assert_int_equal(d->step[2].gpu, 6);
    assert_int_equal(d->step[3].pause, HN_PAUSE_CHECKPOINT);
    assert_int_equal(d->step[3].uid, HN_FRAME_NO_U32);
    /* No reports: no records. */
    src.nsteps = 0;
    assert_int_equal(hn_push_build(&b, &src, 8), 0);
    decode(b.frame.data, b.frame.len, d);
    assert_int_equal(d->nstep, 0);
    free(d);
    hn_push_builder_fini(&b);
    sources_close(&s);
}

/* ---- a controller stand-in --------------------------------------------------------------- */

#define MAX_SEEN 256

struct server {
    pthread_mutex_t lock;
    int fail_first; /* answer 503 to this many requests first */
    int requests;   /* requests received */
    const char *token;
    uint64_t seqs[MAX_SEEN]; /* seq of each frame accepted (2xx), in arrival order */
    unsigned nseqs;
    uint64_t boot_id;
    int bad_type, bad_frame;
    int hold; /* requests wait while this is set (released by server_release) */
    pthread_cond_t released;
    struct hn_http *http;
    char url[64];
};

static int s_header(void *ctx, const struct hn_frame_header *h)
{
    struct server *s = ctx;
    s->boot_id = h->boot_id;
    assert_true(s->nseqs < MAX_SEEN);
    s->seqs[s->nseqs++] = h->seq;
    return 0;
}

static void serve_ingest(void *ctx, const char *url, struct hn_http_reply *reply)
{
    struct server *s = ctx;
    (void)url;
    pthread_mutex_lock(&s->lock);
    s->requests++;
    for (int i = 0; s->hold && i < 100; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->released, &s->lock, &ts);
    }
    const char *ct = hn_http_header(reply->req, "Content-Type");
    const char *auth = hn_http_header(reply->req, "Authorization");
    char want[128];
    snprintf(want, sizeof(want), "Bearer %s", s->token);
    if (!ct || strcmp(ct, HN_PUSH_CONTENT_TYPE) != 0)
        s->bad_type++;
    if (s->fail_first > 0) {
        s->fail_first--;
        reply->status = 503;
        hn_buf_puts(&reply->body, "{\"error\": \"starting\"}");
    } else if (!auth || strcmp(auth, want) != 0) {
        reply->status = 401;
        hn_buf_puts(&reply->body, "{\"error\": \"bad token\"}");
    } else {
        struct hn_frame_sink only_header = {.header = s_header};
        if (hn_frame_decode(reply->req->body, reply->req->body_len, HN_FRAME_MAX, &only_header, s,
                            NULL, 0) != 0) {
            s->bad_frame++;
            reply->status = 400;
        } else {
            reply->status = 200;
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static const struct hn_http_route server_routes[] = {{"POST", "/v1/ingest", serve_ingest, 0}};

static void server_start(struct server *s, const char *token, int fail_first)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->released, NULL);
    s->token = token;
    s->fail_first = fail_first;
    char err[256];
    s->http = hn_http_start("127.0.0.1:0", server_routes, HN_ARRAY_LEN(server_routes), s, err,
                            sizeof(err));
    if (!s->http)
        fail_msg("hn_http_start: %s", err);
    hn_http_set_max_body(s->http, HN_FRAME_MAX);
    snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%u/", hn_http_port(s->http));
}

static void server_stop(struct server *s)
{
    hn_http_stop(s->http);
    pthread_cond_destroy(&s->released);
    pthread_mutex_destroy(&s->lock);
}

static int server_requests(struct server *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->requests;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static struct hn_push *push_new(const char *url, const char *token, unsigned queue_max)
{
    struct hn_push_config pc = {
        .url = url,
        .token = token,
        .queue_max = queue_max,
        .backoff_min_s = 0.01,
        .backoff_max_s = 0.04,
        .connect_timeout_s = 2,
        .timeout_s = 5,
        .boot_id = 77,
    };
    char err[256] = "";
    struct hn_push *p = hn_push_new(&pc, err, sizeof(err));
    if (!p)
        fail_msg("hn_push_new: %s", err);
    return p;
}

/* Queues n frames with seqs following the builder's (no sources: a bare NODE). */
static void queue_frames(struct hn_push *p, struct hn_push_builder *b, unsigned n)
{
    struct hn_push_sources none = {"n1", NULL, NULL, NULL, NULL, 0};
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(hn_push_build(b, &none, i), 0);
        assert_int_equal(hn_push_enqueue(p, b->frame.data, b->frame.len), 0);
    }
}

/* Waits up to 10 s for the push's counters to satisfy sent + refused == n and an empty queue. */
static void wait_done(struct hn_push *p, uint64_t n, struct hn_push_stats *st)
{
    for (int i = 0; i < 1000; i++) {
        hn_push_get_stats(p, st);
        if (st->sent + st->refused == n && st->queued == 0)
            return;
        tu_sleep_ms(10);
    }
    fail_msg("after 10 s: sent %llu refused %llu queued %u, want %llu done",
             (unsigned long long)st->sent, (unsigned long long)st->refused, st->queued,
             (unsigned long long)n);
}

/* Renders the push metrics into out (caller frees) and checks the exposition's shape. */
static void render_push(struct hn_push *p, struct hn_buf *out)
{
    hn_buf_init(out, 1 << 20);
    struct hn_expo e;
    hn_expo_init(&e, out);
    hn_push_render(p, &e);
    tu_check_exposition(out->data);
}

static void test_sender_retries_in_order(void **unused)
{
    (void)unused;
    struct server s;
    server_start(&s, "s3cret", 4);
    struct hn_push *p = push_new(s.url, "s3cret", 64);
    struct hn_push_builder b;
    hn_push_builder_init(&b, 77);
    /* Queued before the sender starts, then more while it works through the 503s. */
    queue_frames(p, &b, 10);
    assert_int_equal(hn_push_start(p), 0);
    queue_frames(p, &b, 10);
    struct hn_push_stats st;
    wait_done(p, 20, &st);
    assert_true(st.sent == 20);
    assert_true(st.frames == 20);
    assert_true(st.errors == 4);
    assert_true(st.refused == 0 && st.dropped == 0);
    assert_true(st.last_success > 1.7e9);

    pthread_mutex_lock(&s.lock);
    assert_int_equal(s.requests, 24);
    assert_int_equal(s.nseqs, 20);
    for (unsigned i = 0; i < s.nseqs; i++)
        assert_true(s.seqs[i] == i + 1);
    assert_true(s.boot_id == 77);
    assert_int_equal(s.bad_type, 0);
    assert_int_equal(s.bad_frame, 0);
    pthread_mutex_unlock(&s.lock);

    struct hn_buf out;
    render_push(p, &out);
    assert_non_null(strstr(out.data, "houston_agent_push_sent_total 20\n"));
    assert_non_null(strstr(out.data, "houston_agent_push_errors_total 4\n"));
    assert_non_null(strstr(out.data, "houston_agent_push_queue_frames 0\n"));
    hn_buf_fini(&out);

    hn_push_free(p);
    hn_push_builder_fini(&b);
    server_stop(&s);
}

static void test_queue_drops_oldest(void **unused)
{
    (void)unused;
    struct server s;
    server_start(&s, "tok", 0);
    struct hn_push *p = push_new(s.url, "tok", 3);
    struct hn_push_builder b;
    hn_push_builder_init(&b, 5);
    queue_frames(p, &b, 5);
    struct hn_push_stats st;
    hn_push_get_stats(p, &st);
    assert_true(st.frames == 5);
    assert_true(st.dropped == 2);
    assert_int_equal(st.queued, 3);

    assert_int_equal(hn_push_start(p), 0);
    wait_done(p, 3, &st);
    pthread_mutex_lock(&s.lock);
    assert_int_equal(s.nseqs, 3);
    assert_true(s.seqs[0] == 3 && s.seqs[1] == 4 && s.seqs[2] == 5);
    pthread_mutex_unlock(&s.lock);

    struct hn_buf out;
    render_push(p, &out);
    assert_non_null(strstr(out.data, "houston_agent_push_dropped_total 2\n"));
    assert_non_null(strstr(out.data, "houston_agent_push_frames_total 5\n"));
    hn_buf_fini(&out);
    hn_push_free(p);
    hn_push_builder_fini(&b);
    server_stop(&s);
}

/* A full queue whose oldest frame is on the wire drops the one after it, so the frame in
 * flight is removed by its own answer and nothing is sent twice or skipped. */
static void test_drop_spares_frame_in_flight(void **unused)
{
    (void)unused;
    struct server s;
    server_start(&s, "tok", 0);
    s.hold = 1;
    struct hn_push *p = push_new(s.url, "tok", 2);
    struct hn_push_builder b;
    hn_push_builder_init(&b, 5);
    assert_int_equal(hn_push_start(p), 0);
    queue_frames(p, &b, 1);
    for (int i = 0; i < 500 && server_requests(&s) == 0; i++)
        tu_sleep_ms(10);
    assert_int_equal(server_requests(&s), 1); /* seq 1 is in flight, held by the server */
    queue_frames(p, &b, 3);                   /* seqs 2, 3, 4: 2 and 3 are dropped */
    struct hn_push_stats st;
    hn_push_get_stats(p, &st);
    assert_true(st.dropped == 2);
    assert_int_equal(st.queued, 2);
    pthread_mutex_lock(&s.lock);
    s.hold = 0;
    pthread_cond_broadcast(&s.released);
    pthread_mutex_unlock(&s.lock);
    wait_done(p, 2, &st);
    pthread_mutex_lock(&s.lock);
    assert_int_equal(s.nseqs, 2);
    assert_true(s.seqs[0] == 1 && s.seqs[1] == 4);
    pthread_mutex_unlock(&s.lock);
    hn_push_free(p);
    hn_push_builder_fini(&b);
    server_stop(&s);
}

static void test_wrong_token_is_refused(void **unused)
{
    (void)unused;
    struct server s;
    server_start(&s, "right", 0);
    struct hn_push *p = push_new(s.url, "wrong", 16);
    struct hn_push_builder b;
    hn_push_builder_init(&b, 9);
    queue_frames(p, &b, 3);
    assert_int_equal(hn_push_start(p), 0);
    struct hn_push_stats st;
    wait_done(p, 3, &st);
    assert_true(st.refused == 3);
    assert_true(st.refused_by_code[401 - 400] == 3);
    assert_true(st.sent == 0);
    assert_true(st.last_success == 0);

    struct hn_buf out;
    render_push(p, &out);
    assert_non_null(strstr(out.data, "houston_agent_push_refused_total{code=\"401\"} 3\n"));
    hn_buf_fini(&out);
    hn_push_free(p);
    hn_push_builder_fini(&b);
    pthread_mutex_lock(&s.lock);
    assert_int_equal(s.nseqs, 0);
    pthread_mutex_unlock(&s.lock);
    server_stop(&s);
}

/* Nothing listens: frames stay queued, errors count, and stop returns within its bound. */
static void test_unreachable_keeps_frames(void **unused)
{
    (void)unused;
    int port_fd;
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", tu_closed_port(&port_fd));
    struct hn_push *p = push_new(url, "tok", 8);
    struct hn_push_builder b;
    hn_push_builder_init(&b, 1);
    queue_frames(p, &b, 4);
    assert_int_equal(hn_push_start(p), 0);
    struct hn_push_stats st;
    for (int i = 0; i < 2000; i++) {
        hn_push_get_stats(p, &st);
        if (st.errors >= 3)
            break;
        tu_sleep_ms(10);
    }
    assert_true(st.errors >= 3);
    assert_int_equal(st.queued, 4);
    assert_true(st.sent == 0);
    uint64_t t0 = hn_mono_ns();
    hn_push_stop(p, 0.2);
    assert_true(hn_mono_ns() - t0 < 5000000000ull);
    hn_push_get_stats(p, &st);
    assert_int_equal(st.queued, 4);
    hn_push_free(p);
    hn_push_builder_fini(&b);
    close(port_fd);
}

static void test_new_refuses_bad_settings(void **unused)
{
    (void)unused;
    char err[256];
    struct hn_push_config pc = {.url = "ftp://x", .token = "t", .queue_max = 1};
    assert_null(hn_push_new(&pc, err, sizeof(err)));
    assert_non_null(strstr(err, "http"));
    pc.url = "http://x";
    pc.token = "two words";
    assert_null(hn_push_new(&pc, err, sizeof(err)));
    pc.token = "t";
    pc.queue_max = 0;
    assert_null(hn_push_new(&pc, err, sizeof(err)));
    pc.queue_max = 1;
    struct hn_push *p = hn_push_new(&pc, err, sizeof(err));
    assert_non_null(p);
    /* Never started: stop and free are fine. */
    hn_push_stop(p, 1);
    hn_push_free(p);
}

/* ---- token files and PCI ids ------------------------------------------------------------- */

static void test_token_file(void **unused)
{
    (void)unused;
    char path[PATH_MAX], tok[HN_PUSH_TOKEN_MAX], err[256];
    tu_write_in(path, sizeof(path), tu_tmpdir(), "token", "  abc-123_XYZ \nsecond line\n");
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(hn_push_read_token(path, tok, sizeof(tok), err, sizeof(err)), 0);
    assert_string_equal(tok, "abc-123_XYZ");
    tu_write_in(path, sizeof(path), tu_tmpdir(), "token", "no-newline");
    assert_int_equal(hn_push_read_token(path, tok, sizeof(tok), err, sizeof(err)), 0);
    assert_string_equal(tok, "no-newline");
    /* Readable by others: used, with a warning. */
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(hn_push_read_token(path, tok, sizeof(tok), err, sizeof(err)), 0);

    tu_write_in(path, sizeof(path), tu_tmpdir(), "token", "\n");
    assert_int_equal(hn_push_read_token(path, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "empty"));
    tu_write_in(path, sizeof(path), tu_tmpdir(), "token", "sec ret\n");
    assert_int_equal(hn_push_read_token(path, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
    assert_null(strstr(err, "sec"));
    char big[HN_PUSH_TOKEN_MAX + 10];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    tu_write_in(path, sizeof(path), tu_tmpdir(), "token", big);
    assert_int_equal(hn_push_read_token(path, tok, sizeof(tok), err, sizeof(err)), -E2BIG);
    assert_true(hn_push_read_token("/nonexistent/token", tok, sizeof(tok), err, sizeof(err)) ==
                -ENOENT);
    assert_int_equal(hn_push_read_token(tu_tmpdir(), tok, sizeof(tok), err, sizeof(err)), -EINVAL);
}

static void test_parse_pci(void **unused)
{
    (void)unused;
    unsigned d, b, v;
    assert_int_equal(hn_push_parse_pci("00000000:53:00.0", &d, &b, &v), 0);
    assert_true(d == 0 && b == 0x53 && v == 0);
    assert_int_equal(hn_push_parse_pci("PCI:0000:9b:00", &d, &b, &v), 0);
    assert_true(d == 0 && b == 0x9b && v == 0);
    assert_int_equal(hn_push_parse_pci("PCI:0001:CA:1f.7", &d, &b, &v), 0);
    assert_true(d == 1 && b == 0xca && v == 0x1f);
    assert_int_equal(hn_push_parse_pci("53:00.0", &d, &b, &v), 0);
    assert_true(d == 0 && b == 0x53 && v == 0);
    const char *bad[] = {"",
                         "PCI:",
                         "0000:53",
                         "0000:153:00",
                         "0000:53:20",
                         "0000:53:00.8",
                         "0000:53:00 ",
                         "x:53:00",
                         "000000000:53:00"};
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        if (hn_push_parse_pci(bad[i], &d, &b, &v) != -EINVAL)
            fail_msg("'%s' parsed", bad[i]);
    }
}

static void test_config_keys(void **unused)
{
    (void)unused;
    struct hn_agent_config cfg;
    char err[256];
    hn_agent_config_defaults(&cfg);
    assert_int_equal(cfg.push_queue, 360);
    assert_string_equal(cfg.controller, "");
    assert_int_equal(
        hn_agent_config_set(&cfg, "controller", "http://10.0.0.5:8080//", err, sizeof(err)), 0);
    assert_string_equal(cfg.controller, "http://10.0.0.5:8080");
    assert_int_equal(hn_agent_config_set(&cfg, "controller", "10.0.0.5:8080", err, sizeof(err)),
                     -1);
    assert_int_equal(hn_agent_config_set(&cfg, "controller", "http://h/x?y=1", err, sizeof(err)),
                     -1);
    assert_int_equal(hn_agent_config_set(&cfg, "controller", "http://", err, sizeof(err)), -1);
    assert_int_equal(hn_agent_config_set(&cfg, "controller", "", err, sizeof(err)), 0);
    assert_string_equal(cfg.controller, "");
    assert_int_equal(hn_agent_config_set(&cfg, "token-file", "/etc/t", err, sizeof(err)), 0);
    assert_string_equal(cfg.token_file, "/etc/t");
    assert_int_equal(hn_agent_config_set(&cfg, "push-queue", "5", err, sizeof(err)), 0);
    assert_int_equal(cfg.push_queue, 5);
    assert_int_equal(hn_agent_config_set(&cfg, "push-queue", "0", err, sizeof(err)), -1);
    assert_int_equal(hn_agent_config_set(&cfg, "push-queue", "1000001", err, sizeof(err)), -1);
    assert_int_equal(hn_agent_config_set(&cfg, "push-queue", "x", err, sizeof(err)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_decodes_to_collected_values),
        cmocka_unit_test(test_identity_repeats),
        cmocka_unit_test(test_steps_are_sent),
        cmocka_unit_test(test_sender_retries_in_order),
        cmocka_unit_test(test_queue_drops_oldest),
        cmocka_unit_test(test_drop_spares_frame_in_flight),
        cmocka_unit_test(test_wrong_token_is_refused),
        cmocka_unit_test(test_unreachable_keeps_frames),
        cmocka_unit_test(test_new_refuses_bad_settings),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test(test_parse_pci),
        cmocka_unit_test(test_config_keys),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
