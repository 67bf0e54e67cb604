#include "control/web.h"

#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WEB_FILE_MAX (16u << 20)

const char *hn_web_default_root(void)
{
    return HN_WEBDIR;
}

static const char *content_type(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".mjs", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".map", "application/json"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < HN_ARRAY_LEN(types); i++) {
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    }
    return "application/octet-stream";
}

/* A relative path made of plain segments: no "..", no hidden segment, no backslash. */
static int safe_path(const char *rel)
{
    if (!*rel || strchr(rel, '\\'))
        return 0;
    for (const char *seg = rel; *seg;) {
        if (*seg == '.' || *seg == '/')
            return 0;
        const char *slash = strchr(seg, '/');
        if (!slash)
            break;
        seg = slash + 1;
    }
    return 1;
}

static void not_found(struct hn_http_reply *r)
{
    r->status = 404;
    r->content_type = "text/plain; charset=utf-8";
    hn_buf_reset(&r->body);
    hn_buf_puts(&r->body, "not found\n");
}

void hn_web_serve(const char *root, const char *url, struct hn_http_reply *r)
{
    const char *rel = strcmp(url, "/") == 0 || strcmp(url, "/ui/") == 0 ? "index.html"
                      : strncmp(url, "/ui/", 4) == 0                    ? url + 4
                                                                        : "";
    char path[PATH_MAX];
    if (!safe_path(rel) || snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path)) {
        not_found(r);
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > WEB_FILE_MAX) {
        if (fd >= 0)
            close(fd);
        not_found(r);
        return;
    }
    char buf[65536];
    ssize_t n;
    hn_buf_reset(&r->body);
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        if (hn_buf_append(&r->body, buf, (size_t)n) != 0) {
            n = -1;
            break;
        }
    }
    close(fd);
    if (n < 0) {
        r->status = 500;
        hn_buf_reset(&r->body);
        return;
    }
    r->status = 200;
    r->content_type = content_type(path);
}
