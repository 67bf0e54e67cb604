/*
 * frame.c - encoding and decoding agent-to-controller frames (see frame.h, docs/protocol.md).
 *
 * Every multi-byte value is written and read one byte at a time in little-endian order, so the
 * wire format does not depend on the host's byte order or struct layout; compilers fold these
 * byte loops into single loads and stores on little-endian machines.
 */
#include "common/frame.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define REC_HEADER_LEN 5  /* type u8 | length u32 */
#define FIELD_LEN      10 /* field u16 | value f64 */
#define COUNT_MAX      0xffffu
#define STR(x)         #x
#define XSTR(x)        STR(x)
#define STR_MAX_TEXT   XSTR(HN_FRAME_STR_MAX)

/* ---- byte order ---- */

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static unsigned get_u16(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static double get_f64(const uint8_t *p)
{
    uint64_t bits = get_u64(p);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

static uint64_t f64_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof(bits));
    return bits;
}

/* ---- writing ---- */

/* The largest fixed record: GPU, a u16 and three strings. */
#define REC_MAX (REC_HEADER_LEN + 2 + 3 * (2 + HN_FRAME_STR_MAX))

/* A record being assembled on the stack, appended to the frame in one piece so that a full
 * buffer leaves the frame as it was before the record. */
struct rec_out {
    uint8_t b[REC_MAX];
    size_t n;
};

static void fail(struct hn_frame_writer *w, int rc)
{
    if (!w->error)
        w->error = rc;
}

static void rec_start(struct rec_out *r, unsigned type)
{
    r->b[0] = (uint8_t)type;
    r->n = REC_HEADER_LEN;
}

static void rec_put(struct rec_out *r, uint64_t v, unsigned n)
{
    put_le(r->b + r->n, v, n);
    r->n += n;
}

static void rec_str(struct rec_out *r, const char *p, size_t len)
{
    rec_put(r, len, 2);
    if (len)
        memcpy(r->b + r->n, p, len);
    r->n += len;
}

/* Appends the record, its length filled in. */
static void rec_emit(struct hn_frame_writer *w, struct rec_out *r)
{
    put_le(r->b + 1, r->n - REC_HEADER_LEN, 4);
    int rc = hn_buf_append(w->out, r->b, r->n);
    if (rc)
        fail(w, rc);
}

/* A C string's length if it fits in a frame string, else -1 (NULL is empty). */
static long cstr_len(const char *s)
{
    if (!s)
        return 0;
    size_t n = strnlen(s, HN_FRAME_STR_MAX + 1);
    return n > HN_FRAME_STR_MAX ? -1 : (long)n;
}

static int str_ok(struct hn_frame_str s)
{
    return s.len <= HN_FRAME_STR_MAX && (s.len == 0 || (s.p && !memchr(s.p, '\0', s.len)));
}

/* Fills in the open SAMPLES/LINK record's length and n, if one is open. */
static void close_open(struct hn_frame_writer *w)
{
    if (!w->rec_start)
        return;
    if (!w->error) {
        uint8_t *d = (uint8_t *)w->out->data;
        put_le(d + w->rec_start + 1, w->out->len - w->rec_start - REC_HEADER_LEN, 4);
        put_le(d + w->count_at, w->count, 2);
    }
    w->rec_start = 0;
    w->rec_type = 0;
    w->count_at = 0;
    w->count = 0;
}

/* Common checks before a record: no error yet, NODE written (unless this is NODE). Closes an
 * open SAMPLES/LINK record. Returns 0 when the caller may write. */
static int before_record(struct hn_frame_writer *w, int is_node)
{
    if (w->error)
        return -1;
    if (is_node == w->has_node) {
        fail(w, -EINVAL);
        return -1;
    }
    close_open(w);
    return 0;
}

void hn_frame_begin(struct hn_frame_writer *w, struct hn_buf *out, uint64_t boot_id, uint64_t seq,
                    uint64_t time_ns)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
    hn_buf_reset(out);
    uint8_t h[HN_FRAME_HEADER_LEN];
    for (int i = 0; i < 4; i++)
        h[i] = (uint8_t)HN_FRAME_MAGIC[i];
    put_le(h + 4, HN_FRAME_VERSION, 2);
    put_le(h + 6, 0, 2);
    put_le(h + 8, boot_id, 8);
    put_le(h + 16, seq, 8);
    put_le(h + 24, time_ns, 8);
    int rc = hn_buf_append(out, h, sizeof(h));
    if (rc)
        fail(w, rc);
}

