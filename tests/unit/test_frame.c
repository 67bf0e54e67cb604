/*
 * test_frame.c - the agent-to-controller frame codec (src/common/frame.c): exact round trips of
 * every record type, how samples are grouped into records, the writer's cap and argument
 * checks, and the decoder's refusals (every truncation, bad header, bad strings and counts,
 * record order), all-or-nothing delivery and the worked example of docs/protocol.md.
 */
#include "testutil.h"

#include "common/fields.h"
#include "common/frame.h"

#include <errno.h>
#include <float.h>
#include <math.h>

/* ---- a sink that records everything it is given ---- */

struct field_ev {
    unsigned type, gpu, link, field;
    uint64_t bits;
};

struct rec_log {
    int header_calls, node_calls, gpu_calls, xid_calls, ib_calls, field_calls;
    int calls; /* all callbacks */
    struct hn_frame_header h;
    char node_name[256], node_model[256];
    unsigned node_gpus;
    unsigned gpu_idx[8];
    char gpu_uuid[8][256], gpu_pci[8][256], gpu_model[8][256];
    struct hn_frame_xid xid[8];
    char xid_pci[8][256];
    struct hn_frame_ibport ib[8];
    char ib_dev[8][256];
    struct field_ev *f; /* every field, in order */
    size_t nf, capf;
    unsigned chunk_max, chunks;
    int stop_at_call; /* > 0: the callback with this number (1-based) returns stop_rc */
    int stop_rc;
};

static void copy_str(char *dst, struct hn_frame_str s)
{
    assert_true(s.len <= HN_FRAME_STR_MAX);
    memcpy(dst, s.p, s.len);
    dst[s.len] = '\0';
}

static int counted(struct rec_log *l)
{
    l->calls++;
    return l->stop_at_call && l->calls == l->stop_at_call ? l->stop_rc : 0;
}

static int on_header(void *ctx, const struct hn_frame_header *h)
{
    struct rec_log *l = ctx;
    l->header_calls++;
    l->h = *h;
    return counted(l);
}

static int on_node(void *ctx, struct hn_frame_str name, unsigned gpus, struct hn_frame_str model)
{
    struct rec_log *l = ctx;
    l->node_calls++;
    copy_str(l->node_name, name);
    copy_str(l->node_model, model);
    l->node_gpus = gpus;
    return counted(l);
}

static int on_gpu(void *ctx, unsigned gpu, struct hn_frame_str uuid, struct hn_frame_str pci,
                  struct hn_frame_str model)
{
    struct rec_log *l = ctx;
    int i = l->gpu_calls++;
    assert_true(i < 8);
    l->gpu_idx[i] = gpu;
    copy_str(l->gpu_uuid[i], uuid);
    copy_str(l->gpu_pci[i], pci);
    copy_str(l->gpu_model[i], model);
    return counted(l);
}

static void add_fields(struct rec_log *l, unsigned type, unsigned gpu, unsigned link,
                       const struct hn_frame_field *f, unsigned n)
{
    assert_true(n >= 1 && n <= HN_FRAME_CHUNK);
    l->field_calls++;
    l->chunks++;
    if (n > l->chunk_max)
        l->chunk_max = n;
    if (l->nf + n > l->capf) {
        l->capf = (l->nf + n) * 2;
        l->f = xrealloc(l->f, l->capf * sizeof(*l->f));
    }
    for (unsigned i = 0; i < n; i++) {
        struct field_ev *e = &l->f[l->nf++];
        e->type = type;
        e->gpu = gpu;
        e->link = link;
        e->field = f[i].field;
        memcpy(&e->bits, &f[i].value, sizeof(e->bits));
    }
}

static int on_samples(void *ctx, unsigned gpu, const struct hn_frame_field *f, unsigned n)
{
    struct rec_log *l = ctx;
    add_fields(l, HN_REC_SAMPLES, gpu, 0, f, n);
    return counted(l);
}

static int on_link(void *ctx, unsigned gpu, unsigned link, const struct hn_frame_field *f,
                   unsigned n)
{
    struct rec_log *l = ctx;
    add_fields(l, HN_REC_LINK, gpu, link, f, n);
    return counted(l);
}

static int on_xid(void *ctx, const struct hn_frame_xid *x)
{
    struct rec_log *l = ctx;
    int i = l->xid_calls++;
    assert_true(i < 8);
    l->xid[i] = *x;
    copy_str(l->xid_pci[i], x->pci);
    return counted(l);
}

static int on_ibport(void *ctx, const struct hn_frame_ibport *p)
{
    struct rec_log *l = ctx;
    int i = l->ib_calls++;
    assert_true(i < 8);
    l->ib[i] = *p;
    copy_str(l->ib_dev[i], p->device);
    return counted(l);
}

static const struct hn_frame_sink log_sink = {
    .header = on_header,
    .node = on_node,
    .gpu = on_gpu,
    .samples = on_samples,
    .link = on_link,
    .xid = on_xid,
    .ibport = on_ibport,
};

static void log_init(struct rec_log *l)
{
    memset(l, 0, sizeof(*l));
}

static void log_fini(struct rec_log *l)
{
    free(l->f);
    l->f = NULL;
}

/* Decodes exactly len bytes from a heap copy of that size, so ASan catches any overread. */
static int decode(const void *data, size_t len, struct rec_log *l, char *err, size_t errsize)
{
    void *copy = xmalloc(len ? len : 1);
    if (len)
        memcpy(copy, data, len);
    int rc = hn_frame_decode(copy, len, HN_FRAME_MAX, &log_sink, l, err, errsize);
    free(copy);
    return rc;
}

static uint64_t bits_of(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof(b));
    return b;
}

/* ---- walking the wire bytes independently of the decoder ---- */

struct raw_rec {
    unsigned type;
    size_t len;
    unsigned gpu, link, n; /* SAMPLES/LINK */
};

