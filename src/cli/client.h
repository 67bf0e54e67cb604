/*
 * client.h - the operator CLI's HTTP client for the controller's JSON API (docs/api.md), on
 * libcurl.
 *
 * One call is one request: hn_client_request() sends GET or POST to SERVER + PATH with an
 * overall timeout, an optional "Authorization: Bearer" token and an optional JSON body, and
 * collects the reply into a buffer capped at HN_CLIENT_MAX_REPLY. Only http:// and https://
 * are spoken and redirects are not followed, so a reply always comes from the server named.
 * A reply with any HTTP status is a success here: deciding what a 404 means is the caller's.
 *
 * The caller owns struct hn_client (its strings are borrowed for the call) and the reply,
 * which it releases with hn_client_reply_fini(). libcurl's global state is set up on first
 * use and kept until exit. Calls on different structs may run on different threads.
 */
#ifndef HN_CLIENT_H
#define HN_CLIENT_H

#include "common/buf.h"

#include <stddef.h>

/* The largest reply body accepted; past it a request fails with -EFBIG. */
#define HN_CLIENT_MAX_REPLY ((size_t)16 << 20)

struct hn_client {
    const char *server; /* "http://host:port" (no trailing '/'); see hn_client_check_server */
    double timeout_s;   /* for the whole request, connection included; > 0 */
    const char *token;  /* bearer token, or NULL for none; must hold no control characters */
};

struct hn_client_reply {
    long status;         /* HTTP status, 0 until a reply arrived */
    struct hn_buf body;  /* the reply body, NUL-terminated; data is NULL when empty */
    char url[2048 + 16]; /* the URL asked, for messages */
};

void hn_client_reply_init(struct hn_client_reply *r);
void hn_client_reply_fini(struct hn_client_reply *r);

/*
 * Sends METHOD ("GET" or "POST") to c->server + path (path starts with '/' and is already
 * escaped, see hn_client_escape). json_body, when not NULL, is sent as application/json.
 * Returns 0 when a reply arrived (r->status and r->body filled, whatever the status),
 * -EFBIG when its body exceeded HN_CLIENT_MAX_REPLY, -EHOSTUNREACH when no reply came
 * (refused, name unknown, TLS failure, timeout, ...), -EINVAL for a bad server, path or
 * token. Except for 0, err says what happened with the URL and libcurl's own words.
 */
int hn_client_request(const struct hn_client *c, const char *method, const char *path,
                      const char *json_body, struct hn_client_reply *r, char *err, size_t errsize);

/* Checks a server base URL: http:// or https://, a host, no blanks or control characters,
 * no query or fragment, under 2048 bytes. Trailing '/' are removed in place. 0 or -EINVAL. */
int hn_client_check_server(char *server);

/* Appends s to b percent-encoded as one path segment or query value (RFC 3986: only the
 * unreserved characters A-Z a-z 0-9 - . _ ~ are kept). 0 or -ENOSPC from the buffer. */
int hn_client_escape(struct hn_buf *b, const char *s);

#endif