void hn_frame_node(struct hn_frame_writer *w, const char *name, unsigned gpus, const char *model)
{
    if (before_record(w, 1))
        return;
    long nl = cstr_len(name), ml = cstr_len(model);
    if (nl < 0 || ml < 0 || gpus > COUNT_MAX) {
        fail(w, -EINVAL);
        return;
    }
    struct rec_out r;
    rec_start(&r, HN_REC_NODE);
    rec_str(&r, name, (size_t)nl);
    rec_put(&r, gpus, 2);
    rec_str(&r, model, (size_t)ml);
    rec_emit(w, &r);
    w->has_node = 1;
    w->gpus = gpus;
}

void hn_frame_gpu(struct hn_frame_writer *w, unsigned gpu, const char *uuid, const char *pci,
                  const char *model)
{
    if (before_record(w, 0))
        return;
    long ul = cstr_len(uuid), pl = cstr_len(pci), ml = cstr_len(model);
    if (ul < 0 || pl < 0 || ml < 0 || gpu >= w->gpus) {
        fail(w, -EINVAL);
        return;
    }
    struct rec_out r;
    rec_start(&r, HN_REC_GPU);
    rec_put(&r, gpu, 2);
    rec_str(&r, uuid, (size_t)ul);
    rec_str(&r, pci, (size_t)pl);
    rec_str(&r, model, (size_t)ml);
    rec_emit(w, &r);
}

/* Appends one field to the open record of this type, GPU and link, opening a new record when
 * there is none, it is another one, or it is full. */
static void put_field(struct hn_frame_writer *w, unsigned type, unsigned gpu, unsigned link,
                      unsigned field, double value)
{
    if (w->error)
        return;
    if (!w->has_node || gpu >= w->gpus || link > COUNT_MAX || field > COUNT_MAX) {
        fail(w, -EINVAL);
        return;
    }
    int rc;
    if (!w->rec_start || w->rec_type != type || w->rec_gpu != gpu || w->rec_link != link ||
        w->count == COUNT_MAX) {
        close_open(w);
        uint8_t h[REC_HEADER_LEN + 6];
        size_t n = REC_HEADER_LEN;
        h[0] = (uint8_t)type;
        put_le(h + 1, 0, 4); /* filled in by close_open() */
        put_le(h + n, gpu, 2);
        n += 2;
        if (type == HN_REC_LINK) {
            put_le(h + n, link, 2);
            n += 2;
        }
        put_le(h + n, 0, 2); /* n, likewise */
        n += 2;
        size_t at = w->out->len;
        if ((rc = hn_buf_append(w->out, h, n))) {
            fail(w, rc);
            return;
        }
        w->rec_start = at;
        w->rec_type = type;
        w->rec_gpu = gpu;
        w->rec_link = link;
        w->count_at = at + n - 2;
        w->count = 0;
    }
    uint8_t f[FIELD_LEN];
    put_le(f, field, 2);
    put_le(f + 2, f64_bits(value), 8);
    if ((rc = hn_buf_append(w->out, f, sizeof(f)))) {
        fail(w, rc);
        return;
    }
    w->count++;
}

void hn_frame_sample(struct hn_frame_writer *w, unsigned gpu, unsigned field, double value)
{
    put_field(w, HN_REC_SAMPLES, gpu, 0, field, value);
}

void hn_frame_link_sample(struct hn_frame_writer *w, unsigned gpu, unsigned link, unsigned field,
                          double value)
{
    put_field(w, HN_REC_LINK, gpu, link, field, value);
}

void hn_frame_xid(struct hn_frame_writer *w, const struct hn_frame_xid *x)
{
    if (before_record(w, 0))
        return;
    /* code is an unsigned, 32 bits on every platform houston builds for. */
    if ((x->gpu >= w->gpus && x->gpu != HN_FRAME_NO_GPU) || !str_ok(x->pci) || x->kind > 0xff) {
        fail(w, -EINVAL);
        return;
    }
    struct rec_out r;
    rec_start(&r, HN_REC_XID);
    rec_put(&r, x->gpu, 2);
    rec_put(&r, x->code, 4);
    rec_put(&r, x->time_ns, 8);
    rec_str(&r, x->pci.p, x->pci.len);
    rec_put(&r, x->kind, 1);
    rec_emit(w, &r);
}

