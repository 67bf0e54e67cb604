#include "agent/steps.h"

#include "agent/config.h"
#include "common/dgram.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/subuid.h"
#include "common/util.h"
#include "common/xid.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DGRAM_BUF       1024 /* a datagram longer than HN_STEP_DGRAM_MAX is read whole, then refused */
#define SERIES_MAX      64 /* (job, rank) pairs exported on /metrics */
#define SERIES_TTL_NS   (600ull * 1000000000ull)
#define QLEN            1024                    /* datagrams the socket queues (common/dgram.h) */
#define RECV_BATCH      256                     /* datagrams read between two looks at the stop */
#define SUBUID_CHECK_MS 2000                    /* how often the subuid file is looked at */
#define SUBUID_RETRY_NS (60ull * 1000000000ull) /* names the name service failed: again */

struct series {
    char job[HN_JOB_ID_SIZE];
    int64_t rank, gpu;
    uint64_t step;
    double seconds;
    uint64_t seen_ns; /* collected, by hn_mono_ns(); 0: free */
};

struct steps {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int fd, stop_fd;
    pthread_t thread;
    pthread_mutex_t lock;
    /* Filled by the receiver thread under lock. */
    struct hn_steps_report queue[HN_STEPS_CYCLE_MAX];
    unsigned nqueue;
    uint64_t accepted, malformed, dropped, from_subuid;
    char last_error[160];
    int new_error;
    /* The subordinate uid ranges of subuid_path, swapped in by the subuid thread and read by
     * the receiver, under lock. */
    struct hn_subuid subuid;
    /* The subuid thread only: the file as last read (st_ino 0: none; kept only when it was
     * read), and when to read it again although it did not change, because the name service
     * failed on a line. A thread of its own, so that a name service that hangs delays
     * nothing else. */
    char subuid_path[PATH_MAX];
    struct stat subuid_st;
    uint64_t subuid_retry_ns;
    int subuid_read_failed;
    pthread_t subuid_thread;
    int subuid_running;
    /* Collect thread only. */
    struct hn_steps_report cycle[HN_STEPS_CYCLE_MAX];
    unsigned ncycle;
    struct series series[SERIES_MAX];
};

/* Puts t in place of the ranges in use (under lock, so the receiver sees one or the other). */
static void subuid_swap(struct steps *st, struct hn_subuid *t)
{
    struct hn_subuid old;
    pthread_mutex_lock(&st->lock);
    old = st->subuid;
    st->subuid = *t;
    pthread_mutex_unlock(&st->lock);
    hn_subuid_fini(&old);
}

/* Reads subuid_path again if it changed since it was last read, went away, could not be read,
 * or had a line the name service could not look up a minute ago. The subuid thread: the
 * receiver never waits on a file or a name service. */
static void subuid_refresh(struct steps *st)
{
    struct hn_subuid t = {0};
    struct stat sb;
    if (stat(st->subuid_path, &sb) != 0) {
        /* Ranges are in use only after a read, which keeps the file's stat: nothing to drop
         * otherwise (a node without the file looks every 2 s and does nothing more). */
        if (st->subuid_st.st_ino) {
            hn_info("steps: %s: %s; no subordinate uid counts as its user's now", st->subuid_path,
                    strerror(errno));
            memset(&st->subuid_st, 0, sizeof(st->subuid_st));
            subuid_swap(st, &t);
        }
        return;
    }
    uint64_t now = hn_mono_ns();
    if (sb.st_ino == st->subuid_st.st_ino && sb.st_dev == st->subuid_st.st_dev &&
        sb.st_size == st->subuid_st.st_size && sb.st_mtim.tv_sec == st->subuid_st.st_mtim.tv_sec &&
        sb.st_mtim.tv_nsec == st->subuid_st.st_mtim.tv_nsec &&
        (!st->subuid_retry_ns || now < st->subuid_retry_ns))
        return;
    st->subuid_retry_ns = 0;
    char *text = NULL, err[160] = "";
    size_t len = 0;
    if (hn_csv_read_file(st->subuid_path, &text, &len, err, sizeof(err)) != 0) {
        /* err names the file. Its stat is not kept, so the next look reads it again; the
         * warning comes once until a read works. */
        if (!st->subuid_read_failed)
            hn_warn("steps: %s; no subordinate uid counts as its user's", err);
        st->subuid_read_failed = 1;
        memset(&st->subuid_st, 0, sizeof(st->subuid_st));
        subuid_swap(st, &t);
        return;
    }
    st->subuid_read_failed = 0;
    st->subuid_st = sb;
    if (hn_subuid_parse(text, len, NULL, &t, err, sizeof(err)) != 0) {
        hn_warn("steps: %s: %s; no subordinate uid counts as its user's", st->subuid_path, err);
    } else {
        if (t.skipped)
            hn_warn("steps: %s: %u lines left out, their uids mapping nothing (the first, %s)%s",
                    st->subuid_path, t.skipped, err,
                    t.unresolved ? "; names the name service failed on: again in a minute" : "");
        if (t.unresolved)
            st->subuid_retry_ns = now + SUBUID_RETRY_NS;
        hn_info("steps: %zu subordinate uid ranges from %s (root's and those left out map "
                "nothing)",
                t.n, st->subuid_path);
    }
    free(text);
    subuid_swap(st, &t);
}