static unsigned le16(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static size_t le32(const uint8_t *p)
{
    return (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
}

/* Lists the records of a frame the writer produced (trusted); returns how many. */
static size_t walk(const struct hn_buf *b, struct raw_rec *out, size_t max)
{
    const uint8_t *d = (const uint8_t *)b->data;
    size_t n = 0;
    for (size_t off = HN_FRAME_HEADER_LEN; off < b->len;) {
        assert_true(n < max);
        struct raw_rec *r = &out[n++];
        r->type = d[off];
        r->len = le32(d + off + 1);
        const uint8_t *p = d + off + 5;
        r->gpu = r->link = r->n = 0;
        if (r->type == HN_REC_SAMPLES) {
            r->gpu = le16(p);
            r->n = le16(p + 2);
            assert_int_equal(r->len, 4 + 10 * (size_t)r->n);
        } else if (r->type == HN_REC_LINK) {
            r->gpu = le16(p);
            r->link = le16(p + 2);
            r->n = le16(p + 4);
            assert_int_equal(r->len, 6 + 10 * (size_t)r->n);
        }
        off += 5 + r->len;
        assert_true(off <= b->len);
    }
    return n;
}

/* ---- building frames by hand, malformed ones included ---- */

struct raw {
    uint8_t b[4096];
    size_t n;
    size_t rec; /* offset of the open record */
};

static void raw_le(struct raw *r, uint64_t v, unsigned n)
{
    assert_true(r->n + n <= sizeof(r->b));
    for (unsigned i = 0; i < n; i++)
        r->b[r->n++] = (uint8_t)(v >> (8 * i));
}

static void raw_bytes(struct raw *r, const void *p, size_t n)
{
    assert_true(r->n + n <= sizeof(r->b));
    memcpy(r->b + r->n, p, n);
    r->n += n;
}

static void raw_str(struct raw *r, const char *s)
{
    raw_le(r, strlen(s), 2);
    raw_bytes(r, s, strlen(s));
}

static void raw_header(struct raw *r, unsigned version)
{
    r->n = 0;
    raw_bytes(r, HN_FRAME_MAGIC, 4);
    raw_le(r, version, 2);
    raw_le(r, 0, 2);
    raw_le(r, 7, 8);
    raw_le(r, 1, 8);
    raw_le(r, 1000, 8);
}

static void raw_open(struct raw *r, unsigned type)
{
    r->rec = r->n;
    raw_le(r, type, 1);
    raw_le(r, 0, 4);
}

/* Sets the open record's length to what was written since raw_open(). */
static void raw_close(struct raw *r)
{
    size_t len = r->n - r->rec - 5;
    for (unsigned i = 0; i < 4; i++)
        r->b[r->rec + 1 + i] = (uint8_t)(len >> (8 * i));
}

static void raw_node(struct raw *r, unsigned gpus)
{
    raw_open(r, HN_REC_NODE);
    raw_str(r, "node1");
    raw_le(r, gpus, 2);
    raw_str(r, "H100");
    raw_close(r);
}

static void raw_end(struct raw *r)
{
    raw_open(r, HN_REC_END);
    raw_close(r);
}

static void raw_samples(struct raw *r, unsigned gpu, unsigned n)
{
    raw_open(r, HN_REC_SAMPLES);
    raw_le(r, gpu, 2);
    raw_le(r, n, 2);
    for (unsigned i = 0; i < n; i++) {
        raw_le(r, i, 2);
        raw_le(r, bits_of(i + 0.5), 8);
    }
    raw_close(r);
}

/* Expects data to be refused with rc and no callback; err must name a byte offset. */
static void expect_reject(const void *data, size_t len, int rc)
{
    struct rec_log l;
    log_init(&l);
    char err[160];
    int got = decode(data, len, &l, err, sizeof(err));
    if (got != rc)
        fail_msg("decode returned %d, expected %d (%s)", got, rc, err);
    assert_int_equal(l.calls, 0);
    assert_true(err[0] != '\0');
    if (rc != -E2BIG)
        assert_non_null(strstr(err, "byte "));
    log_fini(&l);
}

static void expect_ok(const void *data, size_t len, struct rec_log *l)
{
    char err[160];
    int rc = decode(data, len, l, err, sizeof(err));
    if (rc != 0)
        fail_msg("decode returned %d: %s", rc, err);
}

/* ---- a full frame with every record type ---- */

static const double specials[] = {
    0.0,
    -0.0,
    1.0,
    -1.5,
    45.25,
    1e300,
    -1e-300,
    DBL_MAX,
    DBL_MIN,
    4.9406564584124654e-324,
    INFINITY,
    -INFINITY,
    9007199254740993.0,
    123456789.123456789,
};

/* Writes the full frame into b; returns hn_frame_end()'s result. */
static int write_full_rc(struct hn_buf *b)
{
    struct hn_frame_writer w;
    hn_frame_begin(&w, b, 0xfedcba9876543210ull, 42, 1764460800123456789ull);
    hn_frame_node(&w, "gpu-node-017", 2, "NVIDIA H100 80GB HBM3");
    hn_frame_gpu(&w, 0, "GPU-11111111-2222-3333-4444-555555555555", "00000000:18:00.0",
                 "NVIDIA H100 80GB HBM3");
    hn_frame_gpu(&w, 1, "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "00000000:2A:00.0", "");
    for (unsigned i = 0; i < HN_ARRAY_LEN(specials); i++)
        hn_frame_sample(&w, 0, i, specials[i]);
    hn_frame_sample(&w, 0, HN_F_POWER, NAN);
    hn_frame_sample(&w, 1, HN_F_XID_EVENTS, 3);
    hn_frame_sample(&w, 1, 0xffff, -2); /* a field this build does not know */
    hn_frame_link_sample(&w, 1, 17, HN_L_UP, 1);
    hn_frame_link_sample(&w, 1, 17, HN_L_CRC_FLIT, 18446744073709551615.0);
    struct hn_frame_xid x = {1, 79, 1764460799000000000ull, {"00000000:2A:00.0", 16}, 1};
    hn_frame_xid(&w, &x);
    struct hn_frame_xid sx = {HN_FRAME_NO_GPU, 0xffffffffu, 0, {NULL, 0}, 2};
    hn_frame_xid(&w, &sx);
    struct hn_frame_ibport p = {{"mlx5_0", 6},         1, 4, 5, 400.0, UINT64_MAX,
                                0x0102030405060708ull, 0};
    hn_frame_ibport(&w, &p);
    int rc = hn_frame_end(&w);
    if (rc == 0) {
        /* Sticky: a failed call after a good frame is still reported. */
        size_t len = b->len;
        hn_frame_sample(&w, 0, 0x10000, 1);
        assert_int_equal(b->len, len);
        assert_int_equal(w.error, -EINVAL);
    }
    return rc;
}

static void write_full(struct hn_buf *b)
{
    assert_int_equal(write_full_rc(b), 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, HN_FRAME_MAX);
    write_full(&b);

    struct rec_log l;
    log_init(&l);
    expect_ok(b.data, b.len, &l);
    assert_int_equal(l.header_calls, 1);
    assert_int_equal(l.h.version, HN_FRAME_VERSION);
    assert_int_equal(l.h.flags, 0);
    assert_true(l.h.boot_id == 0xfedcba9876543210ull);
    assert_true(l.h.seq == 42);
    assert_true(l.h.time_ns == 1764460800123456789ull);

    assert_int_equal(l.node_calls, 1);
    assert_string_equal(l.node_name, "gpu-node-017");
    assert_string_equal(l.node_model, "NVIDIA H100 80GB HBM3");
    assert_int_equal(l.node_gpus, 2);

    assert_int_equal(l.gpu_calls, 2);
    assert_int_equal(l.gpu_idx[0], 0);
    assert_string_equal(l.gpu_uuid[0], "GPU-11111111-2222-3333-4444-555555555555");
    assert_string_equal(l.gpu_pci[0], "00000000:18:00.0");
    assert_string_equal(l.gpu_model[0], "NVIDIA H100 80GB HBM3");
    assert_int_equal(l.gpu_idx[1], 1);
    assert_string_equal(l.gpu_model[1], "");

    size_t ns = HN_ARRAY_LEN(specials);
    assert_int_equal(l.nf, ns + 5);
    for (size_t i = 0; i < ns; i++) {
        assert_int_equal(l.f[i].type, HN_REC_SAMPLES);
        assert_int_equal(l.f[i].gpu, 0);
        assert_int_equal(l.f[i].field, i);
        assert_true(l.f[i].bits == bits_of(specials[i])); /* exact, sign of zero included */
    }
    double v;
    memcpy(&v, &l.f[ns].bits, sizeof(v));
    assert_int_equal(l.f[ns].field, HN_F_POWER);
    assert_true(isnan(v));
    assert_true(l.f[ns].bits == bits_of(NAN));
    assert_int_equal(l.f[ns + 1].gpu, 1);
    assert_true(l.f[ns + 1].bits == bits_of(3));
    assert_int_equal(l.f[ns + 2].field, 0xffff);
    assert_int_equal(l.f[ns + 3].type, HN_REC_LINK);
    assert_int_equal(l.f[ns + 3].gpu, 1);
    assert_int_equal(l.f[ns + 3].link, 17);
    assert_int_equal(l.f[ns + 3].field, HN_L_UP);
    assert_int_equal(l.f[ns + 4].field, HN_L_CRC_FLIT);
    assert_true(l.f[ns + 4].bits == bits_of(18446744073709551615.0));

    assert_int_equal(l.xid_calls, 2);
    assert_int_equal(l.xid[0].gpu, 1);
    assert_int_equal(l.xid[0].code, 79);
    assert_true(l.xid[0].time_ns == 1764460799000000000ull);
    assert_string_equal(l.xid_pci[0], "00000000:2A:00.0");
    assert_int_equal(l.xid[0].kind, 1);
    assert_int_equal(l.xid[1].gpu, HN_FRAME_NO_GPU);
    assert_int_equal(l.xid[1].code, 0xffffffffu);
    assert_string_equal(l.xid_pci[1], "");
    assert_int_equal(l.xid[1].kind, 2);

    assert_int_equal(l.ib_calls, 1);
    assert_string_equal(l.ib_dev[0], "mlx5_0");
    assert_int_equal(l.ib[0].port, 1);
    assert_int_equal(l.ib[0].state, 4);
    assert_int_equal(l.ib[0].phys_state, 5);
    assert_true(l.ib[0].rate_gbps == 400.0);
    assert_true(l.ib[0].link_downed == UINT64_MAX);
    assert_true(l.ib[0].symbol_errors == 0x0102030405060708ull);
    assert_true(l.ib[0].link_error_recovery == 0);
    assert_int_equal(l.calls, 1 + 1 + 2 + 3 + 2 + 1); /* header node gpu fields xid ib */

    /* The same frame validates without a sink and with a sink that has no callbacks. */
    assert_int_equal(hn_frame_decode(b.data, b.len, HN_FRAME_MAX, NULL, NULL, NULL, 0), 0);
    struct hn_frame_sink none = {0};
    assert_int_equal(hn_frame_decode(b.data, b.len, HN_FRAME_MAX, &none, NULL, NULL, 0), 0);

    /* Encoding is deterministic: the same calls give the same bytes. */
    struct hn_buf b2;
    hn_buf_init(&b2, HN_FRAME_MAX);
    write_full(&b2);
    assert_int_equal(b2.len, b.len);
    assert_memory_equal(b2.data, b.data, b.len);
    hn_buf_fini(&b2);
    log_fini(&l);
    hn_buf_fini(&b);
}

/* The worked example of docs/protocol.md, byte for byte. */
static const uint8_t example[] = {
    0x48, 0x4e, 0x46, 0x31, 0x01, 0x00, 0x00, 0x00, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45,
    0x23, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1a, 0xc4,
    0xbf, 0x9f, 0x7c, 0x18, 0x01, 0x0c, 0x00, 0x00, 0x00, 0x02, 0x00, 0x6e, 0x31, 0x01,
    0x00, 0x04, 0x00, 0x48, 0x31, 0x30, 0x30, 0x03, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x46, 0x40, 0x06, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x7f, 0xff, 0x00, 0x00, 0x00, 0x00,
};

static void test_worked_example(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, 4096);
    struct hn_frame_writer w;
    hn_frame_begin(&w, &b, 0x0123456789abcdefull, 1, 1764460800000000000ull);
    hn_frame_node(&w, "n1", 1, "H100");
    hn_frame_sample(&w, 0, HN_F_GPU_TEMP, 45.0);
    hn_frame_sample(&w, 0, HN_F_POWER, NAN);
    assert_int_equal(hn_frame_end(&w), 0);
    assert_int_equal(b.len, sizeof(example));
    assert_memory_equal(b.data, example, sizeof(example));
    hn_buf_fini(&b);
}

static void test_grouping(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, HN_FRAME_MAX);
    struct hn_frame_writer w;
    hn_frame_begin(&w, &b, 1, 1, 1);
    hn_frame_node(&w, "n", 4, "m");
    hn_frame_sample(&w, 0, 0, 1);
    hn_frame_sample(&w, 0, 1, 2);
    hn_frame_sample(&w, 0, 2, 3); /* one record: gpu 0, n 3 */
    hn_frame_sample(&w, 1, 0, 4); /* another GPU: a new record */
    hn_frame_sample(&w, 1, 1, 5); /* ... n 2 */
    hn_frame_sample(&w, 0, 3, 6); /* back to gpu 0: a third record */
    hn_frame_link_sample(&w, 0, 0, HN_L_UP, 1);
    hn_frame_link_sample(&w, 0, 0, HN_L_REPLAY, 0); /* same link: same record */
    hn_frame_link_sample(&w, 0, 1, HN_L_UP, 1);     /* next link: a new record */
    hn_frame_link_sample(&w, 1, 1, HN_L_UP, 1);     /* same link number, other GPU: new */
    hn_frame_sample(&w, 1, 2, 7);                   /* samples after links: new */
    hn_frame_gpu(&w, 1, "u", "p", "m");             /* any other record closes the open one */
    hn_frame_sample(&w, 1, 3, 8);
    assert_int_equal(hn_frame_end(&w), 0);

    struct raw_rec r[32] = {0};
    size_t n = walk(&b, r, HN_ARRAY_LEN(r));
    static const struct {
        unsigned type, gpu, link, n;
    } want[] = {
        {HN_REC_NODE, 0, 0, 0},    {HN_REC_SAMPLES, 0, 0, 3}, {HN_REC_SAMPLES, 1, 0, 2},
        {HN_REC_SAMPLES, 0, 0, 1}, {HN_REC_LINK, 0, 0, 2},    {HN_REC_LINK, 0, 1, 1},
        {HN_REC_LINK, 1, 1, 1},    {HN_REC_SAMPLES, 1, 0, 1}, {HN_REC_GPU, 0, 0, 0},
        {HN_REC_SAMPLES, 1, 0, 1}, {HN_REC_END, 0, 0, 0},
    };
    assert_int_equal(n, HN_ARRAY_LEN(want));
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r[i].type, want[i].type);
        assert_int_equal(r[i].gpu, want[i].gpu);
        assert_int_equal(r[i].link, want[i].link);
        assert_int_equal(r[i].n, want[i].n);
    }
    assert_int_equal(r[n - 1].len, 0);

    struct rec_log l;
    log_init(&l);
    expect_ok(b.data, b.len, &l);
    assert_int_equal(l.nf, 12);
    for (size_t i = 0; i < 6; i++)
        assert_true(l.f[i].bits == bits_of((double)(i + 1)));
    log_fini(&l);
    hn_buf_fini(&b);
}

