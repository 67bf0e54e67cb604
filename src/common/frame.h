/*
 * frame.h - the agent-to-controller frame: a compact, versioned binary batch of telemetry.
 *
 * An agent POSTs one frame per collection cycle to the controller (docs/protocol.md, which
 * gives the format byte by byte). A frame is a fixed header followed by typed records:
 *
 *   header  "HNF1" | version u16 | flags u16 | boot_id u64 | seq u64 | time_ns u64  (32 bytes)
 *   record  type u8 | length u32 | payload[length]                                    (repeated)
 *
 * All integers are little-endian; doubles are IEEE-754 binary64, little-endian, any bit
 * pattern (NaN means "unavailable"); a string is a u16 length and that many bytes (no NUL byte
 * inside, no terminator, at most HN_FRAME_STR_MAX). No flags are defined in version 1: writers
 * send 0, readers ignore them. (boot_id, seq) identify a frame: boot_id is random per agent
 * start, seq counts from 1, so the controller accepts each frame once however often an agent
 * resends it.
 *
 * Records (payloads):
 *   NODE    name str | gpus u16 | model str                           first record, once
 *   GPU     gpu u16 | uuid str | pci_bus_id str | model str           identity, when it changes
 *   SAMPLES gpu u16 | n u16 | n x (field u16 | value f64)             fields: common/fields.h
 *   LINK    gpu u16 | link u16 | n u16 | n x (field u16 | value f64)  enum hn_link_field
 *   XID     gpu u16 (0xffff: not mapped) | code u32 | time_ns u64 | pci str |
 *           kind u8 (1 Xid, 2 SXid)
 *   IBPORT  device str | port u16 | state u8 | phys_state u8 | rate_gbps f64 |
 *           link_downed u64 | symbol_errors u64 | link_error_recovery u64
 *   STEP    job str | rank u32 | local_rank u32 | world u32 | gpu u16 | step u64 |
 *           time_ns u64 | seconds f64 | tokens f64 | forward f64 | backward f64 |
 *           optimizer f64 | comm f64 | checkpoint u64 | tflops f64 |
 *           flops_per_token f64 [| uid u32]
 *                                                     one training step of one rank
 *                                                     (docs/steps.md); u32 0xffffffff and
 *                                                     u64 all-ones: unknown; f64 NaN: unknown
 *   PAUSE   job str | rank u32 | local_rank u32 | world u32 | gpu u16 | step u64 |
 *           time_ns u64 | kind u8 | uid u32            a rank's notice that its job stops
 *                                                     stepping on purpose after step (a
 *                                                     checkpoint save...); kind 1..255 (1
 *                                                     checkpoint, 2 eval, 3 other; 0 invalid)
 *   END     (empty)                                                   last record, once
 *
 * END marks the end, so a frame cut at a record boundary is not mistaken for a shorter valid
 * one. A frame is invalid unless its first record is its only NODE, END is its last record and
 * ends exactly at the end of the data, and every GPU index in GPU, SAMPLES, LINK, XID, STEP and
 * PAUSE records is below NODE's gpus (XID, STEP and PAUSE may also say HN_FRAME_NO_GPU), so a
 * reader can index per-GPU arrays with it. SAMPLES and LINK lengths must equal their n exactly.
 * A NODE, GPU, XID, IBPORT, STEP, PAUSE or END payload shorter than its fields, or a length past
 * the end of the frame, makes the frame invalid, while bytes after their last field are ignored
 * (room for fields appended later). Fields in brackets were appended in a later release and may be
 * missing (an older writer): STEP's uid then reads as HN_FRAME_NO_U32. Unknown record types are
 * skipped (newer agents talk to older controllers); unknown field ids and Xid kinds reach the sink
 * unchanged, for it to ignore.
 *
 * Writing: struct hn_frame_writer appends to a caller's hn_buf (capped), so an agent reuses one
 * buffer per cycle; it allocates nothing but that buffer's growth. Reading: hn_frame_decode()
 * validates the whole frame first and only then calls the sink's callbacks in record order, so
 * a bad frame delivers nothing (all or nothing); it allocates nothing. Both are reentrant.
 */
