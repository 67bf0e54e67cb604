#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void oom(size_t n)
{
    fprintf(stderr, "houston: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

size_t hn_str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)h;
}

size_t hn_strlcpy(char *dst, const char *src, size_t size)
{
    size_t n = strlen(src);
    if (size > 0) {
        size_t c = n < size - 1 ? n : size - 1;
        memcpy(dst, src, c);
        dst[c] = '\0';
    }
    return n;
}

static int only_blanks(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

int hn_parse_u64(const char *s, int base, uint64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0' || *s == '-')
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (errno == ERANGE)
        return -ERANGE;
    if (end == s || !only_blanks(end))
        return -EINVAL;
    *out = v;
    return 0;
}

int hn_parse_i64(const char *s, int base, int64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, base);
    if (errno == ERANGE)
        return -ERANGE;
    if (end == s || !only_blanks(end))
        return -EINVAL;
    *out = v;
    return 0;
}

int hn_parse_double(const char *s, double *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* Too large is an error; too small (below DBL_MIN: a subnormal, or 0) is the value. */
    if (errno == ERANGE && fabs(v) >= DBL_MIN)
        return -ERANGE;
    if (end == s || !only_blanks(end) || isnan(v))
        return -EINVAL;
    *out = v;
    return 0;
}

void hn_set_err(char *err, size_t errsize, const char *fmt, ...)
{
    if (!err || errsize == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errsize, fmt, ap);
    va_end(ap);
}

char *hn_trim(char *s)
{
    char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    size_t n = strlen(p);
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    memmove(s, p, n);
    s[n] = '\0';
    return s;
}

uint64_t hn_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double hn_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t hn_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
