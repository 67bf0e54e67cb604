/*
 * fuzz_frame.c - libFuzzer target for the agent-to-controller frame decoder (src/common/frame.c).
 *
 * The input is a candidate frame. Besides not crashing or reading outside the input, the
 * decoder must keep frame.h's promises to its sink: the header first, NODE once and first,
 * strings of at most HN_FRAME_STR_MAX bytes without NUL inside the input, 1 to HN_FRAME_CHUNK
 * fields per call, GPU indices below NODE's gpus, nothing delivered for a rejected frame. The
 * sink reads every field. A frame that decodes is written again with the writer, which must
 * accept every value the decoder delivered, and the copy must decode to the same events.
 */
#include "common/frame.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
    const uint8_t *lo, *hi; /* the input being decoded */
    uint64_t digest;        /* FNV-1a over every event, flags excepted */
    unsigned long calls;
    int seen_header, seen_node;
    unsigned gpus;
    struct hn_frame_writer *w; /* when set, every event is written again */
};

static void mix(struct fz *z, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        z->digest ^= b[i];
        z->digest *= 1099511628211ull;
    }
}

static void mix_u(struct fz *z, uint64_t v)
{
    mix(z, &v, sizeof(v));
}

static void mix_str(struct fz *z, struct hn_frame_str s)
{
    if (s.len > HN_FRAME_STR_MAX)
        abort();
    if (s.len) {
        const uint8_t *p = (const uint8_t *)s.p;
        if (p < z->lo || p + s.len > z->hi || memchr(s.p, '\0', s.len))
            abort();
    }
    mix_u(z, s.len);
    mix(z, s.p, s.len);
}

/* Every callback but header must come after header and NODE. */
static void enter(struct fz *z, int is_node)
{
    z->calls++;
    if (!z->seen_header || is_node == z->seen_node)
        abort();
}

/* A NUL-terminated copy of a frame string for the writer (strings hold no NUL). */
static const char *cstr(char *buf, struct hn_frame_str s)
{
    memcpy(buf, s.p, s.len);
    buf[s.len] = '\0';
    return buf;
}

static int on_header(void *ctx, const struct hn_frame_header *h)
{
    struct fz *z = ctx;
    if (z->seen_header++ || z->calls++)
        abort();
    if (h->version != HN_FRAME_VERSION || h->flags > 0xffff)
        abort();
    mix_u(z, h->boot_id);
    mix_u(z, h->seq);
    mix_u(z, h->time_ns);
    return 0;
}

static int on_node(void *ctx, struct hn_frame_str name, unsigned gpus, struct hn_frame_str model)
{
    struct fz *z = ctx;
    enter(z, 1);
    z->seen_node = 1;
    if (gpus > 0xffff)
        abort();
    z->gpus = gpus;
    mix_str(z, name);
    mix_u(z, gpus);
    mix_str(z, model);
    if (z->w) {
        char a[HN_FRAME_STR_MAX + 1], b[HN_FRAME_STR_MAX + 1];
        hn_frame_node(z->w, cstr(a, name), gpus, cstr(b, model));
    }
    return 0;
}

static int on_gpu(void *ctx, unsigned gpu, struct hn_frame_str uuid, struct hn_frame_str pci,
                  struct hn_frame_str model)
{
    struct fz *z = ctx;
    enter(z, 0);
    if (gpu >= z->gpus)
        abort();
    mix_u(z, gpu);
    mix_str(z, uuid);
    mix_str(z, pci);
    mix_str(z, model);
    if (z->w) {
        char a[HN_FRAME_STR_MAX + 1], b[HN_FRAME_STR_MAX + 1], c[HN_FRAME_STR_MAX + 1];
        hn_frame_gpu(z->w, gpu, cstr(a, uuid), cstr(b, pci), cstr(c, model));
    }
    return 0;
}

static void fields(struct fz *z, unsigned type, unsigned gpu, unsigned link,
                   const struct hn_frame_field *f, unsigned n)
{
    enter(z, 0);
    if (gpu >= z->gpus || link > 0xffff || n < 1 || n > HN_FRAME_CHUNK)
        abort();
    for (unsigned i = 0; i < n; i++) {
        if (f[i].field > 0xffff)
            abort();
        uint64_t bits;
        memcpy(&bits, &f[i].value, sizeof(bits));
        /* One event per field, so that the digest does not depend on record boundaries. */
        mix_u(z, type);
        mix_u(z, gpu);
        mix_u(z, link);
        mix_u(z, f[i].field);
        mix_u(z, bits);
        if (!z->w)
            continue;
        if (type == HN_REC_SAMPLES)
            hn_frame_sample(z->w, gpu, f[i].field, f[i].value);
        else
            hn_frame_link_sample(z->w, gpu, link, f[i].field, f[i].value);
    }
}

