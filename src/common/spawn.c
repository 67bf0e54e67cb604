#include "common/spawn.h"

#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define NS_PER_MS 1000000ull

/* Milliseconds left until deadline_ns (monotonic), rounded up; 0 once it has passed. */
static int remaining_ms(uint64_t deadline_ns)
{
    uint64_t now = hn_mono_ns();
    if (now >= deadline_ns)
        return 0;
    uint64_t ms = (deadline_ns - now + NS_PER_MS - 1) / NS_PER_MS;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* The shell's convention: exit code, or 128 + the signal that ended the process. */
static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

/*
 * Waits until pid has exited or deadline_ns has passed, polling with a growing tick (1 ms up
 * to 50 ms: a child that just closed its output is usually gone within the first tick).
 * With reap set the child is reaped and its status stored in *st; without it the child is left
 * a zombie (WNOWAIT), so that its pid, and thus its process group, cannot be reused before
 * the group is signalled. Returns 0 once exited, -ETIMEDOUT, or -errno.
 */
static int wait_exit(pid_t pid, uint64_t deadline_ns, int reap, int *st)
{
    int tick = 1;
    for (;;) {
        if (reap) {
            pid_t r = waitpid(pid, st, WNOHANG);
            if (r == pid)
                return 0;
            if (r < 0 && errno != EINTR)
                return -errno;
        } else {
            siginfo_t si = {0};
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
                if (errno != EINTR)
                    return -errno;
            } else if (si.si_pid == pid) {
                return 0;
            }
        }
        int left = remaining_ms(deadline_ns);
        if (left == 0)
            return -ETIMEDOUT;
        poll(NULL, 0, tick < left ? tick : left);
        if (tick < 50)
            tick *= 2;
    }
}

/* Blocking waitpid that retries on EINTR. Returns 0 or -errno. */
static int reap(pid_t pid, int *st)
{
    while (waitpid(pid, st, 0) < 0) {
        if (errno != EINTR)
            return -errno;
    }
    return 0;
}

/*
 * Ends the child's process group: SIGTERM, up to HN_SPAWN_GRACE_MS for the child to exit,
 * then SIGKILL for whatever is left of the group (the child itself, or helpers it started
 * that ignored SIGTERM), then reaps the child. SIGKILL cannot be caught, so the final wait
 * only blocks for a process stuck in the kernel (uninterruptible I/O), which no signal ends.
 */
static int kill_and_reap(pid_t pid, int *st)
{
    kill(-pid, SIGTERM);
    wait_exit(pid, hn_mono_ns() + HN_SPAWN_GRACE_MS * NS_PER_MS, 0, st);
    kill(-pid, SIGKILL);
    return reap(pid, st);
}

/* Sets up the child: stdin from /dev/null, stdout and stderr into wfd, clean signal state,
 * own process group. */
static int child_setup(posix_spawn_file_actions_t *fa, posix_spawnattr_t *attr, int wfd)
{
    sigset_t none, all;
    int rc;

    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    /* dup2 clears close-on-exec on the copies; the pipe's own fds close at exec. stdin is
     * opened last in case the pipe itself was given fd 0 by a caller that closed stdin. */
    if ((rc = posix_spawn_file_actions_adddup2(fa, wfd, STDOUT_FILENO)) ||
        (rc = posix_spawn_file_actions_adddup2(fa, wfd, STDERR_FILENO)) ||
        (rc = posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0)))
        return -rc;
    if ((rc = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                 POSIX_SPAWN_SETPGROUP)) ||
        (rc = posix_spawnattr_setsigmask(attr, &none)) ||
        (rc = posix_spawnattr_setsigdefault(attr, &all)) ||
        (rc = posix_spawnattr_setpgroup(attr, 0)))
        return -rc;
    return 0;
}

/* Stores n bytes of child output in out up to its cap; sets *dropped past it. */
static void capture(struct hn_buf *out, const char *data, size_t n, int *dropped)
{
    if (!out)
        return;
    size_t room = out->max - out->len;
    size_t take = n < room ? n : room;
    if (take > 0)
        hn_buf_append(out, data, take);
    if (take < n)
        *dropped = 1;
}

int hn_spawn_run(const char *const argv[], const char *const envp[], int timeout_ms,
                 struct hn_buf *out, int *truncated, int *exit_status)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int pfd[2];
    int rc, st = 0, dropped = 0;
    pid_t pid;

    if (truncated)
        *truncated = 0;
    if (exit_status)
        *exit_status = -1;
    if (out)
        hn_buf_reset(out);
    if (!argv || !argv[0] || !argv[0][0] || timeout_ms <= 0)
        return -EINVAL;

    uint64_t deadline = hn_mono_ns() + (uint64_t)timeout_ms * NS_PER_MS;

    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -errno;
    if ((rc = posix_spawn_file_actions_init(&fa))) {
        rc = -rc;
        goto out_close_pipe;
    }
    if ((rc = posix_spawnattr_init(&attr))) {
        rc = -rc;
        goto out_destroy_fa;
    }
    if ((rc = child_setup(&fa, &attr, pfd[1])))
        goto out_destroy_attr;

    /* posix_spawnp's prototype predates const-correct argv; it does not modify them. */
    rc = posix_spawnp(&pid, argv[0], &fa, &attr, (char *const *)argv,
                      envp ? (char *const *)envp : environ);
    if (rc) {
        rc = -rc;
        goto out_destroy_attr;
    }
    close(pfd[1]);
    pfd[1] = -1;

    /* Read until end of file (the child and everything it started closed the pipe). */
    int timed_out = 0;
    char chunk[4096];
    for (;;) {
        int left = remaining_ms(deadline);
        if (left == 0) {
            timed_out = 1;
            break;
        }
        struct pollfd p = {.fd = pfd[0], .events = POLLIN};
        int n = poll(&p, 1, left);
        if (n < 0 && errno != EINTR) {
            rc = -errno;
            break;
        }
        if (n <= 0)
            continue;
        ssize_t r = read(pfd[0], chunk, sizeof(chunk));
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            rc = -errno;
            break;
        }
        if (r == 0)
            break;
        capture(out, chunk, (size_t)r, &dropped);
    }
    /* Closing our end first means a child still writing gets EPIPE instead of blocking. */
    close(pfd[0]);
    pfd[0] = -1;

    if (!timed_out && rc == 0) {
        int w = wait_exit(pid, deadline, 1, &st);
        if (w == 0)
            goto out_status;
        if (w == -ETIMEDOUT)
            timed_out = 1;
        else
            rc = w;
    }
    /* Deadline passed, or a read error left the child running: end it, always reap it. */
    int k = kill_and_reap(pid, &st);
    if (timed_out)
        rc = -ETIMEDOUT;
    else if (rc == 0)
        rc = k;

out_status:
    if (exit_status)
        *exit_status = status_code(st);
    if (truncated)
        *truncated = dropped;
out_destroy_attr:
    posix_spawnattr_destroy(&attr);
out_destroy_fa:
    posix_spawn_file_actions_destroy(&fa);
out_close_pipe:
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (pfd[1] >= 0)
        close(pfd[1]);
    return rc;
}