/* More than 65535 samples of one GPU: split into full records; delivered in chunks. */
static void test_split_and_chunks(void **state)
{
    (void)state;
    const unsigned total = 70000;
    struct hn_buf b;
    hn_buf_init(&b, HN_FRAME_MAX);
    struct hn_frame_writer w;
    hn_frame_begin(&w, &b, 1, 1, 1);
    hn_frame_node(&w, "n", 1, "m");
    for (unsigned i = 0; i < total; i++)
        hn_frame_sample(&w, 0, i & 0xffff, (double)i);
    assert_int_equal(hn_frame_end(&w), 0);

    struct raw_rec r[8] = {0};
    size_t n = walk(&b, r, HN_ARRAY_LEN(r));
    assert_int_equal(n, 4);
    assert_int_equal(r[1].type, HN_REC_SAMPLES);
    assert_int_equal(r[1].n, 65535);
    assert_int_equal(r[2].type, HN_REC_SAMPLES);
    assert_int_equal(r[2].n, total - 65535);
    assert_int_equal(r[3].type, HN_REC_END);

    struct rec_log l;
    log_init(&l);
    expect_ok(b.data, b.len, &l);
    assert_int_equal(l.nf, total);
    for (unsigned i = 0; i < total; i++) {
        assert_int_equal(l.f[i].field, i & 0xffff);
        assert_true(l.f[i].bits == bits_of((double)i));
    }
    assert_int_equal(l.chunk_max, HN_FRAME_CHUNK);
    /* Chunks never span records: ceil(65535/256) + ceil(4465/256). */
    assert_int_equal(l.chunks, 256 + 18);
    log_fini(&l);
    hn_buf_fini(&b);
}

