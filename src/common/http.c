#include "common/http.h"

#include "common/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define REPLY_MAX (64u << 20)

struct hn_http {
    struct MHD_Daemon *mhd;
    const struct hn_http_route *routes;
    size_t nroutes;
    void *ctx;
    _Atomic size_t max_body; /* set while serving (hn_http_set_max_body) */
    unsigned port;
};

int hn_http_parse_listen(const char *listen, char *host, size_t hostsize, unsigned *port)
{
    const char *colon = strrchr(listen, ':');
    if (!colon)
        return -EINVAL;
    size_t hl = (size_t)(colon - listen);
    const char *h = listen;
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= hostsize)
        return -EINVAL;
    memcpy(host, h, hl);
    host[hl] = '\0';
    uint64_t p;
    if (hn_parse_u64(colon + 1, 10, &p) != 0 || p > 65535)
        return -EINVAL;
    *port = (unsigned)p;
    return 0;
}

/* Per-request state: the body as it arrives. */
struct request {
    struct hn_buf body;
    size_t cap;
    int too_large;
};

const char *hn_http_header(const struct hn_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *hn_http_arg(const struct hn_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

static int path_matches(const char *route, const char *url)
{
    size_t n = strlen(route);
    if (n > 0 && route[n - 1] == '*')
        return strncmp(route, url, n - 1) == 0;
    return strcmp(route, url) == 0;
}

static enum MHD_Result send_reply(struct MHD_Connection *conn, struct hn_http_reply *reply)
{
    /* The body's allocation is handed to libmicrohttpd, which frees it: no second copy. */
    struct MHD_Response *resp;
    if (reply->body.data) {
        resp = MHD_create_response_from_buffer(reply->body.len, reply->body.data,
                                               MHD_RESPMEM_MUST_FREE);
        if (!resp)
            hn_buf_fini(&reply->body);
    } else {
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", reply->content_type);
    enum MHD_Result r = MHD_queue_response(conn, (unsigned)reply->status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    struct hn_http *h = cls;
    (void)version;
    struct request *rq = *con_cls;
    /* First call per request: headers only. */
    if (rq == NULL) {
        rq = xcalloc(1, sizeof(*rq));
        /* The cap is the route's, known from the request line alone. */
        rq->cap = atomic_load(&h->max_body);
        for (size_t i = 0; i < h->nroutes; i++) {
            if (path_matches(h->routes[i].path, url) && strcmp(h->routes[i].method, method) == 0) {
                if (h->routes[i].max_body)
                    rq->cap = h->routes[i].max_body;
                break;
            }
        }
        hn_buf_init(&rq->body, rq->cap);
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        uint64_t announced;
        if (cl && hn_parse_u64(cl, 10, &announced) == 0 && announced > rq->cap)
            rq->too_large = 1;
        *con_cls = rq;
        return MHD_YES;
    }
    /* Body chunks: kept up to the cap, the rest read and dropped. */
    if (*upload_size != 0) {
        if (!rq->too_large && hn_buf_append(&rq->body, upload, *upload_size) != 0)
            rq->too_large = 1;
        *upload_size = 0;
        return MHD_YES;
    }
    struct hn_http_request req = {method, url, rq->body.data ? rq->body.data : "", rq->body.len,
                                  conn};
    struct hn_http_reply reply = {404, "text/plain; charset=utf-8", {0}, &req};
    hn_buf_init(&reply.body, REPLY_MAX);
    if (rq->too_large) {
        reply.status = 413;
        hn_buf_printf(&reply.body, "request body larger than %zu bytes\n", rq->cap);
        return send_reply(conn, &reply);
    }
    int path_known = 0;
    const struct hn_http_route *route = NULL;
    for (size_t i = 0; i < h->nroutes; i++) {
        if (!path_matches(h->routes[i].path, url))
            continue;
        path_known = 1;
        if (strcmp(h->routes[i].method, method) == 0 ||
            (strcmp(method, "HEAD") == 0 && strcmp(h->routes[i].method, "GET") == 0)) {
            route = &h->routes[i];
            break;
        }
    }
    if (route) {
        reply.status = 200;
        route->fn(h->ctx, url, &reply);
    } else if (path_known) {
        reply.status = 405;
        hn_buf_puts(&reply.body, "method not allowed\n");
    } else {
        hn_buf_puts(&reply.body, "not found\n");
    }
    return send_reply(conn, &reply);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)conn;
    (void)code;
    struct request *rq = *con_cls;
    if (!rq)
        return;
    hn_buf_fini(&rq->body);
    free(rq);
    *con_cls = NULL;
}

void hn_http_set_max_body(struct hn_http *h, size_t max)
{
    atomic_store(&h->max_body, max);
}

struct hn_http *hn_http_start(const char *listen, const struct hn_http_route *routes,
                              size_t nroutes, void *ctx, char *err, size_t errsize)
{
    char host[128];
    unsigned port;
    if (hn_http_parse_listen(listen, host, sizeof(host), &port) != 0) {
        snprintf(err, errsize, "bad listen address '%s' (want ADDR:PORT)", listen);
        return NULL;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    /* epoll: thousands of agents keep a connection open each; select() stops at 1024 fds. */
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
    if (host[0] == '\0') {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        a6->sin6_addr = in6addr_any;
        flags |= MHD_USE_DUAL_STACK;
    } else if (strchr(host, ':')) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
            goto bad_host;
        flags |= MHD_USE_IPv6;
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
            goto bad_host;
    }
    struct hn_http *h = xcalloc(1, sizeof(*h));
    h->routes = routes;
    h->nroutes = nroutes;
    h->ctx = ctx;
    atomic_init(&h->max_body, (size_t)1 << 20);
    h->mhd = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, answer, h, MHD_OPTION_SOCK_ADDR,
                              (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, 16384u,
                              MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                              MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!h->mhd) {
        snprintf(err, errsize, "cannot listen on %s: %s", listen, strerror(errno));
        free(h);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : port;
    return h;

bad_host:
    snprintf(err, errsize, "bad listen address '%s': '%s' is not a numeric IP address", listen,
             host);
    return NULL;
}

void hn_http_stop(struct hn_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->mhd);
    free(h);
}

unsigned hn_http_port(const struct hn_http *h)
{
    return h->port;
}