#ifndef HN_FRAME_H
#define HN_FRAME_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

#define HN_FRAME_MAGIC      "HNF1"
#define HN_FRAME_VERSION    1
#define HN_FRAME_HEADER_LEN 32
#define HN_FRAME_STR_MAX    255
#define HN_FRAME_MAX        (4u << 20) /* largest frame a controller accepts by default */
#define HN_FRAME_NO_GPU     0xffffu
#define HN_FRAME_CHUNK      256         /* most fields handed to one samples/link callback */
#define HN_FRAME_NO_U32     0xffffffffu /* STEP: rank, local rank or world unknown */
#define HN_FRAME_NO_U64     0xffffffffffffffffu /* STEP: checkpoint unknown */

enum hn_frame_record {
    HN_REC_NODE = 1,
    HN_REC_GPU = 2,
    HN_REC_SAMPLES = 3,
    HN_REC_LINK = 4,
    HN_REC_XID = 5,
    HN_REC_IBPORT = 6,
    HN_REC_STEP = 7,
    HN_REC_PAUSE = 8, /* added with the pause notice: older controllers skip it */
    HN_REC_END = 0xff,
};

/* Decoded strings point into the frame buffer and are not NUL-terminated. */
struct hn_frame_str {
    const char *p;
    size_t len;
};

struct hn_frame_header {
    unsigned version;
    unsigned flags;
    uint64_t boot_id;
    uint64_t seq;
    uint64_t time_ns;
};

struct hn_frame_field {
    unsigned field;
    double value;
};

struct hn_frame_xid {
    unsigned gpu;
    unsigned code;
    uint64_t time_ns;
    struct hn_frame_str pci;
    unsigned kind;
};

struct hn_frame_ibport {
    struct hn_frame_str device;
    unsigned port;
    unsigned state;
    unsigned phys_state;
    double rate_gbps;
    uint64_t link_downed;
    uint64_t symbol_errors;
    uint64_t link_error_recovery;
};

/* One step of one rank, as an agent received it from a training process; or, with pause set,
 * a pause notice (written as a PAUSE record: only job, ranks, gpu, step, time_ns and uid are
 * sent, the decoder gives the rest as unknown). */
struct hn_frame_step {
    struct hn_frame_str job;
    uint32_t rank, local_rank, world; /* HN_FRAME_NO_U32: unknown */
    unsigned gpu;                     /* HN_FRAME_NO_GPU: not mapped */
    uint64_t step;
    uint64_t time_ns; /* when the agent received it, Unix nanoseconds */
    double seconds, tokens, forward_s, backward_s, optimizer_s, comm_s; /* NaN: unknown */
    uint64_t checkpoint;                                                /* HN_FRAME_NO_U64 */
    double tflops, flops_per_token;
    uint32_t uid;   /* the sending process's user id, as the agent's kernel gave it (SO_PASSCRED);
                     * HN_FRAME_NO_U32: unknown (an older agent) */
    unsigned pause; /* 0: a step; else a PAUSE record's kind (enum hn_pause_kind) */
};

/* Callbacks for hn_frame_decode(); any may be NULL. header comes first, then one call per
 * record in frame order, except that a SAMPLES or LINK record's fields are decoded in chunks of
 * at most HN_FRAME_CHUNK into an array on the decoder's stack, one call per chunk (1 <= n <=
 * HN_FRAME_CHUNK; an empty record makes no call): a record may arrive in several consecutive
 * calls with the same gpu (and link). Strings and arrays are valid during the call only. A
 * callback returning non-zero stops decoding and becomes hn_frame_decode()'s result. */
