#include "common/dgram.h"

#include "common/fsroot.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static pthread_mutex_t qlen_lock = PTHREAD_MUTEX_INITIALIZER;

static int read_qlen(unsigned *out)
{
    char buf[32];
    uint64_t v;
    if (hn_read_file(HN_DGRAM_QLEN_SYSCTL, buf, sizeof(buf)) < 0 ||
        hn_parse_u64(hn_trim(buf), 10, &v) != 0 || v > 1u << 30)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int write_qlen(unsigned v)
{
    int fd = open(HN_DGRAM_QLEN_SYSCTL, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%u\n", v);
    int ok = write(fd, buf, (size_t)n) == n;
    close(fd);
    return ok ? 0 : -1;
}

int hn_dgram_bind(const char *path, unsigned qlen, unsigned *got_qlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    hn_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
    *got_qlen = 0;
    /* One thread at a time raises and restores the sysctl; other processes creating Unix
     * sockets in that instant get the deeper queue too, which does them no harm. */
    pthread_mutex_lock(&qlen_lock);
    unsigned old = 0;
    int have = read_qlen(&old) == 0;
    int raised = have && old < qlen && write_qlen(qlen) == 0;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int err = errno;
    if (raised)
        write_qlen(old);
    pthread_mutex_unlock(&qlen_lock);
    if (fd < 0)
        return -err;
    /* Before bind, so that no datagram can arrive without its sender's credentials. */
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        err = errno;
        close(fd);
        return -err;
    }
    *got_qlen = raised ? qlen : have ? old : 0;
    return fd;
}