/* Every cap below the frame's size gives -ENOSPC without passing the cap; the exact size
 * works. */
static void test_writer_cap(void **state)
{
    (void)state;
    struct hn_buf full;
    hn_buf_init(&full, HN_FRAME_MAX);
    write_full(&full);
    for (size_t max = 0; max <= full.len; max++) {
        struct hn_buf b;
        hn_buf_init(&b, max);
        int rc = write_full_rc(&b);
        assert_true(b.len <= max);
        if (max < full.len) {
            assert_int_equal(rc, -ENOSPC);
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(b.len, full.len);
            assert_memory_equal(b.data, full.data, full.len);
        }
        hn_buf_fini(&b);
    }
    hn_buf_fini(&full);
}

static int writer_einval(int which)
{
    struct hn_buf b;
    hn_buf_init(&b, 65536);
    struct hn_frame_writer w;
    char long_str[HN_FRAME_STR_MAX + 2];
    memset(long_str, 'x', sizeof(long_str) - 1);
    long_str[sizeof(long_str) - 1] = '\0';
    struct hn_frame_xid x = {0, 13, 0, {"a\0b", 3}, 1};
    struct hn_frame_ibport p = {{"mlx5_0", 6}, 1, 4, 5, 400.0, 0, 0, 0};
    hn_frame_begin(&w, &b, 1, 1, 1);
    if (which != 0)
        hn_frame_node(&w, which == 1 ? long_str : "n", which == 2 ? 0x10000 : 2, "m");
    switch (which) {
    case 0: /* a record before NODE */
        hn_frame_sample(&w, 0, 0, 1);
        break;
    case 3: /* a second NODE */
        hn_frame_node(&w, "n", 2, "m");
        break;
    case 4: /* GPU index not below NODE's gpus */
        hn_frame_sample(&w, 2, 0, 1);
        break;
    case 5:
        hn_frame_gpu(&w, 2, "u", "p", "m");
        break;
    case 6:
        hn_frame_link_sample(&w, 0, 0x10000, 0, 1);
        break;
    case 7:
        hn_frame_sample(&w, 0, 0x10000, 1);
        break;
    case 8:
        hn_frame_gpu(&w, 0, "u", long_str, "m");
        break;
    case 9: /* a NUL inside a counted string */
        hn_frame_xid(&w, &x);
        break;
    case 10:
        x.pci.p = "ok";
        x.pci.len = 2;
        x.gpu = 2;
        hn_frame_xid(&w, &x);
        break;
    case 11:
        x.pci.len = 0;
        x.kind = 256;
        hn_frame_xid(&w, &x);
        break;
    case 12:
        p.device.len = HN_FRAME_STR_MAX + 1;
        p.device.p = long_str;
        hn_frame_ibport(&w, &p);
        break;
    case 13:
        p.state = 300;
        hn_frame_ibport(&w, &p);
        break;
    default:
        break;
    }
    int rc = hn_frame_end(&w);
    hn_buf_fini(&b);
    return rc;
}

