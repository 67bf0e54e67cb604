/*
 * frame_sink.c - hn_frame_sink, a stand-in for the controller's ingest endpoint, for the
 * agent's push test (tests/integration/test_push.sh) before `houston control` exists.
 *
 *   hn_frame_sink --listen ADDR:PORT --token-file FILE --out FILE [--fail-first N]
 *
 * Serves POST /v1/ingest (common/http.h): a request without "Authorization: Bearer TOKEN" gets
 * 401, another Content-Type than application/x-houston-frame 415, a frame that does not decode
 * (common/frame.h) 400, the first N well-formed requests 503 (--fail-first, to exercise the
 * agent's retries). Every other frame gets 200; the first time its (boot_id, seq) is seen it
 * is accepted and one line "seq=N samples=M xids=K steps=S" (M: GPU samples, K: XID
 * records, S: STEP and PAUSE records) is
 * appended to the --out file and flushed; a repeat is answered 200 as a duplicate and written
 * nowhere. Runs until SIGTERM or SIGINT; exit status 0, or 2 for a usage or start-up error.
 * Not installed; built by tests/CMakeLists.txt.
 */
#include "agent/push.h"
#include "common/frame.h"
#include "common/http.h"
#include "common/util.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEN 100000 /* frames remembered for de-duplication */

struct seen {
    uint64_t boot_id, seq;
};

struct sink {
    char token[HN_PUSH_TOKEN_MAX];
    FILE *out;
    long fail_first;
    struct seen *seen;
    size_t nseen;
    /* Filled while decoding one frame. */
    struct hn_frame_header h;
    unsigned long samples, xids, steps;
};

static int on_header(void *ctx, const struct hn_frame_header *h)
{
    ((struct sink *)ctx)->h = *h;
    return 0;
}

static int on_samples(void *ctx, unsigned gpu, const struct hn_frame_field *f, unsigned n)
{
    (void)gpu;
    (void)f;
    ((struct sink *)ctx)->samples += n;
    return 0;
}

static int on_xid(void *ctx, const struct hn_frame_xid *x)
{
    (void)x;
    ((struct sink *)ctx)->xids++;
    return 0;
}

static int on_step(void *ctx, const struct hn_frame_step *st)
{
    (void)st;
    ((struct sink *)ctx)->steps++;
    return 0;
}

static const struct hn_frame_sink counting = {
    .header = on_header,
    .samples = on_samples,
    .xid = on_xid,
    .step = on_step,
};

static int already_seen(const struct sink *s, uint64_t boot_id, uint64_t seq)
{
    for (size_t i = s->nseen; i-- > 0;) {
        if (s->seen[i].boot_id == boot_id && s->seen[i].seq == seq)
            return 1;
    }
    return 0;
}

/* Requests are served one at a time on the server's thread, so no lock is needed. */
static void serve_ingest(void *ctx, const char *url, struct hn_http_reply *reply)
{
    struct sink *s = ctx;
    (void)url;
    char want[HN_PUSH_TOKEN_MAX + 16];
    snprintf(want, sizeof(want), "Bearer %s", s->token);
    const char *auth = hn_http_header(reply->req, "Authorization");
    const char *type = hn_http_header(reply->req, "Content-Type");
    reply->content_type = "application/json";
    if (!auth || strcmp(auth, want) != 0) {
        reply->status = 401;
        hn_buf_puts(&reply->body, "{\"error\": \"bad or missing token\"}\n");
        return;
    }
    if (!type || strcmp(type, HN_PUSH_CONTENT_TYPE) != 0) {
        reply->status = 415;
        hn_buf_puts(&reply->body, "{\"error\": \"not a frame\"}\n");
        return;
    }
    s->samples = 0;
    s->xids = 0;
    s->steps = 0;
    char err[256];
    if (hn_frame_decode(reply->req->body, reply->req->body_len, HN_FRAME_MAX, &counting, s, err,
                        sizeof(err)) != 0) {
        reply->status = 400;
        hn_buf_printf(&reply->body, "{\"error\": \"bad frame\"}\n");
        fprintf(stderr, "hn_frame_sink: bad frame: %s\n", err);
        return;
    }
    if (s->fail_first > 0) {
        s->fail_first--;
        reply->status = 503;
        hn_buf_puts(&reply->body, "{\"error\": \"not ready\"}\n");
        return;
    }
    reply->status = 200;
    if (already_seen(s, s->h.boot_id, s->h.seq)) {
        hn_buf_puts(&reply->body, "{\"duplicate\": true}\n");
        return;
    }
    if (s->nseen == MAX_SEEN) {
        reply->status = 507;
        hn_buf_puts(&reply->body, "{\"error\": \"sink full\"}\n");
        return;
    }
    s->seen[s->nseen++] = (struct seen){s->h.boot_id, s->h.seq};
    fprintf(s->out, "seq=%llu samples=%lu xids=%lu steps=%lu\n", (unsigned long long)s->h.seq,
            s->samples, s->xids, s->steps);
    fflush(s->out);
    hn_buf_puts(&reply->body, "{\"accepted\": true}\n");
}

static const struct hn_http_route routes[] = {{"POST", "/v1/ingest", serve_ingest, 0}};

static int usage(void)
{
    fprintf(stderr, "usage: hn_frame_sink --listen ADDR:PORT --token-file FILE --out FILE "
                    "[--fail-first N]\n");
    return 2;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"token-file", required_argument, NULL, 't'},
        {"out", required_argument, NULL, 'o'},
        {"fail-first", required_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    const char *listen = NULL, *token_file = NULL, *out = NULL;
    struct sink s;
    memset(&s, 0, sizeof(s));
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int64_t v;
        switch (c) {
        case 'l':
            listen = optarg;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'f':
            if (hn_parse_i64(optarg, 10, &v) != 0 || v < 0)
                return usage();
            s.fail_first = (long)v;
            break;
        default:
            return usage();
        }
    }
    if (!listen || !token_file || !out || optind != argc)
        return usage();

    char err[512];
    if (hn_push_read_token(token_file, s.token, sizeof(s.token), err, sizeof(err)) != 0) {
        fprintf(stderr, "hn_frame_sink: %s\n", err);
        return 2;
    }
    s.out = fopen(out, "a");
    if (!s.out) {
        fprintf(stderr, "hn_frame_sink: %s: %s\n", out, strerror(errno));
        return 2;
    }
    s.seen = xcalloc(MAX_SEEN, sizeof(*s.seen));

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    int rc = 2;
    struct hn_http *h = hn_http_start(listen, routes, HN_ARRAY_LEN(routes), &s, err, sizeof(err));
    if (!h) {
        fprintf(stderr, "hn_frame_sink: %s\n", err);
        goto out_close;
    }
    hn_http_set_max_body(h, HN_FRAME_MAX);
    fprintf(stderr, "hn_frame_sink: listening on %s\n", listen);
    int sig;
    sigwait(&set, &sig);
    hn_http_stop(h);
    rc = 0;
out_close:
    fclose(s.out);
    free(s.seen);
    return rc;
}