void hn_frame_ibport(struct hn_frame_writer *w, const struct hn_frame_ibport *p)
{
    if (before_record(w, 0))
        return;
    if (!str_ok(p->device) || p->port > COUNT_MAX || p->state > 0xff || p->phys_state > 0xff) {
        fail(w, -EINVAL);
        return;
    }
    struct rec_out r;
    rec_start(&r, HN_REC_IBPORT);
    rec_str(&r, p->device.p, p->device.len);
    rec_put(&r, p->port, 2);
    rec_put(&r, p->state, 1);
    rec_put(&r, p->phys_state, 1);
    rec_put(&r, f64_bits(p->rate_gbps), 8);
    rec_put(&r, p->link_downed, 8);
    rec_put(&r, p->symbol_errors, 8);
    rec_put(&r, p->link_error_recovery, 8);
    rec_emit(w, &r);
}

void hn_frame_step(struct hn_frame_writer *w, const struct hn_frame_step *s)
{
    if (before_record(w, 0))
        return;
    if ((s->gpu >= w->gpus && s->gpu != HN_FRAME_NO_GPU) || !str_ok(s->job)) {
        fail(w, -EINVAL);
        return;
    }
    if (s->pause > 0xff) {
        fail(w, -EINVAL);
        return;
    }
    struct rec_out r;
    rec_start(&r, s->pause ? HN_REC_PAUSE : HN_REC_STEP);
    rec_str(&r, s->job.p, s->job.len);
    rec_put(&r, s->rank, 4);
    rec_put(&r, s->local_rank, 4);
    rec_put(&r, s->world, 4);
    rec_put(&r, s->gpu, 2);
    rec_put(&r, s->step, 8);
    rec_put(&r, s->time_ns, 8);
    if (s->pause) {
        rec_put(&r, s->pause, 1);
        rec_put(&r, s->uid, 4);
        rec_emit(w, &r);
        return;
    }
    const double reals[] = {s->seconds,    s->tokens,      s->forward_s,
                            s->backward_s, s->optimizer_s, s->comm_s};
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
        rec_put(&r, f64_bits(reals[i]), 8);
    rec_put(&r, s->checkpoint, 8);
    rec_put(&r, f64_bits(s->tflops), 8);
    rec_put(&r, f64_bits(s->flops_per_token), 8);
    rec_put(&r, s->uid, 4);
    rec_emit(w, &r);
}

int hn_frame_end(struct hn_frame_writer *w)
{
    close_open(w);
    if (!w->error && !w->has_node)
        w->error = -EINVAL;
    if (!w->error) {
        struct rec_out r;
        rec_start(&r, HN_REC_END);
        rec_emit(w, &r);
    }
    return w->error;
}

/* ---- reading ---- */

/* A cursor over one record's payload. A read past the end, or a bad string, returns zeros (an
 * empty string) and records the first fault, so a parser reads every field and checks once. */
struct cur {
    const uint8_t *p;
    size_t pos, end;
    const char *bad; /* the first fault, NULL when none */
    size_t bad_at;
};

static void cur_fault(struct cur *c, size_t at, const char *why)
{
    if (!c->bad) {
        c->bad = why;
        c->bad_at = at;
    }
}

static int cur_need(struct cur *c, size_t n)
{
    if (c->bad)
        return 0;
    if (c->end - c->pos < n) {
        cur_fault(c, c->pos, "record shorter than its fields");
        return 0;
    }
    return 1;
}

static uint64_t take(struct cur *c, unsigned n)
{
    if (!cur_need(c, n))
        return 0;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)c->p[c->pos + i] << (8 * i);
    c->pos += n;
    return v;
}