/* The subuid thread: reads the file at once, then looks at it every SUBUID_CHECK_MS until
 * stop_fd fires. */
static void *subuid_main(void *arg)
{
    struct steps *st = arg;
    struct pollfd pf = {st->stop_fd, POLLIN, 0};
    for (;;) {
        subuid_refresh(st);
        int n = poll(&pf, 1, SUBUID_CHECK_MS);
        if (n > 0 || (n < 0 && errno != EINTR))
            return NULL; /* stopping (or poll broke: the ranges stay as they are) */
    }
}

/* A datagram of `size` bytes, of which buf holds the first n. */
static void receive_one(struct steps *st, const char *buf, size_t n, size_t size, uint32_t sender)
{
    struct hn_steps_report r = {.uid = sender};
    char err[160];
    int rc = -EBADMSG;
    if (size > n) /* cut off by the buffer: refused by its own size, not the buffer's */
        snprintf(err, sizeof(err), "datagram of %zu bytes (at most %d)", size, HN_STEP_DGRAM_MAX);
    else
        rc = hn_stepmsg_parse(buf, n, &r.msg, err, sizeof(err));
    r.time_ns = hn_wall_ns();
    pthread_mutex_lock(&st->lock);
    /* A user's subordinate uid counts as the user's (common/subuid.h). */
    uint32_t owner;
    int mapped = sender != HN_FRAME_NO_U32 && hn_subuid_owner(&st->subuid, sender, &owner);
    if (mapped)
        r.uid = owner;
    if (rc != 0) {
        st->malformed++;
        hn_strlcpy(st->last_error, err, sizeof(st->last_error));
        st->new_error = 1;
    } else if (st->nqueue == HN_STEPS_CYCLE_MAX) {
        st->dropped++;
    } else {
        st->queue[st->nqueue++] = r;
        st->accepted++;
        st->from_subuid += (uint64_t)mapped;
    }
    pthread_mutex_unlock(&st->lock);
}

/* The sender's user id from a datagram's SCM_CREDENTIALS, which the kernel attaches to every
 * datagram on a socket with SO_PASSCRED whether or not the sender sent any, and which a sender
 * can set to another uid only with CAP_SETUID (unix(7)); HN_FRAME_NO_U32 without one. */
static uint32_t sender_uid(struct msghdr *mh)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
            c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            struct ucred cred;
            memcpy(&cred, CMSG_DATA(c), sizeof(cred));
            return (uint32_t)cred.uid;
        }
    }
    return HN_FRAME_NO_U32;
}

static void *receiver(void *arg)
{
    struct steps *st = arg;
    char buf[DGRAM_BUF];
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(struct ucred))];
    } control;
    struct pollfd pf[2] = {{st->fd, POLLIN, 0}, {st->stop_fd, POLLIN, 0}};
    for (;;) {
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            hn_err("steps: poll: %s; no more step reports", strerror(errno));
            return NULL;
        }
        if (pf[1].revents)
            return NULL;
        /* Drain what is there, a batch at a time so that a flood (any local user may send)
         * does not keep the stop unseen; MSG_TRUNC gives an oversized datagram's length. */
        for (int k = 0; k < RECV_BATCH; k++) {
            struct iovec iov = {buf, sizeof(buf)};
            struct msghdr mh = {.msg_iov = &iov,
                                .msg_iovlen = 1,
                                .msg_control = control.bytes,
                                .msg_controllen = sizeof(control.bytes)};
            ssize_t n = recvmsg(st->fd, &mh, MSG_DONTWAIT | MSG_TRUNC);
            if (n < 0)
                break;
            receive_one(st, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf), (size_t)n,
                        sender_uid(&mh));
        }
    }
}

