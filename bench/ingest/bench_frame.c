/*
 * bench_frame.c - how fast the controller can take in samples: decoding one agent frame
 * (src/common/frame.c) against parsing the same samples rendered as Prometheus text, the peer,
 * measured in the same run on one core.
 *
 * usage: bench_frame [SECONDS]   (CPU seconds per measurement, default 1)
 *
 * The node is 8 GPUs x 40 fields plus 8 x 18 NVLinks x 5 fields (1040 samples). The frame is
 * written with hn_frame_*; the text with agent/expo.h and the labels the agent puts on its own
 * series (gpu, uuid, pci_bus_id, device, model_name, hostname, link). The peer parser is
 * hand-rolled and lean: one pass per line, labels scanned in place, gpu/link read as integers,
 * values converted with strtod; it does not map metric names to field ids, which an ingest
 * would have to do, so the ratio it gives is a lower bound. Both sinks add up every value and
 * index, and the totals are checked to agree.
 *
 * Prints key=value lines:
 *   samples_per_frame, frame_bytes, text_bytes
 *   encode_ns_per_sample                          writing the frame
 *   frame_decode_samples_per_s                    goal >= 5e6 per core
 *   text_parse_samples_per_s, ratio_frame_over_text
 */
#include "agent/expo.h"
#include "common/buf.h"
#include "common/fields.h"
#include "common/frame.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GPUS    8
#define LINKS   18
#define FIELDS  40 /* of the HN_F_* GPU fields, the first 40 */
#define NOT_SET 0xffffffffu

struct tally {
    unsigned long samples;
    double sum;
    unsigned long index_sum; /* gpu + link + 1 per sample */
};

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A plausible value for each field: clocks, temperatures, watts, counters, MiB. */
static double gpu_value(unsigned g, unsigned f)
{
    switch (f % 5) {
    case 0:
        return 1980 - 15.0 * g;
    case 1:
        return 41.5 + g + f * 0.25;
    case 2:
        return 312.457 + 3.1 * g;
    case 3:
        return 0;
    default:
        return 81559.0 - 1024.0 * f;
    }
}

static double link_value(unsigned g, unsigned l, unsigned f)
{
    return f == HN_L_UP ? 1 : (double)((g * 7 + l * 3 + f) % 11);
}

static void write_frame(struct hn_buf *b, uint64_t seq)
{
    struct hn_frame_writer w;
    hn_frame_begin(&w, b, 0x1234567890abcdefull, seq, 1764460800000000000ull);
    hn_frame_node(&w, "gpu-node-017", GPUS, "NVIDIA H100 80GB HBM3");
    for (unsigned g = 0; g < GPUS; g++) {
        char uuid[64], pci[32];
        snprintf(uuid, sizeof(uuid), "GPU-%08x-4b3c-9d2e-8f1a-%012x", 0x5ca1ab1eu + g, g);
        snprintf(pci, sizeof(pci), "00000000:%02X:00.0", 0x18 + 0x11 * g);
        hn_frame_gpu(&w, g, uuid, pci, "NVIDIA H100 80GB HBM3");
    }
    for (unsigned g = 0; g < GPUS; g++)
        for (unsigned f = 0; f < FIELDS; f++)
            hn_frame_sample(&w, g, f, gpu_value(g, f));
    for (unsigned g = 0; g < GPUS; g++)
        for (unsigned l = 0; l < LINKS; l++)
            for (unsigned f = 0; f < HN_L_COUNT; f++)
                hn_frame_link_sample(&w, g, l, f, link_value(g, l, f));
    if (hn_frame_end(&w) != 0) {
        fprintf(stderr, "bench_frame: writing the frame failed\n");
        exit(1);
    }
}

