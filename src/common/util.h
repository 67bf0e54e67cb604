/*
 * util.h - allocation that aborts on out-of-memory, bounded string copies and strict number
 * parsing.
 *
 * Out-of-memory is not recoverable in houston (redis and tmux make the same choice): the
 * x*alloc functions print one line and abort. Input from outside is never sized by these
 * functions alone; callers cap it first (see buf.h).
 *
 * The hn_parse_* functions accept the whole string or nothing: leading/trailing blanks are
 * allowed, any other trailing character, an empty string or an overflow returns -EINVAL or
 * -ERANGE and leaves *out untouched. Safe from any thread.
 */
#ifndef HN_UTIL_H
#define HN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define HN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* FNV-1a of a string: the node, job and id tables' hash. */
size_t hn_str_hash(const char *s);

/* Copies at most size-1 bytes and always terminates; returns strlen(src) like BSD strlcpy. */
size_t hn_strlcpy(char *dst, const char *src, size_t size);

int hn_parse_u64(const char *s, int base, uint64_t *out);
int hn_parse_i64(const char *s, int base, int64_t *out);
int hn_parse_double(const char *s, double *out);

/* Formats a one-line error into err (nothing when err is NULL or errsize 0). */
void hn_set_err(char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Trims blanks at both ends in place; returns s. */
char *hn_trim(char *s);

/* Monotonic time in nanoseconds; wall-clock (CLOCK_REALTIME) time in seconds and in
 * nanoseconds since the Unix epoch. */
uint64_t hn_mono_ns(void);
double hn_wall_s(void);
uint64_t hn_wall_ns(void);

#endif
