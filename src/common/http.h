/*
 * http.h - houston's HTTP server: libmicrohttpd with a route table.
 *
 * hn_http_start() binds ADDR:PORT (IPv4 or [IPv6]) and serves in libmicrohttpd's own polling
 * thread. Each request is matched against the caller's routes by method and path (exact, or a
 * prefix when the route's path ends in '*'); a route's handler fills a struct hn_http_reply
 * (status, content type, body in a capped buffer). Unknown paths get 404, a known path with
 * another method 405. A request body is read whole before the handler runs, up to the route's
 * max_body (0: the server's, hn_http_set_max_body, default 1 MiB): a larger one is answered
 * 413 without calling the handler, whether Content-Length announced it or not.
 *
 * The handler finds the request in reply->req: method, path, body, and headers and query
 * arguments through hn_http_header() / hn_http_arg(), valid during the call.
 *
 * Handlers run on the server thread: they must take their own locks for shared state.
 */
#ifndef HN_HTTP_H
#define HN_HTTP_H

#include "common/buf.h"

#include <stddef.h>

struct hn_http_request {
    const char *method;
    const char *url;  /* the path, without the query string */
    const char *body; /* NUL-terminated; "" when none */
    size_t body_len;
    void *conn; /* libmicrohttpd's connection, for hn_http_header/arg */
};

struct hn_http_reply {
    int status;
    const char *content_type;
    struct hn_buf body; /* capped at 64 MiB */
    const struct hn_http_request *req;
};

/* A request header or query argument, or NULL when absent. */
const char *hn_http_header(const struct hn_http_request *req, const char *name);
const char *hn_http_arg(const struct hn_http_request *req, const char *name);

typedef void (*hn_http_handler_fn)(void *ctx, const char *url, struct hn_http_reply *reply);

struct hn_http_route {
    const char *method;
    const char *path;
    hn_http_handler_fn fn;
    size_t max_body; /* 0: the server's default */
};

struct hn_http;

/* Parses "ADDR:PORT" ("127.0.0.1:9400", "[::1]:9400", ":9400" = all addresses). */
int hn_http_parse_listen(const char *listen, char *host, size_t hostsize, unsigned *port);
/* Returns the server or NULL with a reason in err. routes must outlive the server. */
struct hn_http *hn_http_start(const char *listen, const struct hn_http_route *routes,
                              size_t nroutes, void *ctx, char *err, size_t errsize);
void hn_http_stop(struct hn_http *h);
/* The default body cap of routes that set none; safe to call while serving. */
void hn_http_set_max_body(struct hn_http *h, size_t max);
/* The port actually bound (useful with port 0). */
unsigned hn_http_port(const struct hn_http *h);

#endif