static void gpu_labels(char *buf, size_t size, size_t *len, unsigned g)
{
    char idx[16], uuid[64], pci[32], dev[32];
    snprintf(idx, sizeof(idx), "%u", g);
    snprintf(uuid, sizeof(uuid), "GPU-%08x-4b3c-9d2e-8f1a-%012x", 0x5ca1ab1eu + g, g);
    snprintf(pci, sizeof(pci), "00000000:%02X:00.0", 0x18 + 0x11 * g);
    snprintf(dev, sizeof(dev), "nvidia%u", g);
    *len = 0;
    buf[0] = '\0';
    hn_expo_label(buf, size, len, "gpu", idx);
    hn_expo_label(buf, size, len, "uuid", uuid);
    hn_expo_label(buf, size, len, "pci_bus_id", pci);
    hn_expo_label(buf, size, len, "device", dev);
    hn_expo_label(buf, size, len, "model_name", "NVIDIA H100 80GB HBM3");
    hn_expo_label(buf, size, len, "hostname", "gpu-node-017");
}

static void write_text(struct hn_buf *b)
{
    struct hn_expo e;
    hn_buf_reset(b);
    hn_expo_init(&e, b);
    char name[64], labels[512];
    size_t len;
    for (unsigned f = 0; f < FIELDS; f++) {
        snprintf(name, sizeof(name), "houston_gpu_field_%02u", f);
        hn_expo_family(&e, name, "A GPU quantity.", HN_GAUGE);
        for (unsigned g = 0; g < GPUS; g++) {
            gpu_labels(labels, sizeof(labels), &len, g);
            hn_expo_sample(&e, name, labels, gpu_value(g, f));
        }
    }
    for (unsigned f = 0; f < HN_L_COUNT; f++) {
        snprintf(name, sizeof(name), "houston_gpu_nvlink_field_%u_total", f);
        hn_expo_family(&e, name, "An NVLink quantity.", HN_COUNTER);
        for (unsigned g = 0; g < GPUS; g++)
            for (unsigned l = 0; l < LINKS; l++) {
                char num[16];
                gpu_labels(labels, sizeof(labels), &len, g);
                snprintf(num, sizeof(num), "%u", l);
                hn_expo_label(labels, sizeof(labels), &len, "link", num);
                hn_expo_sample(&e, name, labels, link_value(g, l, f));
            }
    }
    if (e.truncated) {
        fprintf(stderr, "bench_frame: text buffer too small\n");
        exit(1);
    }
}

/* ---- the frame side ---- */

static int on_samples(void *ctx, unsigned gpu, const struct hn_frame_field *f, unsigned n)
{
    struct tally *t = ctx;
    for (unsigned i = 0; i < n; i++) {
        t->sum += f[i].value;
        t->index_sum += gpu + 1;
    }
    t->samples += n;
    return 0;
}

static int on_link(void *ctx, unsigned gpu, unsigned link, const struct hn_frame_field *f,
                   unsigned n)
{
    struct tally *t = ctx;
    for (unsigned i = 0; i < n; i++) {
        t->sum += f[i].value;
        t->index_sum += gpu + link + 1;
    }
    t->samples += n;
    return 0;
}

static const struct hn_frame_sink sink = {.samples = on_samples, .link = on_link};

/* ---- the peer: Prometheus text, hand-rolled ---- */

/* Reads the decimal digits of a label value; NOT_SET when there are none. */
static unsigned label_uint(const char *p, const char *end)
{
    unsigned v = 0;
    if (p == end)
        return NOT_SET;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return NOT_SET;
        v = v * 10 + (unsigned)(*p - '0');
    }
    return v;
}