static double take_f64(struct cur *c)
{
    uint64_t bits = take(c, 8);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

static struct hn_frame_str take_str(struct cur *c)
{
    struct hn_frame_str s = {"", 0};
    size_t at = c->pos;
    size_t len = (size_t)take(c, 2);
    if (c->bad)
        return s;
    if (len > HN_FRAME_STR_MAX) {
        cur_fault(c, at, "string longer than " STR_MAX_TEXT " bytes");
        return s;
    }
    if (c->end - c->pos < len) {
        cur_fault(c, at, "string runs past the end of its record");
        return s;
    }
    if (memchr(c->p + c->pos, '\0', len)) {
        cur_fault(c, at, "string holds a NUL byte");
        return s;
    }
    s.p = (const char *)c->p + c->pos;
    s.len = len;
    c->pos += len;
    return s;
}

/* One record, parsed. */
struct rec {
    unsigned type;
    size_t at;  /* offset of the record header in the frame */
    size_t len; /* payload length */
    union {
        struct {
            struct hn_frame_str name, model;
            unsigned gpus;
        } node;
        struct {
            unsigned gpu;
            struct hn_frame_str uuid, pci, model;
        } gpu;
        struct {
            unsigned gpu, link, n;
            const uint8_t *items;
        } fields;
        struct hn_frame_xid xid;
        struct hn_frame_ibport ib;
        struct hn_frame_step step;
    } u;
};

/* Why a frame was rejected, for the caller's one-line message. */
struct fail_info {
    char why[128];
};

static int bad(struct fail_info *f, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(struct fail_info *f, size_t at, const char *fmt, ...)
{
    int n = snprintf(f->why, sizeof(f->why), "byte %zu: ", at);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(f->why))
        vsnprintf(f->why + n, sizeof(f->why) - (size_t)n, fmt, ap);
    va_end(ap);
    return -EBADMSG;
}

/* The fields STEP and PAUSE records start with: job to time_ns. */
static void take_step_head(struct cur *c, struct hn_frame_step *s)
{
    s->job = take_str(c);
    s->rank = (uint32_t)take(c, 4);
    s->local_rank = (uint32_t)take(c, 4);
    s->world = (uint32_t)take(c, 4);
    s->gpu = (unsigned)take(c, 2);
    s->step = take(c, 8);
    s->time_ns = take(c, 8);
}

/* Parses the record at off (data[0..len) holds at least the frame header). Checks the record
 * on its own: framing, field sizes, strings; not its place in the frame. */
static int parse_record(const uint8_t *data, size_t len, size_t off, struct rec *r,
                        struct fail_info *f)
{
    if (len - off < REC_HEADER_LEN)
        return bad(f, off, "truncated record header");
    r->type = data[off];
    r->at = off;
    uint32_t plen = get_u32(data + off + 1);
    if (plen > len - off - REC_HEADER_LEN)
        return bad(f, off, "record length %lu runs past the end of the frame", (unsigned long)plen);
    r->len = plen;
    struct cur c = {data, off + REC_HEADER_LEN, off + REC_HEADER_LEN + plen, NULL, 0};
    switch (r->type) {
    case HN_REC_NODE:
        r->u.node.name = take_str(&c);
        r->u.node.gpus = (unsigned)take(&c, 2);
        r->u.node.model = take_str(&c);
        break;
    case HN_REC_GPU:
        r->u.gpu.gpu = (unsigned)take(&c, 2);
        r->u.gpu.uuid = take_str(&c);
        r->u.gpu.pci = take_str(&c);
        r->u.gpu.model = take_str(&c);
        break;
    case HN_REC_SAMPLES:
    case HN_REC_LINK:
        r->u.fields.gpu = (unsigned)take(&c, 2);
        r->u.fields.link = r->type == HN_REC_LINK ? (unsigned)take(&c, 2) : 0;
        r->u.fields.n = (unsigned)take(&c, 2);
        if (c.bad)
            break;
        if (c.end - c.pos != (size_t)r->u.fields.n * FIELD_LEN)
            return bad(f, off, "record length %zu does not match its %u fields", r->len,
                       r->u.fields.n);
        r->u.fields.items = data + c.pos;
        break;
    case HN_REC_XID:
        r->u.xid.gpu = (unsigned)take(&c, 2);
        r->u.xid.code = (unsigned)take(&c, 4);
        r->u.xid.time_ns = take(&c, 8);
        r->u.xid.pci = take_str(&c);
        r->u.xid.kind = (unsigned)take(&c, 1);
        break;
    case HN_REC_END:
        break; /* empty in version 1; later bytes are ignored like any record's */
    case HN_REC_IBPORT:
        r->u.ib.device = take_str(&c);
        r->u.ib.port = (unsigned)take(&c, 2);
        r->u.ib.state = (unsigned)take(&c, 1);
        r->u.ib.phys_state = (unsigned)take(&c, 1);
        r->u.ib.rate_gbps = take_f64(&c);
        r->u.ib.link_downed = take(&c, 8);
        r->u.ib.symbol_errors = take(&c, 8);
        r->u.ib.link_error_recovery = take(&c, 8);
        break;
    case HN_REC_STEP:
        r->u.step.pause = 0;
        take_step_head(&c, &r->u.step);
        r->u.step.seconds = take_f64(&c);
        r->u.step.tokens = take_f64(&c);
        r->u.step.forward_s = take_f64(&c);
        r->u.step.backward_s = take_f64(&c);
        r->u.step.optimizer_s = take_f64(&c);
        r->u.step.comm_s = take_f64(&c);
        r->u.step.checkpoint = take(&c, 8);
        r->u.step.tflops = take_f64(&c);
        r->u.step.flops_per_token = take_f64(&c);
        /* Appended later: an older agent's STEP ends before it. */
        r->u.step.uid = c.end - c.pos >= 4 ? (uint32_t)take(&c, 4) : HN_FRAME_NO_U32;
        break;
    case HN_REC_PAUSE:
        take_step_head(&c, &r->u.step);
        r->u.step.pause = (unsigned)take(&c, 1);
        r->u.step.uid = (uint32_t)take(&c, 4);
        r->u.step.seconds = r->u.step.tokens = r->u.step.forward_s = NAN;
        r->u.step.backward_s = r->u.step.optimizer_s = r->u.step.comm_s = NAN;
        r->u.step.tflops = r->u.step.flops_per_token = NAN;
        r->u.step.checkpoint = HN_FRAME_NO_U64;
        if (!c.bad && r->u.step.pause == 0)
            return bad(f, off, "PAUSE record with kind 0");
        break;
    default:
        break; /* unknown: skipped */
    }
    if (c.bad)
        return bad(f, c.bad_at, "%s (record type %u at byte %zu)", c.bad, r->type, off);
    return 0;
}

/* Checks a record's place in the frame: NODE first and once, GPU indices below NODE's gpus. */
static int check_record(const struct rec *r, int first, unsigned gpus, struct fail_info *f)
{
    if (first != (r->type == HN_REC_NODE))
        return bad(f, r->at, "%s", first ? "first record is not NODE" : "second NODE record");
    unsigned gpu;
    switch (r->type) {
    case HN_REC_GPU:
        gpu = r->u.gpu.gpu;
        break;
    case HN_REC_SAMPLES:
    case HN_REC_LINK:
        gpu = r->u.fields.gpu;
        break;
    case HN_REC_XID:
        if (r->u.xid.gpu == HN_FRAME_NO_GPU)
            return 0;
        gpu = r->u.xid.gpu;
        break;
    case HN_REC_STEP:
    case HN_REC_PAUSE:
        if (r->u.step.gpu == HN_FRAME_NO_GPU)
            return 0;
        gpu = r->u.step.gpu;
        break;
    default:
        return 0;
    }
    if (gpu >= gpus)
        return bad(f, r->at + REC_HEADER_LEN, "GPU index %u not below NODE's %u GPUs", gpu, gpus);
    return 0;
}

/* Decodes a SAMPLES/LINK record's fields in chunks and hands each chunk to the sink. */
static int deliver_fields(const struct hn_frame_sink *s, void *ctx, const struct rec *r)
{
    struct hn_frame_field buf[HN_FRAME_CHUNK];
    const uint8_t *p = r->u.fields.items;
    unsigned left = r->u.fields.n;
    if ((r->type == HN_REC_SAMPLES && !s->samples) || (r->type == HN_REC_LINK && !s->link))
        return 0;
    while (left) {
        unsigned k = left < HN_FRAME_CHUNK ? left : HN_FRAME_CHUNK;
        for (unsigned i = 0; i < k; i++, p += FIELD_LEN) {
            buf[i].field = get_u16(p);
            buf[i].value = get_f64(p + 2);
        }
        int rc = r->type == HN_REC_SAMPLES
                     ? s->samples(ctx, r->u.fields.gpu, buf, k)
                     : s->link(ctx, r->u.fields.gpu, r->u.fields.link, buf, k);
        if (rc)
            return rc;
        left -= k;
    }
    return 0;
}

static int deliver(const struct hn_frame_sink *s, void *ctx, const struct rec *r)
{
    switch (r->type) {
    case HN_REC_NODE:
        return s->node ? s->node(ctx, r->u.node.name, r->u.node.gpus, r->u.node.model) : 0;
    case HN_REC_GPU:
        return s->gpu ? s->gpu(ctx, r->u.gpu.gpu, r->u.gpu.uuid, r->u.gpu.pci, r->u.gpu.model) : 0;
    case HN_REC_SAMPLES:
    case HN_REC_LINK:
        return deliver_fields(s, ctx, r);
    case HN_REC_XID:
        return s->xid ? s->xid(ctx, &r->u.xid) : 0;
    case HN_REC_IBPORT:
        return s->ibport ? s->ibport(ctx, &r->u.ib) : 0;
    case HN_REC_STEP:
    case HN_REC_PAUSE:
        return s->step ? s->step(ctx, &r->u.step) : 0;
    default:
        return 0;
    }
}

static void say(char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errsize, const char *fmt, ...)
{
    if (!err || !errsize)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errsize, fmt, ap);
    va_end(ap);
}

