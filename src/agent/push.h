/*
 * push.h - the agent's push to the controller: one frame (common/frame.h, docs/protocol.md)
 * per collection cycle, a bounded queue, and one sender thread that POSTs the frames in order
 * to CONTROLLER/v1/ingest with the cluster token.
 *
 * Two parts, both driven by agent.c:
 *
 *   struct hn_push_builder (collect thread) turns the collectors' state into one frame in a
 *   buffer it reuses: NODE, GPU identity records (on the first frame, when an identity
 *   changes, after frames were dropped, and every HN_PUSH_IDENTITY_EVERY frames so a
 *   restarted controller learns them again), SAMPLES of every GPU (every value that is not
 *   NaN), LINK samples of every NVLink, XID records for the Xid events of the cycle (from
 *   NVML: one per GPU whose event count grew, with the newest code, since the GPU set keeps a
 *   count and the last code; from the kernel log: one per report, its GPU found by PCI bus
 *   id, else HN_FRAME_NO_GPU) and IBPORT records of every port. boot_id is random per agent
 *   start; seq counts 1, 2, 3...
 *
 *   struct hn_push (opaque) owns the queue and the sender thread. hn_push_cycle() builds and
 *   queues a frame without blocking on the network: the queue is a ring of queue_max frames
 *   under a mutex, and when it is full the oldest frame (not the one being sent) is dropped
 *   and counted. The sender thread owns libcurl: it copies the oldest frame, POSTs it, and
 *   removes it from the queue only when the controller answered 2xx (accepted or duplicate)
 *   or refused it for good (4xx other than 408 and 429: logged rate-limited per status and
 *   counted, since resending a frame the controller cannot take would block every later
 *   one). 5xx, 408, 429, another status or no answer keep the frame and retry it after an
 *   exponential back-off (backoff_min_s doubling up to backoff_max_s). Frames therefore
 *   reach the controller in seq order, and a frame sent twice (answer lost) is recognised
 *   there by (boot_id, seq).
 *
 * hn_push_render() writes the houston_agent_push_* families (docs/metrics.md) on the collect
 * thread; the counters are read under the queue's mutex.
 */
#ifndef HN_PUSH_H
#define HN_PUSH_H

#include "agent/expo.h"
#include "agent/gpu.h"
#include "agent/ib.h"
#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

#define HN_PUSH_IDENTITY_EVERY 60  /* frames between two repeats of the GPU identities */
#define HN_PUSH_TOKEN_MAX      512 /* longest cluster token */
#define HN_PUSH_INGEST_PATH    "/v1/ingest"
#define HN_PUSH_CONTENT_TYPE   "application/x-houston-frame"

struct hn_steps_report;

/* What a frame is built from; every pointer is borrowed for the call. */
struct hn_push_sources {
    const char *hostname;
    const struct hn_gpu_set *gpus;       /* the GPU collector's state, or NULL */
    const void *xid;                     /* hn_collector_xid's state, or NULL */
    const void *ib;                      /* hn_collector_ib's state, or NULL */
    const struct hn_steps_report *steps; /* the cycle's step reports (hn_steps_cycle) */
    unsigned nsteps;
};

/* The frame builder; the caller owns it. Collect thread only. */
struct hn_push_builder {
    uint64_t boot_id;
    uint64_t seq;                         /* of the last frame built, 0 before the first */
    struct hn_buf frame;                  /* the last frame built: frame.data[0..frame.len) */
    unsigned since_identity;              /* frames built since the identities were sent */
    int resend_identity;                  /* send every identity in the next frame */
    uint64_t identity[HN_MAX_GPUS];       /* hash of the identity last sent per GPU, 0: none */
    uint64_t xid_seen[HN_MAX_GPUS];       /* NVML Xid events already reported per GPU */
    uint64_t ib_last[HN_IB_MAX_PORTS][3]; /* last link_downed, symbol_error, recovery read */
};