/* Creates the socket's directory (one level, like /run/houston) if it is missing. */
static int make_dir(const char *path)
{
    char dir[PATH_MAX];
    hn_strlcpy(dir, path, sizeof(dir));
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* Removes a socket file no live agent answers on; -EADDRINUSE when one does. */
static int clear_stale(const char *path, const struct sockaddr_un *sa)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return 0;
    if (!S_ISSOCK(sb.st_mode))
        return -EEXIST;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
    close(fd);
    if (live)
        return -EADDRINUSE;
    return unlink(path) == 0 ? 0 : -errno;
}

static int steps_init(const struct hn_agent_config *cfg, void **state)
{
    if (!cfg->step_socket[0])
        return -ENOENT; /* turned off */
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(cfg->step_socket) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    hn_strlcpy(sa.sun_path, cfg->step_socket, sizeof(sa.sun_path));
    int rc = make_dir(cfg->step_socket);
    if (rc == 0)
        rc = clear_stale(cfg->step_socket, &sa);
    if (rc != 0) {
        hn_warn("steps: %s: %s", cfg->step_socket,
                rc == -EADDRINUSE ? "another agent is listening there"
                : rc == -EEXIST   ? "exists and is not a socket"
                                  : strerror(-rc));
        return rc;
    }
    struct steps *st = xcalloc(1, sizeof(*st));
    hn_strlcpy(st->path, cfg->step_socket, sizeof(st->path));
    hn_strlcpy(st->subuid_path, cfg->step_subuid_file, sizeof(st->subuid_path));
    st->stop_fd = -1;
    unsigned qlen = 0;
    st->fd = hn_dgram_bind(cfg->step_socket, QLEN, &qlen);
    if (st->fd < 0) {
        rc = st->fd;
        hn_warn("steps: cannot listen on %s: %s", cfg->step_socket, strerror(-rc));
        goto fail;
    }
    if (qlen && qlen < 64)
        hn_warn("steps: %s queues %u datagrams (net.unix.max_dgram_qlen; houston could not raise "
                "it): reports of more ranks than that finishing at once may be dropped; set "
                "the sysctl to %d",
                cfg->step_socket, qlen, QLEN);
    /* Any user's training job may report: the socket takes short text and nothing else. */
    if (chmod(cfg->step_socket, 0666) != 0)
        hn_warn("steps: chmod %s: %s", cfg->step_socket, strerror(errno));
    int rcvbuf = 4 << 20;
    (void)setsockopt(st->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    st->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (st->stop_fd < 0) {
        rc = -errno;
        goto fail_unlink;
    }
    pthread_mutex_init(&st->lock, NULL);
    if ((rc = -pthread_create(&st->thread, NULL, receiver, st)) != 0) {
        pthread_mutex_destroy(&st->lock);
        goto fail_unlink;
    }
    if (st->subuid_path[0]) {
        int e = pthread_create(&st->subuid_thread, NULL, subuid_main, st);
        st->subuid_running = e == 0;
        if (e != 0)
            hn_warn("steps: cannot start the thread that reads %s: %s; no subordinate uid "
                    "counts as its user's",
                    st->subuid_path, strerror(e));
    }
    hn_info("steps: listening for step reports on %s (queue %u)", st->path, qlen);
    *state = st;
    return 0;

fail_unlink:
    unlink(st->path);
fail:
    if (st->fd >= 0)
        close(st->fd);
    if (st->stop_fd >= 0)
        close(st->stop_fd);
    free(st);
    return rc;
}

/* The exported series of (job, rank): found, a free slot, or the one seen longest ago. */
static struct series *series_slot(struct steps *st, const struct hn_step_msg *m)
{
    struct series *oldest = &st->series[0];
    for (size_t i = 0; i < SERIES_MAX; i++) {
        struct series *s = &st->series[i];
        if (s->seen_ns && s->rank == m->rank && strcmp(s->job, m->job) == 0)
            return s;
        if (s->seen_ns < oldest->seen_ns)
            oldest = s;
    }
    hn_strlcpy(oldest->job, m->job, sizeof(oldest->job));
    oldest->rank = m->rank;
    return oldest;
}

static int steps_collect(void *state)
{
    struct steps *st = state;
    char err[sizeof(st->last_error)] = "";
    pthread_mutex_lock(&st->lock);
    memcpy(st->cycle, st->queue, st->nqueue * sizeof(st->queue[0]));
    st->ncycle = st->nqueue;
    st->nqueue = 0;
    if (st->new_error) {
        memcpy(err, st->last_error, sizeof(err));
        st->new_error = 0;
    }
    pthread_mutex_unlock(&st->lock);
    if (err[0])
        hn_debug("steps: malformed step report: %s", err);

    /* Series age by the monotonic clock: a wall clock stepped back (NTP) made every series
     * seen since look older than the TTL (unsigned), and one stepped forward aged them all. */
    uint64_t now = hn_mono_ns();
    for (unsigned i = 0; i < st->ncycle; i++) {
        const struct hn_steps_report *r = &st->cycle[i];
        if (r->msg.pause != HN_PAUSE_NONE)
            continue; /* a notice, not a step: the series keep the last step */
        struct series *s = series_slot(st, &r->msg);
        s->gpu = r->msg.gpu >= 0 ? r->msg.gpu : r->msg.local_rank;
        s->step = r->msg.step;
        s->seconds = r->msg.seconds;
        s->seen_ns = now; /* within a cycle of its arrival */
    }
    for (size_t i = 0; i < SERIES_MAX; i++) {
        if (st->series[i].seen_ns && now - st->series[i].seen_ns > SERIES_TTL_NS)
            st->series[i].seen_ns = 0;
    }
    return 0;
}

static void steps_render(void *state, struct hn_expo *e)
{
    struct steps *st = state;
    uint64_t n[3], subuid;
    pthread_mutex_lock(&st->lock);
    n[0] = st->accepted;
    n[1] = st->malformed;
    n[2] = st->dropped;
    subuid = st->from_subuid;
    pthread_mutex_unlock(&st->lock);
    static const char *const results[] = {"accepted", "malformed", "dropped"};
    char labels[256];
    size_t len;
    hn_expo_family(e, "houston_agent_step_reports_total",
                   "Step reports received from training processes, by result.", HN_COUNTER);
    for (size_t i = 0; i < 3; i++) {
        len = 0;
        labels[0] = '\0';
        hn_expo_label(labels, sizeof(labels), &len, "result", results[i]);
        hn_expo_sample(e, "houston_agent_step_reports_total", labels, (double)n[i]);
    }
    hn_expo_family(e, "houston_agent_step_reports_subuid_total",
                   "Accepted step reports sent from a user's subordinate uid (a rootless "
                   "container), counted as that user's.",
                   HN_COUNTER);
    hn_expo_sample(e, "houston_agent_step_reports_subuid_total", "", (double)subuid);
    static const char *const fam[] = {"houston_step_seconds", "houston_step"};
    static const char *const help[] = {"Duration of the last step a rank on this node reported.",
                                       "Number of the last step a rank on this node reported."};
    for (size_t f = 0; f < 2; f++) {
        hn_expo_family(e, fam[f], help[f], HN_GAUGE);
        for (size_t i = 0; i < SERIES_MAX; i++) {
            const struct series *s = &st->series[i];
            if (!s->seen_ns)
                continue;
            char num[24];
            len = 0;
            labels[0] = '\0';
            hn_expo_label(labels, sizeof(labels), &len, "job", s->job);
            snprintf(num, sizeof(num), "%lld", (long long)s->rank);
            hn_expo_label(labels, sizeof(labels), &len, "rank", num);
            if (s->gpu >= 0) { /* absent when the report named none (no gpu=, no lrank=) */
                snprintf(num, sizeof(num), "%lld", (long long)s->gpu);
                hn_expo_label(labels, sizeof(labels), &len, "gpu", num);
            }
            hn_expo_sample(e, fam[f], labels, f == 0 ? s->seconds : (double)s->step);
        }
    }
}

static void steps_fini(void *state)
{
    struct steps *st = state;
    uint64_t one = 1;
    if (write(st->stop_fd, &one, sizeof(one)) == (ssize_t)sizeof(one)) {
        pthread_join(st->thread, NULL);
        if (st->subuid_running)
            pthread_join(st->subuid_thread, NULL);
    }
    pthread_mutex_destroy(&st->lock);
    close(st->fd);
    close(st->stop_fd);
    unlink(st->path);
    hn_subuid_fini(&st->subuid);
    free(st);
}

unsigned hn_steps_cycle(const void *state, const struct hn_steps_report **reports)
{
    const struct steps *st = state;
    *reports = st->cycle;
    return st->ncycle;
}

const struct hn_collector hn_collector_steps = {
    .name = "steps",
    .init = steps_init,
    .collect = steps_collect,
    .render = steps_render,
    .fini = steps_fini,
};
