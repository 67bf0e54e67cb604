#include "common/buf.h"

#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hn_buf_init(struct hn_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void hn_buf_fini(struct hn_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void hn_buf_reset(struct hn_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

int hn_buf_reserve(struct hn_buf *b, size_t n)
{
    if (n > b->max)
        return -ENOSPC;
    if (n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < n + 1)
        cap *= 2;
    if (cap > b->max + 1)
        cap = b->max + 1;
    b->data = xrealloc(b->data, cap);
    b->cap = cap;
    return 0;
}

int hn_buf_append(struct hn_buf *b, const void *data, size_t n)
{
    if (n > b->max - b->len)
        return -ENOSPC;
    int rc = hn_buf_reserve(b, b->len + n);
    if (rc)
        return rc;
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int hn_buf_puts(struct hn_buf *b, const char *s)
{
    return hn_buf_append(b, s, strlen(s));
}

int hn_buf_vprintf(struct hn_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return -EINVAL;
    }
    if ((size_t)n >= room) {
        int rc = hn_buf_reserve(b, b->len + (size_t)n);
        if (rc) {
            if (b->data)
                b->data[b->len] = '\0';
            va_end(ap2);
            return rc;
        }
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap2);
    }
    va_end(ap2);
    b->len += (size_t)n;
    return 0;
}

int hn_buf_printf(struct hn_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = hn_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}