/* boot_id 0 draws a random one (getrandom). hn_push_builder_fini() frees the buffer. */
void hn_push_builder_init(struct hn_push_builder *b, uint64_t boot_id);
void hn_push_builder_fini(struct hn_push_builder *b);
/* Builds the next frame (seq + 1) stamped with time_ns (Unix nanoseconds) into b->frame.
 * Returns 0, or the writer's error (-ENOSPC past HN_FRAME_MAX); seq advances either way so
 * that a seq is never reused. */
int hn_push_build(struct hn_push_builder *b, const struct hn_push_sources *src, uint64_t time_ns);
/* Makes the next frame carry every GPU identity again. */
void hn_push_builder_resend_identity(struct hn_push_builder *b);

/* Settings of a push; strings are copied by hn_push_new(). */
struct hn_push_config {
    const char *url;          /* controller base URL; frames go to url + HN_PUSH_INGEST_PATH */
    const char *token;        /* cluster token, NULL or "" for none */
    unsigned queue_max;       /* frames kept, >= 1 */
    double backoff_min_s;     /* first retry delay (the agent: 1) */
    double backoff_max_s;     /* longest retry delay (the agent: 60) */
    double connect_timeout_s; /* (the agent: 2) */
    double timeout_s;         /* whole request (the agent: 10) */
    uint64_t boot_id;         /* 0: random */
};

struct hn_push_stats {
    uint64_t frames;  /* frames built and queued */
    uint64_t sent;    /* frames the controller answered 2xx */
    uint64_t refused; /* frames answered 4xx other than 408 and 429, all codes */
    uint64_t dropped; /* frames dropped because the queue was full */
    uint64_t errors;  /* attempts that failed and will be retried */
    uint64_t build_errors;
    unsigned queued;               /* frames waiting, the one being sent included */
    double last_success;           /* Unix time of the last 2xx, 0 before the first */
    uint64_t refused_by_code[100]; /* refused, by status - 400 */
};

struct hn_push;

/* Returns a push (not yet sending), or NULL with a reason in err for a bad URL or token. */
struct hn_push *hn_push_new(const struct hn_push_config *cfg, char *err, size_t errsize);
/* Starts the sender thread. 0 or a negative errno. */
int hn_push_start(struct hn_push *p);
/* Builds the next frame from src and queues it (hn_push_enqueue). Collect thread. */
int hn_push_cycle(struct hn_push *p, const struct hn_push_sources *src);
/* Queues a copy of frame[0..len) behind the others, dropping the oldest one waiting when the
 * queue is full. 0, or -ENOSPC for a frame over HN_FRAME_MAX. Any thread; never waits on the
 * network. */
int hn_push_enqueue(struct hn_push *p, const void *frame, size_t len);
/* Stops the sender: it keeps sending what is queued for at most flush_s seconds (an attempt
 * in progress is cut at the deadline), then the thread is joined. Frames not sent are lost
 * with the process. Safe to call when not started, and twice. */
void hn_push_stop(struct hn_push *p, double flush_s);
/* Stops (flush 0) if needed and frees everything. NULL is allowed. */
void hn_push_free(struct hn_push *p);
/* The builder hn_push_cycle() uses (for its boot_id and seq). */
const struct hn_push_builder *hn_push_get_builder(const struct hn_push *p);
void hn_push_get_stats(struct hn_push *p, struct hn_push_stats *st);
void hn_push_render(struct hn_push *p, struct hn_expo *e);

/*
 * Reads the cluster token: the first line of path, blanks trimmed, 1 to HN_PUSH_TOKEN_MAX - 1
 * visible ASCII characters. A file readable by group or others is used with a warning.
 * Returns 0, or a negative errno with a reason in err (never the token itself).
 */
int hn_push_read_token(const char *path, char *out, size_t size, char *err, size_t errsize);

/* Parses a PCI bus id as NVML ("00000000:53:00.0") or the kernel log ("PCI:0000:53:00") write
 * it into (domain, bus, device); the function is ignored. 0 or -EINVAL. */
int hn_push_parse_pci(const char *s, unsigned *domain, unsigned *bus, unsigned *dev);

#endif