static void test_writer_einval(void **state)
{
    (void)state;
    for (int i = 0; i <= 13; i++) {
        int rc = writer_einval(i);
        if (rc != -EINVAL)
            fail_msg("case %d: %d", i, rc);
    }
    /* A frame without NODE cannot be finished. */
    struct hn_buf b;
    hn_buf_init(&b, 4096);
    struct hn_frame_writer w;
    hn_frame_begin(&w, &b, 1, 1, 1);
    assert_int_equal(hn_frame_end(&w), -EINVAL);
    /* Limits that are allowed: a 255-byte string, NULL strings, NO_GPU, 0 GPUs. */
    char max_str[HN_FRAME_STR_MAX + 1];
    memset(max_str, 'y', HN_FRAME_STR_MAX);
    max_str[HN_FRAME_STR_MAX] = '\0';
    hn_frame_begin(&w, &b, 1, 1, 1);
    hn_frame_node(&w, max_str, 0, NULL);
    struct hn_frame_xid x = {HN_FRAME_NO_GPU, 13, 0, {max_str, HN_FRAME_STR_MAX}, 1};
    hn_frame_xid(&w, &x);
    assert_int_equal(hn_frame_end(&w), 0);
    struct rec_log l;
    log_init(&l);
    expect_ok(b.data, b.len, &l);
    assert_int_equal(strlen(l.node_name), HN_FRAME_STR_MAX);
    assert_string_equal(l.node_model, "");
    assert_int_equal(l.xid_calls, 1);
    log_fini(&l);
    hn_buf_fini(&b);
}

/* Every proper prefix of a valid frame is refused, whole records included (END is missing). */
static void test_truncations(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, HN_FRAME_MAX);
    write_full(&b);
    for (size_t len = 0; len < b.len; len++)
        expect_reject(b.data, len, -EBADMSG);
    hn_buf_fini(&b);
}

static void test_bad_header(void **state)
{
    (void)state;
    struct raw r;
    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_end(&r);
    struct rec_log l;
    log_init(&l);
    expect_ok(r.b, r.n, &l);
    log_fini(&l);

    r.b[0] = 'X';
    expect_reject(r.b, r.n, -EBADMSG);
    r.b[0] = 'H';
    r.b[3] = '2';
    expect_reject(r.b, r.n, -EBADMSG);
    r.b[3] = '1';
    r.b[4] = 2; /* version 2 */
    expect_reject(r.b, r.n, -EPROTONOSUPPORT);
    r.b[4] = 0; /* version 0 */
    expect_reject(r.b, r.n, -EPROTONOSUPPORT);
    r.b[4] = 1;
    r.b[5] = 1; /* version 257 */
    expect_reject(r.b, r.n, -EPROTONOSUPPORT);
    r.b[5] = 0;
    /* A short header is truncated, but version 2 is reported as soon as it can be read. */
    expect_reject(r.b, 6, -EBADMSG);
    uint8_t v2[6] = {'H', 'N', 'F', '1', 2, 0};
    expect_reject(v2, sizeof(v2), -EPROTONOSUPPORT);

    /* Flags are ignored. */
    r.b[6] = 0xff;
    log_init(&l);
    expect_ok(r.b, r.n, &l);
    assert_int_equal(l.h.flags, 0xff);
    log_fini(&l);

    /* len > max, checked before anything else. */
    log_init(&l);
    char err[128];
    assert_int_equal(hn_frame_decode(r.b, r.n, r.n - 1, &log_sink, &l, err, sizeof(err)), -E2BIG);
    assert_int_equal(l.calls, 0);
    assert_int_equal(hn_frame_decode("XXXX", 4, 3, &log_sink, &l, err, sizeof(err)), -E2BIG);
    assert_int_equal(hn_frame_decode(r.b, r.n, r.n, &log_sink, &l, NULL, 0), 0);
    log_fini(&l);
}

static void test_bad_strings(void **state)
{
    (void)state;
    struct raw r;
    /* A string length longer than the rest of the record. */
    raw_header(&r, 1);
    raw_open(&r, HN_REC_NODE);
    raw_le(&r, 200, 2);
    raw_bytes(&r, "short", 5);
    raw_close(&r);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);

    /* Longer than HN_FRAME_STR_MAX, though present in full. */
    char big[HN_FRAME_STR_MAX + 1];
    memset(big, 'z', sizeof(big));
    raw_header(&r, 1);
    raw_open(&r, HN_REC_NODE);
    raw_le(&r, sizeof(big), 2);
    raw_bytes(&r, big, sizeof(big));
    raw_le(&r, 1, 2);
    raw_str(&r, "m");
    raw_close(&r);
    raw_end(&r);
    char err[160];
    struct rec_log l;
    log_init(&l);
    assert_int_equal(decode(r.b, r.n, &l, err, sizeof(err)), -EBADMSG);
    assert_non_null(strstr(err, "byte 37")); /* where the string starts */
    log_fini(&l);

    /* A NUL inside. */
    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_open(&r, HN_REC_GPU);
    raw_le(&r, 0, 2);
    raw_le(&r, 3, 2);
    raw_bytes(&r, "a\0b", 3);
    raw_str(&r, "p");
    raw_str(&r, "m");
    raw_close(&r);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);
}

