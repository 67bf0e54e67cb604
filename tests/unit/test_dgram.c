/*
 * test_dgram.c - the step socket's deep queue (common/dgram.h): as root the socket queues
 * what was asked and the system's sysctl is left as it was; twenty datagrams sent at once,
 * with nobody reading, all wait in the queue, each with its sender's credentials.
 */
#include "testutil.h"

#include "common/dgram.h"
#include "common/fsroot.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>

static void deep_queue(void **state)
{
    (void)state;
    char path[PATH_MAX], before[32], after[32];
    snprintf(path, sizeof(path), "%s/q.sock", tu_tmpdir());
    assert_true(hn_read_file(HN_DGRAM_QLEN_SYSCTL, before, sizeof(before)) > 0);
    unsigned qlen = 0;
    int fd = hn_dgram_bind(path, 1024, &qlen);
    assert_true(fd >= 0);
    assert_true(hn_read_file(HN_DGRAM_QLEN_SYSCTL, after, sizeof(after)) > 0);
    assert_string_equal(before, after); /* put back */
    unsigned sys = (unsigned)strtoul(before, NULL, 10);
    /* Raised when the sysctl can be written: root, and /proc/sys not read-only (a container's
     * often is). */
    if (access(HN_DGRAM_QLEN_SYSCTL, W_OK) == 0)
        assert_int_equal(qlen, sys < 1024 ? 1024 : sys);
    else
        assert_int_equal(qlen, sys);

    int tx = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    hn_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
    unsigned sent = 0;
    for (int i = 0; i < 20; i++)
        sent += sendto(tx, "hs1 job=1 step=1 dur=1", 22, MSG_DONTWAIT, (struct sockaddr *)&sa,
                       sizeof(sa)) == 22;
    assert_int_equal(sent, qlen >= 20 ? 20 : qlen);
    close(tx);
    /* Even the first datagram comes with its sender's uid (SO_PASSCRED from before the bind). */
    char buf[64];
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(struct ucred))];
    } control;
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.bytes,
                        .msg_controllen = sizeof(control.bytes)};
    assert_int_equal(recvmsg(fd, &mh, MSG_DONTWAIT), 22);
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    assert_non_null(c);
    assert_true(c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS);
    struct ucred cred;
    memcpy(&cred, CMSG_DATA(c), sizeof(cred));
    assert_int_equal(cred.uid, geteuid());
    assert_int_equal(cred.pid, getpid());
    close(fd);

    /* The path is taken: EADDRINUSE, and nothing is left open. */
    assert_int_equal(hn_dgram_bind(path, 16, &qlen), -EADDRINUSE);
    char longp[200];
    memset(longp, 'x', sizeof(longp) - 1);
    longp[sizeof(longp) - 1] = '\0';
    assert_int_equal(hn_dgram_bind(longp, 16, &qlen), -ENAMETOOLONG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(deep_queue)};
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
