#include "common/fsroot.h"

#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int hn_path(char *out, size_t size, const char *root, const char *fmt, ...)
{
    size_t rl = hn_strlcpy(out, root ? root : "", size);
    if (rl >= size)
        return -ENAMETOOLONG;
    while (rl > 0 && out[rl - 1] == '/')
        out[--rl] = '\0';
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + rl, size - rl, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size - rl)
        return -ENAMETOOLONG;
    return 0;
}

long hn_read_file(const char *path, char *out, size_t size)
{
    if (size == 0)
        return -EINVAL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = 0;
    while (len < size - 1) {
        ssize_t n = read(fd, out + len, size - 1 - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            return -e;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    out[len] = '\0';
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'))
        out[--len] = '\0';
    return (long)len;
}

int hn_read_u64(const char *path, uint64_t *out)
{
    char buf[64];
    long n = hn_read_file(path, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    return hn_parse_u64(buf, 10, out);
}
