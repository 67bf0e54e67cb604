#include "cli/client.h"

#include "common/util.h"

#include "common/curl_dl.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SERVER_MAX 2048
#define HEADER_MAX 4608

void hn_client_reply_init(struct hn_client_reply *r)
{
    r->status = 0;
    hn_buf_init(&r->body, HN_CLIENT_MAX_REPLY);
    r->url[0] = '\0';
}

void hn_client_reply_fini(struct hn_client_reply *r)
{
    hn_buf_fini(&r->body);
}

static int is_ctl(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

int hn_client_check_server(char *server)
{
    size_t n = strlen(server);
    size_t skip;
    if (n >= SERVER_MAX)
        return -EINVAL;
    if (strncasecmp(server, "http://", 7) == 0)
        skip = 7;
    else if (strncasecmp(server, "https://", 8) == 0)
        skip = 8;
    else
        return -EINVAL;
    for (const char *p = server; *p; p++) {
        if (is_ctl((unsigned char)*p) || *p == ' ' || *p == '?' || *p == '#')
            return -EINVAL;
    }
    while (n > skip && server[n - 1] == '/')
        server[--n] = '\0';
    if (server[skip] == '\0' || server[skip] == '/')
        return -EINVAL;
    return 0;
}

int hn_client_escape(struct hn_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int rc;
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            rc = hn_buf_append(b, p, 1);
        } else {
            char enc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rc = hn_buf_append(b, enc, sizeof(enc));
        }
        if (rc)
            return rc;
    }
    return 0;
}

struct sink {
    struct hn_buf *body;
    int too_big;
};

/* libcurl's write callback: anything short of the full count aborts with CURLE_WRITE_ERROR. */
static size_t on_data(char *data, size_t size, size_t nmemb, void *ud)
{
    struct sink *s = ud;
    size_t n = size * nmemb;
    if (hn_buf_append(s->body, data, n) != 0) {
        s->too_big = 1;
        return 0;
    }
    return n;
}

static int set_up(CURL *h, const struct hn_client *c, const char *method, const char *json_body,
                  struct curl_slist *headers, struct sink *sink, char *curl_err,
                  struct hn_client_reply *r)
{
    const struct hn_curl_ops *cu = hn_curl_load(NULL, 0); /* loaded by the caller */
    if (!cu)
        return -1;
    long timeout_ms = (long)(c->timeout_s * 1000.0);
    if (timeout_ms < 1)
        timeout_ms = 1;
    CURLcode rc = CURLE_OK;
    /* Each option is set unconditionally; the first failure (out of memory, an option this
     * libcurl lacks) is kept. */
#define SET(opt, val)                                                                              \
    do {                                                                                           \
        if (rc == CURLE_OK)                                                                        \
            rc = cu->easy_setopt(h, opt, val);                                                     \
    } while (0)
    SET(CURLOPT_URL, r->url);
#if LIBCURL_VERSION_NUM >= 0x075500
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_TIMEOUT_MS, timeout_ms);
    SET(CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)HN_CLIENT_MAX_REPLY);
    SET(CURLOPT_WRITEFUNCTION, on_data);
    SET(CURLOPT_WRITEDATA, sink);
    SET(CURLOPT_ERRORBUFFER, curl_err);
    SET(CURLOPT_USERAGENT, "houston/" HN_VERSION);
    SET(CURLOPT_HTTPHEADER, headers);
    if (strcmp(method, "POST") == 0) {
        const char *body = json_body ? json_body : "";
        SET(CURLOPT_POSTFIELDS, body);
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    } else {
        SET(CURLOPT_HTTPGET, 1L);
    }
#undef SET
    return rc == CURLE_OK ? 0 : -EINVAL;
}

int hn_client_request(const struct hn_client *c, const char *method, const char *path,
                      const char *json_body, struct hn_client_reply *r, char *err, size_t errsize)
{
    int ret = -EINVAL;
    char curl_err[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = NULL;
    hn_buf_reset(&r->body);
    r->status = 0;
    int n = snprintf(r->url, sizeof(r->url), "%s%s", c->server, path);
    if (n < 0 || (size_t)n >= sizeof(r->url) || path[0] != '/') {
        snprintf(err, errsize, "bad request path for %s", c->server);
        return -EINVAL;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0) {
        snprintf(err, errsize, "unsupported method %s", method);
        return -EINVAL;
    }
    /* libcurl is loaded on first use (common/curl_dl.h), global set-up included. */
    char why[256];
    const struct hn_curl_ops *cu = hn_curl_load(why, sizeof(why));
    if (!cu) {
        snprintf(err, errsize, "%s", why);
        return -EINVAL;
    }

    char line[HEADER_MAX];
    struct curl_slist *l = cu->slist_append(NULL, "Accept: application/json");
    if (l)
        headers = l;
    /* An empty "Expect:" stops libcurl waiting for "100 Continue" before a larger body. */
    if (l && (l = cu->slist_append(headers, "Expect:")))
        headers = l;
    if (l && json_body && (l = cu->slist_append(headers, "Content-Type: application/json")))
        headers = l;
    if (l && c->token) {
        for (const char *p = c->token; *p; p++) {
            if (is_ctl((unsigned char)*p)) {
                snprintf(err, errsize, "the operator token holds a control character");
                goto out_headers;
            }
        }
        n = snprintf(line, sizeof(line), "Authorization: Bearer %s", c->token);
        if (n < 0 || (size_t)n >= sizeof(line)) {
            snprintf(err, errsize, "the operator token is too long");
            goto out_headers;
        }
        if ((l = cu->slist_append(headers, line)))
            headers = l;
    }
    if (!l) {
        snprintf(err, errsize, "out of memory building the request");
        goto out_headers;
    }

    CURL *h = cu->easy_init();
    if (!h) {
        snprintf(err, errsize, "cannot start a libcurl handle");
        goto out_headers;
    }
    struct sink sink = {&r->body, 0};
    if (set_up(h, c, method, json_body, headers, &sink, curl_err, r) != 0) {
        snprintf(err, errsize, "cannot set up the request to %s", r->url);
        goto out_easy;
    }
    CURLcode rc = cu->easy_perform(h);
    if (rc == CURLE_OK) {
        long status = 0;
        cu->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        r->status = status;
        ret = 0;
    } else if (sink.too_big || rc == CURLE_FILESIZE_EXCEEDED) {
        snprintf(err, errsize, "the reply from %s is larger than %zu MiB", r->url,
                 HN_CLIENT_MAX_REPLY >> 20);
        ret = -EFBIG;
    } else {
        /* libcurl's error buffer says more than cu->easy_strerror() when it is filled. */
        hn_trim(curl_err);
        snprintf(err, errsize, "cannot reach %s: %s", r->url,
                 curl_err[0] ? curl_err : cu->easy_strerror(rc));
        ret = -EHOSTUNREACH;
    }
out_easy:
    cu->easy_cleanup(h);
out_headers:
    cu->slist_free_all(headers);
    return ret;
}