/* Parses text[0..len) (NUL-terminated, as hn_buf keeps it). Returns 0 or -1 on a bad line. */
static int parse_text(const char *text, size_t len, struct tally *t)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        if (*p == '#' || *p == '\n') {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
            continue;
        }
        while (p < end && *p != '{' && *p != ' ')
            p++; /* the metric name */
        unsigned gpu = NOT_SET, link = NOT_SET;
        if (p < end && *p == '{') {
            p++;
            while (p < end && *p != '}') {
                const char *key = p;
                while (p < end && *p != '=')
                    p++;
                size_t klen = (size_t)(p - key);
                if (end - p < 2 || p[1] != '"')
                    return -1;
                p += 2;
                const char *val = p;
                while (p < end && *p != '"')
                    p += *p == '\\' ? 2 : 1;
                if (p >= end)
                    return -1;
                if (klen == 3 && memcmp(key, "gpu", 3) == 0)
                    gpu = label_uint(val, p);
                else if (klen == 4 && memcmp(key, "link", 4) == 0)
                    link = label_uint(val, p);
                p++;
                if (p < end && *p == ',')
                    p++;
            }
            p++;
        }
        if (p >= end || *p != ' ' || gpu == NOT_SET)
            return -1;
        char *after;
        double v = strtod(p + 1, &after);
        if (after == p + 1)
            return -1;
        p = after;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
        t->sum += v;
        t->index_sum += gpu + (link == NOT_SET ? 0 : link) + 1;
        t->samples++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    double budget = 1.0;
    if (argc > 1 && (hn_parse_double(argv[1], &budget) != 0 || budget <= 0)) {
        fprintf(stderr, "usage: bench_frame [SECONDS]\n");
        return 2;
    }
    struct hn_buf frame, text;
    hn_buf_init(&frame, HN_FRAME_MAX);
    hn_buf_init(&text, 16u << 20);
    write_frame(&frame, 1);
    write_text(&text);
    const unsigned long per_frame = GPUS * FIELDS + GPUS * LINKS * HN_L_COUNT;

    /* Encoding, for the agent's side of the budget. */
    unsigned long runs = 0;
    double t0 = cpu_s(), t1;
    do {
        for (int i = 0; i < 64; i++)
            write_frame(&frame, ++runs);
        t1 = cpu_s();
    } while (t1 - t0 < budget / 4);
    double encode_ns = (t1 - t0) * 1e9 / (double)(runs * per_frame);

    /* Decoding frames. */
    struct tally a = {0, 0, 0};
    char err[160];
    runs = 0;
    t0 = cpu_s();
    do {
        for (int i = 0; i < 256; i++, runs++)
            if (hn_frame_decode(frame.data, frame.len, HN_FRAME_MAX, &sink, &a, err, sizeof(err)) !=
                0) {
                fprintf(stderr, "bench_frame: decode failed: %s\n", err);
                return 1;
            }
        t1 = cpu_s();
    } while (t1 - t0 < budget);
    double frame_rate = (double)a.samples / (t1 - t0);
    unsigned long frame_runs = runs;

    /* Parsing the same samples as text. */
    struct tally b = {0, 0, 0};
    runs = 0;
    t0 = cpu_s();
    do {
        for (int i = 0; i < 4; i++, runs++)
            if (parse_text(text.data, text.len, &b) != 0) {
                fprintf(stderr, "bench_frame: text parse failed\n");
                return 1;
            }
        t1 = cpu_s();
    } while (t1 - t0 < budget);
    double text_rate = (double)b.samples / (t1 - t0);

    /* Both saw the same samples. */
    if (a.samples != frame_runs * per_frame || b.samples != runs * per_frame ||
        a.index_sum / frame_runs != b.index_sum / runs ||
        fabs(a.sum / (double)frame_runs - b.sum / (double)runs) >
            1e-9 * fabs(a.sum / (double)frame_runs)) {
        fprintf(stderr, "bench_frame: the two sides disagree\n");
        return 1;
    }

    printf("samples_per_frame=%lu\n", per_frame);
    printf("frame_bytes=%zu\n", frame.len);
    printf("text_bytes=%zu\n", text.len);
    printf("encode_ns_per_sample=%.1f\n", encode_ns);
    printf("frame_decode_samples_per_s=%.0f\n", frame_rate);
    printf("text_parse_samples_per_s=%.0f\n", text_rate);
    printf("ratio_frame_over_text=%.1f\n", frame_rate / text_rate);
    hn_buf_fini(&frame);
    hn_buf_fini(&text);
    return 0;
}