static void test_bad_counts(void **state)
{
    (void)state;
    struct raw r;
    raw_header(&r, 1);
    raw_node(&r, 1);
    size_t at = r.n;
    raw_samples(&r, 0, 3);
    raw_end(&r);
    struct rec_log l;
    log_init(&l);
    expect_ok(r.b, r.n, &l);
    assert_int_equal(l.nf, 3);
    log_fini(&l);

    r.b[at + 7] = 4; /* n 4 in a record holding 3 */
    expect_reject(r.b, r.n, -EBADMSG);
    r.b[at + 7] = 2; /* n 2: the record is longer */
    expect_reject(r.b, r.n, -EBADMSG);
    r.b[at + 7] = 3;

    /* n 0 in an empty record is valid and makes no call. */
    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_samples(&r, 0, 0);
    raw_end(&r);
    log_init(&l);
    expect_ok(r.b, r.n, &l);
    assert_int_equal(l.field_calls, 0);
    log_fini(&l);

    /* LINK: n against the length, and a record too short for its own header. */
    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_open(&r, HN_REC_LINK);
    raw_le(&r, 0, 2);
    raw_le(&r, 5, 2);
    raw_le(&r, 2, 2);
    raw_le(&r, HN_L_UP, 2);
    raw_le(&r, bits_of(1), 8);
    raw_close(&r);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);

    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_open(&r, HN_REC_LINK);
    raw_le(&r, 0, 2);
    raw_le(&r, 5, 2);
    raw_close(&r);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);

    /* A record length running past the end of the frame. */
    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_open(&r, 0x42);
    raw_close(&r);
    r.b[r.n - 1] = 0x10; /* 256 MiB */
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);

    /* Fixed records shorter than their fields, whatever the type. */
    static const unsigned types[] = {HN_REC_NODE, HN_REC_GPU, HN_REC_SAMPLES,
                                     HN_REC_LINK, HN_REC_XID, HN_REC_IBPORT};
    for (size_t i = 0; i < HN_ARRAY_LEN(types); i++) {
        raw_header(&r, 1);
        if (types[i] != HN_REC_NODE)
            raw_node(&r, 1);
        raw_open(&r, types[i]); /* zero-length */
        raw_close(&r);
        raw_end(&r);
        expect_reject(r.b, r.n, -EBADMSG);
    }
    /* An XID cut before its kind byte. */
    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_open(&r, HN_REC_XID);
    raw_le(&r, 0, 2);
    raw_le(&r, 79, 4);
    raw_le(&r, 0, 8);
    raw_str(&r, "pci");
    raw_close(&r);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);
}

static void test_record_order(void **state)
{
    (void)state;
    struct raw r;
    char err[160];
    struct rec_log l;

    /* NODE missing. */
    raw_header(&r, 1);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);
    raw_header(&r, 1);
    expect_reject(r.b, r.n, -EBADMSG);
    raw_header(&r, 1);
    raw_samples(&r, 0, 1);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);

    /* NODE not first: even an unknown record may not precede it. */
    raw_header(&r, 1);
    raw_open(&r, 0x42);
    raw_close(&r);
    raw_node(&r, 1);
    raw_end(&r);
    log_init(&l);
    assert_int_equal(decode(r.b, r.n, &l, err, sizeof(err)), -EBADMSG);
    assert_non_null(strstr(err, "byte 32"));
    assert_int_equal(l.calls, 0);
    log_fini(&l);

    /* A second NODE. */
    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_node(&r, 1);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);

    /* END missing, or followed by anything. */
    raw_header(&r, 1);
    raw_node(&r, 1);
    expect_reject(r.b, r.n, -EBADMSG);
    raw_end(&r);
    raw_le(&r, 0, 1);
    expect_reject(r.b, r.n, -EBADMSG);
    raw_header(&r, 1);
    raw_node(&r, 1);
    raw_end(&r);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);

    /* GPU indices at or past NODE's gpus. */
    raw_header(&r, 1);
    raw_node(&r, 2);
    raw_samples(&r, 2, 1);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);
    raw_header(&r, 1);
    raw_node(&r, 0);
    raw_samples(&r, 0, 1);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);
    static const unsigned xid_gpus[] = {1, 0xfffe, HN_FRAME_NO_GPU};
    for (size_t i = 0; i < HN_ARRAY_LEN(xid_gpus); i++) {
        unsigned gpu = xid_gpus[i];
        raw_header(&r, 1);
        raw_node(&r, 1);
        raw_open(&r, HN_REC_XID);
        raw_le(&r, gpu, 2);
        raw_le(&r, 79, 4);
        raw_le(&r, 0, 8);
        raw_str(&r, "pci");
        raw_le(&r, 1, 1);
        raw_close(&r);
        raw_end(&r);
        if (gpu == HN_FRAME_NO_GPU) {
            log_init(&l);
            expect_ok(r.b, r.n, &l);
            assert_int_equal(l.xid_calls, 1);
            log_fini(&l);
        } else {
            expect_reject(r.b, r.n, -EBADMSG);
        }
    }
}

/* Unknown record types, trailing bytes in fixed records, unknown fields and kinds pass. */
static void test_unknown_skipped(void **state)
{
    (void)state;
    struct raw r;
    raw_header(&r, 1);
    raw_node(&r, 2);
    raw_open(&r, 0x42);
    raw_bytes(&r, "\x01\x02\x03\x04\x05\x06\x07", 7);
    raw_close(&r);
    raw_open(&r, 0); /* zero-length, unknown */
    raw_close(&r);
    raw_open(&r, HN_REC_GPU);
    raw_le(&r, 1, 2);
    raw_str(&r, "GPU-x");
    raw_str(&r, "0000:01:00.0");
    raw_str(&r, "H200");
    raw_bytes(&r, "future", 6); /* a field appended by a later agent */
    raw_close(&r);
    raw_open(&r, HN_REC_XID);
    raw_le(&r, 1, 2);
    raw_le(&r, 48, 4);
    raw_le(&r, 5, 8);
    raw_str(&r, "pci");
    raw_le(&r, 9, 1); /* a kind this build does not know */
    raw_close(&r);
    raw_samples(&r, 1, 2);
    raw_open(&r, 0xfe);
    raw_le(&r, 0, 8);
    raw_close(&r);
    raw_open(&r, HN_REC_END);
    raw_bytes(&r, "sum", 3); /* END may grow too */
    raw_close(&r);

    struct rec_log l;
    log_init(&l);
    expect_ok(r.b, r.n, &l);
    assert_int_equal(l.node_calls, 1);
    assert_int_equal(l.gpu_calls, 1);
    assert_string_equal(l.gpu_model[0], "H200");
    assert_int_equal(l.xid_calls, 1);
    assert_int_equal(l.xid[0].kind, 9);
    assert_int_equal(l.nf, 2);
    assert_int_equal(l.f[1].gpu, 1);
    assert_true(l.f[1].bits == bits_of(1.5));
    log_fini(&l);
}

