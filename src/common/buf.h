/*
 * buf.h - a growable byte buffer with a hard cap (curl's dynbuf).
 *
 * Every buffer fed from outside (HTTP bodies, child output, files from /sys) has a maximum
 * size; appending past it fails with -ENOSPC and leaves the buffer as it was, so a caller can
 * report "too large" instead of growing without bound. The contents are always
 * NUL-terminated. The caller owns the struct; not thread-safe.
 *
 * In the steady state a buffer that was hn_buf_reset() keeps its allocation, so a loop that
 * renders into the same buffer each cycle does not touch the heap once it has grown.
 */
#ifndef HN_BUF_H
#define HN_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct hn_buf {
    char *data;
    size_t len;
    size_t cap;
    size_t max;
};

void hn_buf_init(struct hn_buf *b, size_t max);
void hn_buf_fini(struct hn_buf *b);
void hn_buf_reset(struct hn_buf *b);
/* Grows the allocation to hold at least n bytes plus NUL; -ENOSPC past max. */
int hn_buf_reserve(struct hn_buf *b, size_t n);
int hn_buf_append(struct hn_buf *b, const void *data, size_t n);
int hn_buf_puts(struct hn_buf *b, const char *s);
int hn_buf_printf(struct hn_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int hn_buf_vprintf(struct hn_buf *b, const char *fmt, va_list ap);

#endif
