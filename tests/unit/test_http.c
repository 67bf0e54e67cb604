/*
 * test_http.c - the HTTP server (common/http.h): listen-address parsing, and a real server on
 * 127.0.0.1 with an ephemeral port answering HTTP/1.0 requests sent over a plain socket.
 */
#include "testutil.h"

#include "common/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>

/* ---- parsing ---- */

static void test_parse_listen(void **unused)
{
    (void)unused;
    char host[64];
    unsigned port = 0;
    assert_int_equal(hn_http_parse_listen("127.0.0.1:9400", host, sizeof(host), &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 9400);
    assert_int_equal(hn_http_parse_listen("[::1]:80", host, sizeof(host), &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 80);
    assert_int_equal(hn_http_parse_listen(":9400", host, sizeof(host), &port), 0);
    assert_string_equal(host, "");
    assert_int_equal(port, 9400);
    assert_int_equal(hn_http_parse_listen("0.0.0.0:0", host, sizeof(host), &port), 0);
    assert_string_equal(host, "0.0.0.0");
    assert_int_equal(port, 0);
    assert_int_equal(hn_http_parse_listen("10.0.0.1:65535", host, sizeof(host), &port), 0);
    assert_int_equal(port, 65535);

    port = 1234;
    assert_int_equal(hn_http_parse_listen("127.0.0.1:", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("127.0.0.1", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("localhost", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("127.0.0.1:70000", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("127.0.0.1:65536", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("127.0.0.1:-1", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("127.0.0.1:80x", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("[::1]", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("", host, sizeof(host), &port), -EINVAL);
    assert_int_equal(port, 1234);

    /* The host must fit the caller's buffer. */
    char tiny[4];
    assert_int_equal(hn_http_parse_listen("127.0.0.1:80", tiny, sizeof(tiny), &port), -EINVAL);
    assert_int_equal(hn_http_parse_listen("1.2:80", tiny, sizeof(tiny), &port), 0);
    assert_string_equal(tiny, "1.2");
}

/* ---- a live server ---- */

struct ctx {
    atomic_int hits;
};

#define TEXT_PLAIN "text/plain; version=0.0.4; charset=utf-8"

static void hello(void *c, const char *url, struct hn_http_reply *reply)
{
    struct ctx *ctx = c;
    atomic_fetch_add(&ctx->hits, 1);
    reply->content_type = TEXT_PLAIN;
    (void)hn_buf_printf(&reply->body, "hello from %s\n", url);
}

static void busy(void *c, const char *url, struct hn_http_reply *reply)
{
    (void)c;
    (void)url;
    reply->status = 503;
    reply->content_type = "application/json";
    (void)hn_buf_puts(&reply->body, "{\"busy\":true}");
}

static const struct hn_http_route routes[] = {
    {"GET", "/hello", hello, 0},
    {"GET", "/busy", busy, 0},
};

struct response {
    int status;
    char headers[2048];
    char body[4096];
    size_t body_len;
};

/* Sends request (a whole HTTP/1.0 request) to 127.0.0.1:port and reads the answer to EOF. */
static void request(unsigned port, const char *req, struct response *r)
{
    memset(r, 0, sizeof(*r));
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct timeval tv = {5, 0};
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    size_t len = strlen(req);
    assert_int_equal(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);

    static char raw[8192];
    size_t got = 0;
    for (;;) {
        ssize_t n = recv(fd, raw + got, sizeof(raw) - 1 - got, 0);
        assert_true(n >= 0);
        if (n == 0)
            break;
        got += (size_t)n;
        assert_true(got < sizeof(raw) - 1);
    }
    close(fd);
    raw[got] = '\0';

    char *end = strstr(raw, "\r\n\r\n");
    assert_non_null(end);
    *end = '\0';
    assert_int_equal(strncmp(raw, "HTTP/1.", 7), 0);
    const char *sp = strchr(raw, ' ');
    assert_non_null(sp);
    char code[4];
    hn_strlcpy(code, sp + 1, sizeof(code));
    uint64_t status = 0;
    assert_int_equal(hn_parse_u64(code, 10, &status), 0);
    r->status = (int)status;
    hn_strlcpy(r->headers, raw, sizeof(r->headers));
    r->body_len = got - (size_t)(end + 4 - raw);
    assert_true(r->body_len < sizeof(r->body));
    memcpy(r->body, end + 4, r->body_len);
    r->body[r->body_len] = '\0';
}

/* Returns the value of header name (case-insensitive) in r, or NULL. */
static const char *header(const struct response *r, const char *name, char *out, size_t size)
{
    const char *p = r->headers;
    size_t nl = strlen(name);
    while ((p = strstr(p, "\r\n")) != NULL) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t vl = strcspn(v, "\r\n");
            if (vl >= size)
                return NULL;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return out;
        }
    }
    return NULL;
}

static struct hn_http *start(struct ctx *c)
{
    char err[256] = "";
    struct hn_http *h =
        hn_http_start("127.0.0.1:0", routes, HN_ARRAY_LEN(routes), c, err, sizeof(err));
    if (!h)
        fail_msg("hn_http_start: %s", err);
    assert_true(hn_http_port(h) > 0 && hn_http_port(h) < 65536);
    return h;
}

/* Sends req to server h and checks the answer's status; the answer is left in *r. */
static void expect_status(struct hn_http *h, const char *req, int status, struct response *r)
{
    request(hn_http_port(h), req, r);
    assert_int_equal(r->status, status);
}

/* Checks that r has the header name (in any case) with the value want. */
static void expect_header(const struct response *r, const char *name, const char *want)
{
    char v[256];
    if (!header(r, name, v, sizeof(v)))
        fail_msg("no %s header in:\n%s", name, r->headers);
    assert_string_equal(v, want);
}

static void test_get(void **unused)
{
    (void)unused;
    struct ctx c = {0};
    struct hn_http *h = start(&c);
    struct response r;

    expect_status(h, "GET /hello HTTP/1.0\r\nHost: x\r\n\r\n", 200, &r);
    assert_string_equal(r.body, "hello from /hello\n");
    expect_header(&r, "Content-Type", TEXT_PLAIN);
    expect_header(&r, "Content-Length", "18");
    assert_int_equal(atomic_load(&c.hits), 1);

    /* A query string does not change the route. */
    expect_status(h, "GET /hello?x=1 HTTP/1.0\r\n\r\n", 200, &r);
    assert_int_equal(atomic_load(&c.hits), 2);

    /* The handler chooses status and content type. */
    expect_status(h, "GET /busy HTTP/1.0\r\n\r\n", 503, &r);
    assert_string_equal(r.body, "{\"busy\":true}");
    expect_header(&r, "Content-Type", "application/json");
    hn_http_stop(h);
}

static void test_not_found_and_method(void **unused)
{
    (void)unused;
    struct ctx c = {0};
    struct hn_http *h = start(&c);
    struct response r;

    expect_status(h, "GET /nope HTTP/1.0\r\n\r\n", 404, &r);
    assert_string_equal(r.body, "not found\n");
    /* Paths match exactly. */
    expect_status(h, "GET /hello/ HTTP/1.0\r\n\r\n", 404, &r);
    expect_status(h, "GET /hell HTTP/1.0\r\n\r\n", 404, &r);

    expect_status(h, "POST /hello HTTP/1.0\r\nContent-Length: 0\r\n\r\n", 405, &r);
    assert_string_equal(r.body, "method not allowed\n");
    expect_status(h, "POST /hello HTTP/1.0\r\nContent-Length: 5\r\n\r\nabcde", 405, &r);
    expect_status(h, "DELETE /busy HTTP/1.0\r\n\r\n", 405, &r);
    assert_int_equal(atomic_load(&c.hits), 0);
    hn_http_stop(h);
}

static void test_head(void **unused)
{
    (void)unused;
    struct ctx c = {0};
    struct hn_http *h = start(&c);
    struct response r;
    expect_status(h, "HEAD /hello HTTP/1.0\r\n\r\n", 200, &r);
    assert_int_equal(r.body_len, 0);
    expect_header(&r, "Content-Type", TEXT_PLAIN);
    assert_int_equal(atomic_load(&c.hits), 1);
    hn_http_stop(h);
}

static void test_bad_listen(void **unused)
{
    (void)unused;
    struct ctx c = {0};
    char err[256] = "";
    assert_null(hn_http_start("nonsense", routes, HN_ARRAY_LEN(routes), &c, err, sizeof(err)));
    assert_non_null(strstr(err, "nonsense"));

    err[0] = '\0';
    assert_null(
        hn_http_start("localhost:9400", routes, HN_ARRAY_LEN(routes), &c, err, sizeof(err)));
    assert_non_null(strstr(err, "localhost"));

    err[0] = '\0';
    assert_null(
        hn_http_start("127.0.0.1:99999", routes, HN_ARRAY_LEN(routes), &c, err, sizeof(err)));
    assert_non_null(strstr(err, "127.0.0.1:99999"));

    /* A port already taken: the second server fails with a reason, the first still serves. */
    struct hn_http *h = start(&c);
    char listen[64];
    (void)snprintf(listen, sizeof(listen), "127.0.0.1:%u", hn_http_port(h));
    err[0] = '\0';
    assert_null(hn_http_start(listen, routes, HN_ARRAY_LEN(routes), &c, err, sizeof(err)));
    assert_non_null(strstr(err, listen));
    struct response r;
    expect_status(h, "GET /hello HTTP/1.0\r\n\r\n", 200, &r);
    hn_http_stop(h);
    hn_http_stop(NULL);
}

static void test_many_requests(void **unused)
{
    (void)unused;
    struct ctx c = {0};
    struct hn_http *h = start(&c);
    struct response r;
    for (int i = 0; i < 50; i++)
        expect_status(h, "GET /hello HTTP/1.0\r\n\r\n", 200, &r);
    assert_int_equal(atomic_load(&c.hits), 50);
    hn_http_stop(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_listen),         cmocka_unit_test(test_get),
        cmocka_unit_test(test_not_found_and_method), cmocka_unit_test(test_head),
        cmocka_unit_test(test_bad_listen),           cmocka_unit_test(test_many_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