/* A callback's non-zero result stops decoding and is returned. */
static void test_callback_stops(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, HN_FRAME_MAX);
    write_full(&b);
    struct rec_log l;
    char err[160];
    for (int stop = 1; stop <= 10; stop++) {
        log_init(&l);
        l.stop_at_call = stop;
        l.stop_rc = stop % 2 ? 7 : -ECANCELED;
        int rc = decode(b.data, b.len, &l, err, sizeof(err));
        assert_int_equal(rc, l.stop_rc);
        assert_int_equal(l.calls, stop);
        if (rc < 0)
            assert_non_null(strstr(err, "sink"));
        log_fini(&l);
    }
    hn_buf_fini(&b);
}

/* A frame whose only fault is at its end delivers nothing. */
static void test_all_or_nothing(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, HN_FRAME_MAX);
    write_full(&b);
    uint8_t *copy = xmalloc(b.len + 1);

    /* The last byte: END's length says 16 MiB. */
    memcpy(copy, b.data, b.len);
    copy[b.len - 1] = 1;
    expect_reject(copy, b.len, -EBADMSG);

    /* One byte too many. */
    memcpy(copy, b.data, b.len);
    copy[b.len] = 0;
    expect_reject(copy, b.len + 1, -EBADMSG);

    /* The last record before END has a bad GPU index. */
    struct raw r;
    raw_header(&r, 1);
    raw_node(&r, 2);
    raw_samples(&r, 0, 50);
    raw_samples(&r, 1, 50);
    raw_samples(&r, 2, 1);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);

    free(copy);
    hn_buf_fini(&b);
}

/* ---- STEP records ---- */

struct step_log {
    struct hn_frame_step s[4];
    char job[4][64];
    unsigned n;
};

static int on_step(void *ctx, const struct hn_frame_step *f)
{
    struct step_log *l = ctx;
    assert_true(l->n < 4);
    copy_str(l->job[l->n], f->job);
    l->s[l->n++] = *f;
    return 0;
}

/* A frame of a 4-GPU node, up to a STEP or PAUSE (type) record's gpu: job "j", rank, local
 * rank 0, world 8, gpu. */
static void raw_step_head(struct raw *r, unsigned type, unsigned rank, unsigned gpu)
{
    raw_header(r, HN_FRAME_VERSION);
    raw_node(r, 4);
    raw_open(r, type);
    raw_str(r, "j");
    raw_le(r, rank, 4);
    raw_le(r, 0, 4);
    raw_le(r, 8, 4);
    raw_le(r, gpu, 2);
}

/* A frame of a 4-GPU node with one STEP record of job "j": rank, world 8, gpu, every later
 * field up to flops_per_token zero, then `tail` zero bytes (4: a uid of 0). */
static void raw_step_frame(struct raw *r, unsigned rank, unsigned gpu, unsigned tail)
{
    raw_step_head(r, HN_REC_STEP, rank, gpu);
    for (int i = 0; i < 2 + 6 + 1 + 2; i++) /* step, time_ns, 6 reals, checkpoint, 2 reals */
        raw_le(r, 0, 8);
    raw_le(r, 0, tail);
    raw_close(r);
    raw_end(r);
}

static void test_step_records(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, HN_FRAME_MAX);
    struct hn_frame_writer w;
    hn_frame_begin(&w, &b, 1, 2, 3);
    hn_frame_node(&w, "n1", 4, "H100");
    struct hn_frame_step full = {.job = {"4242", 4},
                                 .rank = 17,
                                 .local_rank = 1,
                                 .world = 512,
                                 .gpu = 1,
                                 .step = 123456789012ull,
                                 .time_ns = 1700000000123456789ull,
                                 .seconds = 1.25,
                                 .tokens = 8192,
                                 .forward_s = 0.4,
                                 .backward_s = 0.7,
                                 .optimizer_s = 0.05,
                                 .comm_s = 0.1,
                                 .checkpoint = 123456789000ull,
                                 .tflops = 401.5,
                                 .flops_per_token = 2.43e12,
                                 .uid = 1000};
    struct hn_frame_step bare = {.job = {"x", 1},
                                 .rank = HN_FRAME_NO_U32,
                                 .local_rank = HN_FRAME_NO_U32,
                                 .world = HN_FRAME_NO_U32,
                                 .gpu = HN_FRAME_NO_GPU,
                                 .step = 1,
                                 .seconds = 2,
                                 .tokens = NAN,
                                 .forward_s = NAN,
                                 .backward_s = NAN,
                                 .optimizer_s = NAN,
                                 .comm_s = NAN,
                                 .checkpoint = HN_FRAME_NO_U64,
                                 .tflops = NAN,
                                 .flops_per_token = NAN,
                                 .uid = HN_FRAME_NO_U32};
    hn_frame_step(&w, &full);
    hn_frame_step(&w, &bare);
    assert_int_equal(hn_frame_end(&w), 0);
    struct step_log l = {.n = 0};
    struct hn_frame_sink sink = {.step = on_step};
    char err[160];
    assert_int_equal(hn_frame_decode(b.data, b.len, HN_FRAME_MAX, &sink, &l, err, sizeof(err)), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.job[0], "4242");
    const struct hn_frame_step *g = &l.s[0];
    assert_int_equal(g->rank, 17);
    assert_int_equal(g->local_rank, 1);
    assert_int_equal(g->world, 512);
    assert_int_equal(g->gpu, 1);
    assert_true(g->step == full.step && g->time_ns == full.time_ns &&
                g->checkpoint == full.checkpoint);
    assert_true(g->seconds == 1.25 && g->tokens == 8192 && g->forward_s == 0.4 &&
                g->backward_s == 0.7 && g->optimizer_s == 0.05 && g->comm_s == 0.1 &&
                g->tflops == 401.5 && g->flops_per_token == 2.43e12);
    assert_int_equal(g->uid, 1000);
    g = &l.s[1];
    assert_string_equal(l.job[1], "x");
    assert_true(g->rank == HN_FRAME_NO_U32 && g->gpu == HN_FRAME_NO_GPU &&
                g->checkpoint == HN_FRAME_NO_U64 && isnan(g->tokens) && isnan(g->tflops) &&
                g->uid == HN_FRAME_NO_U32);

    /* An older agent's STEP ends at flops_per_token: valid, its uid unknown. Two stray bytes
     * after it are no uid either. A uid of 0 (root) is a uid. */
    for (unsigned tail = 0; tail <= 4; tail += 2) {
        struct raw r;
        raw_step_frame(&r, 3, 0, tail);
        l.n = 0;
        assert_int_equal(hn_frame_decode(r.b, r.n, HN_FRAME_MAX, &sink, &l, err, sizeof(err)), 0);
        assert_int_equal(l.n, 1);
        assert_int_equal(l.s[0].rank, 3);
        assert_int_equal(l.s[0].uid, tail == 4 ? 0 : HN_FRAME_NO_U32);
    }

    /* A GPU the node does not have: the writer refuses it, and so does the reader. */
    hn_frame_begin(&w, &b, 1, 3, 3);
    hn_frame_node(&w, "n1", 4, "H100");
    full.gpu = 4;
    hn_frame_step(&w, &full);
    assert_int_equal(hn_frame_end(&w), -EINVAL);
    struct raw r;
    raw_step_frame(&r, 0, 9, 0); /* GPU 9 of 4 */
    expect_reject(r.b, r.n, -EBADMSG);
    /* A STEP record cut short. */
    raw_header(&r, HN_FRAME_VERSION);
    raw_node(&r, 4);
    raw_open(&r, HN_REC_STEP);
    raw_str(&r, "j");
    raw_le(&r, 0, 4);
    raw_close(&r);
    raw_end(&r);
    expect_reject(r.b, r.n, -EBADMSG);
    hn_buf_fini(&b);
}