static int on_samples(void *ctx, unsigned gpu, const struct hn_frame_field *f, unsigned n)
{
    fields(ctx, HN_REC_SAMPLES, gpu, 0, f, n);
    return 0;
}

static int on_link(void *ctx, unsigned gpu, unsigned link, const struct hn_frame_field *f,
                   unsigned n)
{
    fields(ctx, HN_REC_LINK, gpu, link, f, n);
    return 0;
}

static int on_xid(void *ctx, const struct hn_frame_xid *x)
{
    struct fz *z = ctx;
    enter(z, 0);
    if ((x->gpu >= z->gpus && x->gpu != HN_FRAME_NO_GPU) || x->kind > 0xff)
        abort();
    mix_u(z, x->gpu);
    mix_u(z, x->code);
    mix_u(z, x->time_ns);
    mix_str(z, x->pci);
    mix_u(z, x->kind);
    if (z->w)
        hn_frame_xid(z->w, x);
    return 0;
}

static int on_ibport(void *ctx, const struct hn_frame_ibport *p)
{
    struct fz *z = ctx;
    enter(z, 0);
    if (p->port > 0xffff || p->state > 0xff || p->phys_state > 0xff)
        abort();
    mix_str(z, p->device);
    mix_u(z, p->port);
    mix_u(z, p->state);
    mix_u(z, p->phys_state);
    uint64_t bits;
    memcpy(&bits, &p->rate_gbps, sizeof(bits));
    mix_u(z, bits);
    mix_u(z, p->link_downed);
    mix_u(z, p->symbol_errors);
    mix_u(z, p->link_error_recovery);
    if (z->w)
        hn_frame_ibport(z->w, p);
    return 0;
}

static const struct hn_frame_sink sink = {
    .header = on_header,
    .node = on_node,
    .gpu = on_gpu,
    .samples = on_samples,
    .link = on_link,
    .xid = on_xid,
    .ibport = on_ibport,
};

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Decodes data into z, writing the events to w when it is not NULL; returns
 * hn_frame_decode()'s result after checking what a failure must look like. */
static int run(struct fz *z, const uint8_t *data, size_t size, struct hn_frame_writer *w)
{
    char err[160];
    memset(z, 0, sizeof(*z));
    z->lo = data;
    z->hi = data + size;
    z->digest = 14695981039346656037ull;
    z->w = w;
    int rc = hn_frame_decode(data, size, HN_FRAME_MAX, &sink, z, err, sizeof(err));
    if (rc != 0 && rc != -EBADMSG && rc != -EPROTONOSUPPORT && rc != -E2BIG)
        abort();
    if (rc != 0 && (z->calls != 0 || memchr(err, '\0', sizeof(err)) == NULL || !err[0]))
        abort();
    if (rc == 0 && (!z->seen_header || !z->seen_node))
        abort();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz z;
    if (run(&z, data, size, NULL) != 0)
        return 0;
    uint64_t want = z.digest;
    /* Validation alone agrees, and so does the size limit. */
    if (hn_frame_decode(data, size, HN_FRAME_MAX, NULL, NULL, NULL, 0) != 0 ||
        hn_frame_decode(data, size, size - 1, NULL, NULL, NULL, 0) != -E2BIG)
        abort();

    /* Write the events again: the writer accepts them and the copy means the same. */
    struct hn_buf out;
    hn_buf_init(&out, HN_FRAME_MAX);
    struct hn_frame_writer w;
    hn_frame_begin(&w, &out, le64(data + 8), le64(data + 16), le64(data + 24));
    if (run(&z, data, size, &w) != 0 || z.digest != want || hn_frame_end(&w) != 0)
        abort();
    uint8_t *copy = malloc(out.len);
    if (!copy)
        abort();
    memcpy(copy, out.data, out.len);
    if (run(&z, copy, out.len, NULL) != 0 || z.digest != want)
        abort();
    free(copy);
    hn_buf_fini(&out);
    return 0;
}
