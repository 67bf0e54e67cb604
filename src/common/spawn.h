/*
 * spawn.h - run a child program with a deadline and capture its output, without a shell.
 *
 * houston runs outside programs (scontrol, later nvidia-smi and friends) that may hang, flood
 * their output or not exist. hn_spawn_run() starts one with posix_spawnp() and an argv (never
 * a shell string), gives it /dev/null as stdin, captures stdout and stderr together through
 * one pipe up to a cap, and waits at most timeout_ms. A child past its deadline gets SIGTERM,
 * then SIGKILL after a short grace; the child runs in its own process group so that both
 * signals also reach anything it started (a shell script's `sleep`). The child is always
 * reaped before the call returns: no zombies are left behind.
 *
 * The child starts with an empty signal mask and default signal dispositions whatever the
 * calling thread blocks or ignores. The pipe is created close-on-exec, so a concurrent spawn in
 * another thread does not inherit it. There is no global state: safe to call from any thread.
 * The calling process must not set SIGCHLD to SIG_IGN (the child could not be waited for).
 */
#ifndef HN_SPAWN_H
#define HN_SPAWN_H

#include "common/buf.h"

/* How long a child has between SIGTERM and SIGKILL once its deadline has passed. */
#define HN_SPAWN_GRACE_MS 500

/*
 * Runs argv[0] (looked up in PATH when it has no '/') with arguments argv (NULL-terminated)
 * and environment envp (NULL-terminated; NULL inherits the caller's environment).
 *
 * out (may be NULL to discard): reset, then receives stdout and stderr interleaved, at most
 * out->max bytes; the rest is read and discarded so the child never blocks on a full pipe,
 * and *truncated (may be NULL) is set to 1 (0 otherwise). out stays NUL-terminated.
 * exit_status (may be NULL): the child's exit code, or 128 + signal number if a signal ended
 * it (shell convention), also set when the deadline passed.
 *
 * Returns 0 when the child ran and was reaped (whatever its exit code); -ETIMEDOUT when it was
 * still running (or still holding the pipe open) after timeout_ms and was killed; -ENOENT or
 * -EACCES when the program cannot be found or executed; -EINVAL for an empty argv or a
 * timeout_ms <= 0; another negative errno when a system call failed.
 */
int hn_spawn_run(const char *const argv[], const char *const envp[], int timeout_ms,
                 struct hn_buf *out, int *truncated, int *exit_status);

#endif