/* A frame of a 4-GPU node with one PAUSE record of job "j" after step 500, of `kind`; `cut`
 * leaves the uid out. */
static void raw_pause_frame(struct raw *r, unsigned kind, int cut)
{
    raw_step_head(r, HN_REC_PAUSE, 0, 2);
    raw_le(r, 500, 8);
    raw_le(r, 1700000000000000000ull, 8);
    raw_le(r, kind, 1);
    if (!cut)
        raw_le(r, 1000, 4);
    raw_close(r);
    raw_end(r);
}

/* A pause notice travels as a PAUSE record: what the agent wrote arrives, the rest unknown; a
 * controller that does not know the type skips it (test_unknown_skipped); kind 0 and a record
 * cut short are refused. */
static void test_pause_records(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, HN_FRAME_MAX);
    struct hn_frame_writer w;
    hn_frame_begin(&w, &b, 1, 2, 3);
    hn_frame_node(&w, "n1", 4, "H100");
    struct hn_frame_step p = {.job = {"4242", 4},
                              .rank = 17,
                              .local_rank = 1,
                              .world = 512,
                              .gpu = 1,
                              .step = 500,
                              .time_ns = 1700000000123456789ull,
                              .seconds = 9, /* not sent */
                              .checkpoint = 400,
                              .uid = 1000,
                              .pause = 1};
    hn_frame_step(&w, &p);
    assert_int_equal(hn_frame_end(&w), 0);
    struct step_log l = {.n = 0};
    struct hn_frame_sink sink = {.step = on_step};
    char err[160];
    assert_int_equal(hn_frame_decode(b.data, b.len, HN_FRAME_MAX, &sink, &l, err, sizeof(err)), 0);
    assert_int_equal(l.n, 1);
    const struct hn_frame_step *g = &l.s[0];
    assert_string_equal(l.job[0], "4242");
    assert_true(g->pause == 1 && g->rank == 17 && g->local_rank == 1 && g->world == 512 &&
                g->gpu == 1 && g->step == 500 && g->time_ns == p.time_ns && g->uid == 1000);
    assert_true(isnan(g->seconds) && isnan(g->tokens) && isnan(g->comm_s) &&
                isnan(g->flops_per_token) && g->checkpoint == HN_FRAME_NO_U64);
    /* Header, NODE (17 bytes), PAUSE of 46 bytes (docs/protocol.md: 5 record header + 2 + 4
     * job + 12 ranks + 2 gpu + 16 step and time + 1 kind + 4 uid), END (5). */
    assert_int_equal(b.len, HN_FRAME_HEADER_LEN + 17 + 46 + 5);

    struct raw r;
    raw_pause_frame(&r, 200, 0); /* a kind from a newer agent reaches the sink */
    l.n = 0;
    assert_int_equal(hn_frame_decode(r.b, r.n, HN_FRAME_MAX, &sink, &l, err, sizeof(err)), 0);
    assert_true(l.n == 1 && l.s[0].pause == 200 && l.s[0].gpu == 2 && l.s[0].uid == 1000);
    raw_pause_frame(&r, 0, 0);
    expect_reject(r.b, r.n, -EBADMSG);
    raw_pause_frame(&r, 1, 1);
    expect_reject(r.b, r.n, -EBADMSG);
    /* The writer: a kind wider than its byte. */
    hn_frame_begin(&w, &b, 1, 3, 3);
    hn_frame_node(&w, "n1", 4, "H100");
    p.pause = 256;
    hn_frame_step(&w, &p);
    assert_int_equal(hn_frame_end(&w), -EINVAL);
    hn_buf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_grouping),       cmocka_unit_test(test_split_and_chunks),
        cmocka_unit_test(test_writer_cap),     cmocka_unit_test(test_writer_einval),
        cmocka_unit_test(test_truncations),    cmocka_unit_test(test_bad_header),
        cmocka_unit_test(test_bad_strings),    cmocka_unit_test(test_bad_counts),
        cmocka_unit_test(test_record_order),   cmocka_unit_test(test_unknown_skipped),
        cmocka_unit_test(test_callback_stops), cmocka_unit_test(test_all_or_nothing),
        cmocka_unit_test(test_step_records),   cmocka_unit_test(test_pause_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