struct hn_frame_sink {
    int (*header)(void *ctx, const struct hn_frame_header *h);
    int (*node)(void *ctx, struct hn_frame_str name, unsigned gpus, struct hn_frame_str model);
    int (*gpu)(void *ctx, unsigned gpu, struct hn_frame_str uuid, struct hn_frame_str pci,
               struct hn_frame_str model);
    int (*samples)(void *ctx, unsigned gpu, const struct hn_frame_field *f, unsigned n);
    int (*link)(void *ctx, unsigned gpu, unsigned link, const struct hn_frame_field *f, unsigned n);
    int (*xid)(void *ctx, const struct hn_frame_xid *x);
    int (*ibport)(void *ctx, const struct hn_frame_ibport *p);
    int (*step)(void *ctx, const struct hn_frame_step *s); /* STEP and PAUSE records */
};

/*
 * Validates data[0..len) and, if it is a well-formed frame, replays it into sink (NULL: only
 * validate). Returns 0, -E2BIG (len > max, checked first), -EBADMSG (malformed: bad magic,
 * truncated header or record, bad string, NODE missing, not first or repeated, END missing or
 * not last, GPU index out of range, n not matching the length), -EPROTONOSUPPORT (a version
 * this build does not read; checked after the magic), or a callback's non-zero value. On a
 * negative result err (when not NULL) holds a one-line reason naming the byte offset.
 * Never reads outside data[0..len).
 */
int hn_frame_decode(const void *data, size_t len, size_t max, const struct hn_frame_sink *sink,
                    void *ctx, char *err, size_t errsize);

/* The writer's state; the caller owns it, hn_frame_begin() sets every member. */
struct hn_frame_writer {
    struct hn_buf *out;
    size_t rec_start; /* offset of the open SAMPLES/LINK record's header, 0 when none */
    unsigned rec_type;
    size_t count_at; /* offset of the open SAMPLES/LINK record's n */
    unsigned rec_gpu, rec_link;
    unsigned count;
    int has_node;  /* NODE was written */
    unsigned gpus; /* NODE's gpus: GPU indices must be below it */
    int error;     /* first error (-ENOSPC when out's cap is hit, -EINVAL for a bad argument) */
};

/*
 * Starts a frame in out (reset first); hn_frame_node() must come next. Errors are sticky: once
 * a call fails the later ones do nothing, and hn_frame_end() returns the first error. -EINVAL
 * means a record before NODE or a second NODE, a string longer than HN_FRAME_STR_MAX (or, in
 * the xid/ibport structs, holding a NUL), a number wider than its wire field, or a GPU index
 * not below NODE's gpus (XID: or HN_FRAME_NO_GPU). NULL strings are written as empty ones.
 */
void hn_frame_begin(struct hn_frame_writer *w, struct hn_buf *out, uint64_t boot_id, uint64_t seq,
                    uint64_t time_ns);
void hn_frame_node(struct hn_frame_writer *w, const char *name, unsigned gpus, const char *model);
void hn_frame_gpu(struct hn_frame_writer *w, unsigned gpu, const char *uuid, const char *pci,
                  const char *model);
/* Consecutive samples of one GPU share a SAMPLES record (at most 65535 per record). */
void hn_frame_sample(struct hn_frame_writer *w, unsigned gpu, unsigned field, double value);
void hn_frame_link_sample(struct hn_frame_writer *w, unsigned gpu, unsigned link, unsigned field,
                          double value);
void hn_frame_xid(struct hn_frame_writer *w, const struct hn_frame_xid *x);
void hn_frame_ibport(struct hn_frame_writer *w, const struct hn_frame_ibport *p);
void hn_frame_step(struct hn_frame_writer *w, const struct hn_frame_step *s);
/* Closes the open record and appends END; call it once per frame. Returns 0, -EINVAL when no
 * NODE was written, or the first error; on 0 the frame is out->data[0..out->len). */
int hn_frame_end(struct hn_frame_writer *w);

#endif
