/*
 * web.h - the dashboard's static files, served by `houston control` (docs/dashboard.md).
 *
 * GET / is web-root/index.html; GET /ui/PATH is web-root/PATH. Only plain files under
 * web-root are served: a path with "..", a backslash, a NUL or a leading dot segment is 404,
 * as is anything that is not a regular file or is larger than 16 MiB. The content type comes
 * from the extension (html, js, mjs, css, json, svg, png, map; otherwise
 * application/octet-stream). Files are read per request (the dashboard is a few files, read
 * by a few browsers); nothing is cached.
 */
#ifndef HN_CONTROL_WEB_H
#define HN_CONTROL_WEB_H

#include "common/http.h"

/* Where the dashboard's files are when the config does not say (the source tree's web/). */
const char *hn_web_default_root(void);

/* Serves url ("/" or "/ui/...") from root into r. */
void hn_web_serve(const char *root, const char *url, struct hn_http_reply *r);

#endif