int hn_frame_decode(const void *data, size_t len, size_t max, const struct hn_frame_sink *sink,
                    void *ctx, char *err, size_t errsize)
{
    const uint8_t *d = data;
    struct fail_info f;
    struct rec r;
    memset(&r, 0, sizeof(r)); /* parse_record() sets what is read; this quiets the analyzer */
    if (err && errsize)
        err[0] = '\0';
    if (len > max) {
        say(err, errsize, "frame of %zu bytes is larger than %zu", len, max);
        return -E2BIG;
    }
    if (len < 4 || memcmp(d, HN_FRAME_MAGIC, 4) != 0) {
        say(err, errsize, "byte 0: bad magic (not an HNF1 frame)");
        return -EBADMSG;
    }
    if (len >= 6 && get_u16(d + 4) != HN_FRAME_VERSION) {
        say(err, errsize, "byte 4: frame version %u not supported (this build reads %d)",
            get_u16(d + 4), HN_FRAME_VERSION);
        return -EPROTONOSUPPORT;
    }
    if (len < HN_FRAME_HEADER_LEN) {
        say(err, errsize, "byte %zu: truncated header (%d bytes needed)", len, HN_FRAME_HEADER_LEN);
        return -EBADMSG;
    }

    /* Pass 1: validate everything, deliver nothing. */
    unsigned gpus = 0;
    int first = 1, ended = 0;
    int rc = 0;
    for (size_t off = HN_FRAME_HEADER_LEN; off < len; off = r.at + REC_HEADER_LEN + r.len) {
        if (ended) {
            rc = bad(&f, off, "data after the END record");
            goto out_bad;
        }
        if ((rc = parse_record(d, len, off, &r, &f)) || (rc = check_record(&r, first, gpus, &f)))
            goto out_bad;
        if (first)
            gpus = r.u.node.gpus;
        first = 0;
        ended = r.type == HN_REC_END;
    }
    if (!ended) {
        rc = bad(&f, len, "no END record (truncated frame)");
        goto out_bad;
    }

    /* Pass 2: the frame is valid; replay it. parse_record() cannot fail here. */
    if (!sink)
        return 0;
    if (sink->header) {
        struct hn_frame_header h = {get_u16(d + 4), get_u16(d + 6), get_u64(d + 8), get_u64(d + 16),
                                    get_u64(d + 24)};
        if ((rc = sink->header(ctx, &h)))
            goto out_stopped;
    }
    for (size_t off = HN_FRAME_HEADER_LEN; off < len; off = r.at + REC_HEADER_LEN + r.len) {
        if ((rc = parse_record(d, len, off, &r, &f)))
            goto out_bad;
        if ((rc = deliver(sink, ctx, &r)))
            goto out_stopped;
    }
    return 0;

out_stopped:
    say(err, errsize, "stopped by the sink (%d)", rc);
    return rc;
out_bad:
    say(err, errsize, "%s", f.why);
    return rc;
}
