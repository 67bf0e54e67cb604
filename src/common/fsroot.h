/*
 * fsroot.h - reading /proc and /sys files under a root prefix (netdata's host prefix).
 *
 * Every collector builds its paths with hn_path(), so tests point the agent at fixture trees
 * (--sysfs-root, --proc-root) and production uses "" (the real root). Files from /sys and
 * /proc are small; reads are capped at the caller's buffer and need no heap. Any thread.
 */
#ifndef HN_FSROOT_H
#define HN_FSROOT_H

#include <stddef.h>
#include <stdint.h>

/* Writes root + formatted path into out; returns 0 or -ENAMETOOLONG. */
int hn_path(char *out, size_t size, const char *root, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Reads up to size-1 bytes of path into out, NUL-terminated, trailing newline removed.
 * Returns the length or a negative errno. */
long hn_read_file(const char *path, char *out, size_t size);

/* Reads a file holding one unsigned integer (decimal). Returns 0 or a negative errno. */
int hn_read_u64(const char *path, uint64_t *out);

#endif
