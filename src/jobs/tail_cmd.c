/*
 * tail_cmd.c - `houston tail`: turns a training log into step reports (docs/tail.md).
 *
 * A framework that cannot link the step client (include/houston/step.h) still prints one line
 * per log interval; this verb reads those lines (src/jobs/trainlog.h) from a file, a pipe or
 * stdin and sends each as a report through the same client, so the agent cannot tell the two
 * apart. Single-threaded: read, split into lines, parse, report.
 *
 * Lines end at '\n', '\r' or "\r\n" (Lightning redraws its progress bar after each '\r'); a run
 * of NULs (a hole a rotation or a crash left) ends the line it cuts short. A line longer than
 * LINE_MAX_BYTES is skipped, and counted as malformed when its first or last LINE_MAX_BYTES
 * look like an iteration; so is an iteration line cut short (line_whole). A record whose step
 * equals the last one reported is a redraw of the same step and is skipped. Checkpoint lines give
 * the reports' ckpt= (save_seen()); a save's first line is a pause notice after the save's step, an
 * evaluation's after the last step reported. When the reports carry a world size W > 1, their
 * tokens are the job's divided by W (rank_share()). A report the agent's full queue refuses is
 * retried for a while (this is a tool, not a training rank: it may wait). With --follow a
 * regular file is read from its end (--from-start: its start), then polled every FOLLOW_POLL_MS for
 * more, for truncation (read again from the start) and for a new file at the same path (logrotate:
 * the rest of the old file, then the new one), as tail -F does; a stop reads the file to its
 * current end first. From its end (--from-end, --follow's default): what the file holds at the
 * start is read without sending it (read_before), so that its settings hold for the lines after.
 */
#include "houston/step.h"
#include "jobs/trainlog.h"
#include "verbs.h"

#include "common/opts.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES ((size_t)16 * 1024) /* Megatron lines are ~500 bytes */
#define READ_CHUNK     ((size_t)64 * 1024)
#define FOLLOW_POLL_MS 200
#define SEQ_LEN_MAX    ((int64_t)1 << 30)
/* A full agent queue (EAGAIN; Linux queues only net.unix.max_dgram_qlen = 10 datagrams by
 * default) is retried this often, 1 ms apart (2 s in all): reading a long log from its start
 * sends faster than an agent drains, and an agent on a busy node may not read for a while. A
 * training rank never waits; this tool may, since the log keeps what it has not read yet. */
#define FULL_RETRIES      2000
#define FORMAT_HINT_LINES 10 /* another format's iteration lines before format_hint() speaks */

struct tail_opts {
    enum hn_trainlog_format format;
    int follow;
    int from_end;   /* --from-end */
    int from_start; /* --from-start: not --follow's default, --from-end (hn_cmd_tail) */
    int print;
    const char *job;
    int rank, local_rank, world;
    const char *socket;
    int64_t seq_len;      /* -1: take "actual seqlen" from the line when it is there */
    double fpt;           /* --flops-per-token, NaN: not sent */
    int64_t global_batch; /* --global-batch, -1: from the log */
    const char *path;     /* NULL: stdin */
};

struct tail_stats {
    uint64_t lines;
    uint64_t reported;
    uint64_t malformed;
    uint64_t repeated;
    uint64_t pauses;         /* checkpoint saves announced (pause notices sent or printed) */
    uint64_t evals;          /* evaluations announced (the same) */
    uint64_t evals_timed;    /* evaluations whose time was left out of DeepSpeed's step times */
    uint64_t dropped;        /* reports lost for good (a full queue is retried first) */
    uint64_t untimed;        /* DeepSpeed step lines that only start the clock (deepspeed_time) */
    uint64_t before;         /* lines the file held at the start (--from-end): read, not sent */
    uint64_t before_reports; /* reports of those lines, not sent */
};

struct tail {
    const struct tail_opts *o;
    struct tail_stats st;
    struct hn_step_client *client;
    int have_last;
    uint64_t last_iter;
    int64_t last_tokens; /* consumed tokens at last_tokens_iter, -1 unknown */
    uint64_t last_tokens_iter;
    int world;         /* the world size the reports carry, -1 none */
    int64_t ckpt;      /* the step of the last completed checkpoint, -1 none yet */
    int64_t save_at;   /* a save begun at this step and not known to be complete, -1 none */
    int save_async;    /* that save was handed to a background writer */
    int log_has_saved; /* the log prints "successfully saved" lines: only they complete */
    /* DeepSpeed (deepspeed_time): the clock is started (ds_have) at the last step line's
     * step and time stamp; the time spent in checkpoint saves since, when the save in
     * progress began and when its last "ready" line came (NaN: none). */
    int ds_have;
    uint64_t ds_step;
    double ds_time, ds_saving, ds_save_began, ds_save_ready;
    double ds_eval; /* seconds of evaluations (Hugging Face's eval_runtime) since the step line */
    uint64_t ds_save_step; /* the step of the save in progress */
    int64_t tag_save_step; /* the step of the last save under a tag of the job's own; -1: none */
    int ds_save_lost;      /* a save since the last step line has no known length */
    int64_t ds_ready_step; /* a "ready" line's step, complete at the next step line; -1 */
    int64_t ds_batch;      /* the configuration's train_batch_size, -1 until it is seen */
    /* Iteration lines of --format's kind, and of each other kind (by enum hn_trainlog_format),
     * for the hint that the log is another framework's (format_hint). */
    uint64_t own_iters, other_iters[4];
    int hinted;
    int nemo1;          /* the last NeMo iteration line was NeMo 1's progress bar */
    int64_t eval_after; /* the step the last evaluation notice was sent after, -1: none */
    /* Megatron's periodic evaluations: every eval_every steps (0: not known, or none), the
     * step of the last notice sent for one whose "validation loss" line has not come (-1),
     * and whether its arguments said it never evaluates (eval_iters 0). */
    uint64_t eval_every;
    int64_t eval_owed;
    int eval_never;
    char chunk[READ_CHUNK];
    char line[LINE_MAX_BYTES];
    size_t len;
    int overlong; /* the current line passed LINE_MAX_BYTES; the rest is being skipped */
    /* The last LINE_MAX_BYTES of an overlong line, a ring: its iteration text may come after
     * the first (a progress bar redrawn without '\r', a warning printed without '\n'). */
    char over[LINE_MAX_BYTES];
    size_t over_at, over_len;
    int cut;      /* the current line ends without its terminator: at a NUL, at the end of
                     the input, or of a file replaced under us (line_whole) */
    int after_cr; /* the last terminator was '\r': a '\n' right after it ends nothing */
    int quiet;    /* reading what the file held at the start (--from-end): nothing is sent */
    int held;     /* the current piece was all in the file at the start (read_before): not
                     sent at the end of the input, since its end never came */
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short, which is what a stop wants */
}

void hn_usage_tail(FILE *out)
{
    fprintf(out,
            "usage: houston tail [--format megatron|nemo|deepspeed] [options] [FILE|-]\n"
            "\n"
            "Reads a training log (FILE, or stdin when FILE is '-' or absent) and sends one\n"
            "step report per iteration line to the node's houston agent, as a program linked\n"
            "with libhouston-step would. Such a log is written by one process for the whole\n"
            "job, so its reports carry one rank (--rank, else RANK / SLURM_PROCID, else 0)\n"
            "and the controller reads them as the job's step time. Unreadable lines are\n"
            "counted and skipped. A checkpoint save's first line (Megatron's 'saving\n"
            "checkpoint at iteration N', DeepSpeed's 'Checkpoint global_stepN is about to be\n"
            "saved!' (under a tag of the job's own, of the last step line), NeMo's 'Epoch E,\n"
            "global step N: ...' or 'Global Checkpoint Save') is sent\n"
            "as a pause notice, so that a long save is not taken for a hang; once the save is\n"
            "complete ('successfully saved checkpoint', 'is ready now!', NeMo's 'finalized\n"
            "successfully', else the next iteration line of a save that was not async), every\n"
            "later report carries ckpt=N. An evaluation's first line (Megatron's 'Evaluating\n"
            "iter 1/K', NeMo's 'Validation: iteration 1/K') is sent as a pause notice too,\n"
            "and so is the line of each step Megatron's periodic evaluations follow (every\n"
            "eval_interval steps, as its arguments or 'validation loss at iteration N' lines\n"
            "show).\n"
            "At the end a summary goes to stderr: lines read, iterations reported, malformed\n"
            "lines skipped, reports dropped, checkpoint saves and evaluations announced. A\n"
            "log whose iteration lines are all of another format gets a hint naming it.\n"
            "\n");
    fprintf(out,
            "options:\n"
            "  --format NAME     megatron (default: Megatron-LM, Megatron-DeepSpeed lines with\n"
            "                    'elapsed time per iteration (ms)'), nemo (NeMo 2 iteration\n"
            "                    lines, NeMo 1 progress bars with 'train_step_timing') or\n"
            "                    deepspeed (DeepSpeed's engine, e.g. under Hugging Face's\n"
            "                    Trainer: its 'step=N, skipped=K' lines every steps_per_print\n"
            "                    steps, timed by their stamps; checkpoint saves with their\n"
            "                    'ready' lines are left out, and so are evaluations that\n"
            "                    Hugging Face's Trainer reports with 'eval_runtime')\n"
            "  -f, --follow      send what is written to FILE from now on (as --from-end),\n"
            "                    reading as it grows, is truncated or is replaced (tail -F);\n"
            "                    a FILE not there yet is waited for. Stop with SIGINT or\n"
            "                    SIGTERM. A pipe is read to its end.\n"
            "  --from-end        send only the lines written to FILE from now on; what it\n"
            "                    holds is read for the log's settings but not sent (the\n"
            "                    default with --follow: a tail started again in the middle\n"
            "                    of a run, or with a requeued job whose log is appended to,\n"
            "                    would send steps reported before)\n"
            "  --from-start      send what FILE holds too, with --follow\n"
            "  --job ID          job id (default SLURM_JOB_ID, else HOUSTON_JOB_ID; required)\n"
            "  --rank N          rank the reports carry (default RANK, SLURM_PROCID, else 0)\n"
            "  --local-rank N    local rank (default LOCAL_RANK, SLURM_LOCALID; else none)\n"
            "  --world N         world size (default WORLD_SIZE, SLURM_NTASKS; else none);\n"
            "                    with N > 1 a report's tokens are the job's divided by N\n"
            "  --socket PATH     the agent's step socket (default HOUSTON_STEP_SOCKET, else\n"
            "                    " HN_STEP_SOCKET_DEFAULT ")\n"
            "  --seq-len N       tokens per sample: a report's tokens are global batch size x N\n"
            "                    (default: the line's 'actual seqlen', else the change in\n"
            "                    'consumed tokens' per iteration, else not sent); DeepSpeed's\n"
            "                    batch size is its configuration's train_batch_size line\n"
            "  --global-batch N  samples per step where the log does not say (a DeepSpeed\n"
            "                    log without its set-up: a pipe joined late, a rotated log)\n"
            "  --flops-per-token F  model FLOPs per token (`houston mfu --json` gives it):\n"
            "                    with tokens, the controller computes the job's MFU where the\n"
            "                    log prints no TFLOP/s; needs --world = the job's GPU count\n"
            "  --print           write the datagrams to stdout, one per line, instead of\n"
            "                    sending them\n"
            "  -h, --help        show this help\n"
            "\n"
            "Exit status: 0 when the log was read (dropped reports included), 2 for a usage\n"
            "error or a log that cannot be read.\n");
}

/* ---- options ---- */

static int parse_count_opt(const char *name, const char *arg, int64_t min, int64_t max,
                           int64_t *out)
{
    int64_t n;
    if (hn_parse_i64(arg, 10, &n) != 0 || n < min || n > max) {
        fprintf(stderr, "houston tail: %s: '%s' is not %lld..%lld\n", name, arg, (long long)min,
                (long long)max);
        return -1;
    }
    *out = n;
    return 0;
}

static const struct option tail_long_opts[] = {
    {"format", required_argument, NULL, 'F'},
    {"follow", no_argument, NULL, 'f'},
    {"from-end", no_argument, NULL, 'E'},
    {"from-start", no_argument, NULL, 'S'},
    {"job", required_argument, NULL, 'j'},
    {"rank", required_argument, NULL, 'r'},
    {"local-rank", required_argument, NULL, 'l'},
    {"world", required_argument, NULL, 'w'},
    {"socket", required_argument, NULL, 's'},
    {"seq-len", required_argument, NULL, 'q'},
    {"print", no_argument, NULL, 'p'},
    {"help", no_argument, NULL, 'h'},
    {"flops-per-token", required_argument, NULL, 'P'},
    {"global-batch", required_argument, NULL, 'B'},
    {NULL, 0, NULL, 0},
};

/* parse_opts with g begun. */
static int parse_flags(struct hn_opts *g, int argc, char **argv, struct tail_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->format = HN_TRAINLOG_MEGATRON;
    o->rank = o->local_rank = o->world = -1;
    o->seq_len = -1;
    o->fpt = NAN;
    o->global_batch = -1;
    int ch;
    while ((ch = hn_opts_next(g, argc, argv)) != -1) {
        int64_t n;
        switch (ch) {
        case 'F':
            if (strcmp(optarg, "megatron") == 0) {
                o->format = HN_TRAINLOG_MEGATRON;
            } else if (strcmp(optarg, "nemo") == 0) {
                o->format = HN_TRAINLOG_NEMO;
            } else if (strcmp(optarg, "deepspeed") == 0) {
                o->format = HN_TRAINLOG_DEEPSPEED;
            } else {
                fprintf(stderr, "houston tail: --format: '%s' is not megatron, nemo or deepspeed\n",
                        optarg);
                return -1;
            }
            break;
        case 'f':
            o->follow = 1;
            break;
        case 'E':
            o->from_end = 1;
            break;
        case 'S':
            o->from_start = 1;
            break;
        case 'j':
            o->job = optarg;
            break;
        case 'r':
        case 'l':
        case 'w':
            if (parse_count_opt(ch == 'r'   ? "--rank"
                                : ch == 'l' ? "--local-rank"
                                            : "--world",
                                optarg, 0, INT_MAX, &n) != 0)
                return -1;
            if (ch == 'r')
                o->rank = (int)n;
            else if (ch == 'l')
                o->local_rank = (int)n;
            else
                o->world = (int)n;
            break;
        case 's':
            if (strlen(optarg) == 0 ||
                strlen(optarg) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
                fprintf(stderr, "houston tail: --socket: '%s' does not fit a socket address\n",
                        optarg);
                return -1;
            }
            o->socket = optarg;
            break;
        case 'q':
            if (parse_count_opt("--seq-len", optarg, 1, SEQ_LEN_MAX, &n) != 0)
                return -1;
            o->seq_len = n;
            break;
        case 'p':
            o->print = 1;
            break;
        case 'B':
            if (parse_count_opt("--global-batch", optarg, 1, SEQ_LEN_MAX, &n) != 0)
                return -1;
            o->global_batch = n;
            break;
        case 'P':
            if (hn_parse_double(optarg, &o->fpt) != 0 || !(o->fpt > 0) || !isfinite(o->fpt)) {
                fprintf(stderr,
                        "houston tail: --flops-per-token: '%s' is not a positive number (see "
                        "`houston mfu`)\n",
                        optarg);
                return -1;
            }
            break;
        case 'h':
            hn_usage_tail(stdout);
            return 1;
        default: /* '?': hn_opts_next said why */
            return -1;
        }
    }
    if (optind < argc) {
        if (strcmp(argv[optind], "-") != 0)
            o->path = argv[optind];
        optind++;
    }
    if (optind < argc) {
        fprintf(stderr, "houston tail: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->from_end && o->from_start) {
        fprintf(stderr, "houston tail: --from-end and --from-start exclude each other\n");
        return -1;
    }
    if ((o->from_end || o->from_start) && !o->path) {
        fprintf(stderr, "houston tail: --from-%s needs a FILE\n", o->from_end ? "end" : "start");
        return -1;
    }
    return 0;
}

/* Returns 0 to run, 1 after --help, -1 for a usage error. */
static int parse_opts(int argc, char **argv, struct tail_opts *o)
{
    struct hn_opts g;
    hn_opts_begin(&g, "tail", tail_long_opts, stderr);
    g.shorts = ":fh";
    int ret = parse_flags(&g, argc, argv, o);
    hn_opts_end(&g);
    return ret;
}

/* ---- one line ---- */

/* Tokens of one step, when the line says enough: global batch x sequence length, else the
 * growth of "consumed tokens" per iteration since the last line that had it; -1 otherwise. */
static int64_t step_tokens(struct tail *t, const struct hn_trainlog_rec *r)
{
    int64_t seq = t->o->seq_len > 0 ? t->o->seq_len : r->seq_len;
    int64_t batch = r->global_batch >= 0 ? r->global_batch : t->o->global_batch;
    int64_t tokens = -1;
    if (batch >= 0 && seq > 0 && batch <= INT64_MAX / seq) {
        tokens = batch * seq;
    } else if (r->consumed_tokens >= 0 && t->last_tokens >= 0 &&
               r->iteration > t->last_tokens_iter && r->consumed_tokens >= t->last_tokens) {
        tokens =
            (r->consumed_tokens - t->last_tokens) / (int64_t)(r->iteration - t->last_tokens_iter);
    }
    if (r->consumed_tokens >= 0) {
        t->last_tokens = r->consumed_tokens;
        t->last_tokens_iter = r->iteration;
    }
    return tokens;
}

/* Sends one datagram (s: a step report; else a pause notice of `pause`, an HN_STEP_PAUSE_ kind,
 * after step `at`), or prints it with --print; *counter counts it. */
static void send_one(struct tail *t, const struct hn_step *s, uint64_t at, int pause,
                     uint64_t *counter)
{
    if (t->quiet) { /* counted, for the summary of what was not sent */
        (*counter)++;
        return;
    }
    if (!t->o->print) {
        (*counter)++;
        int tries = 0;
        while ((s ? hn_step_report(t->client, s) : hn_step_pause(t->client, at, pause)) != 0) {
            if (hn_step_last_errno(t->client) != EAGAIN || ++tries > FULL_RETRIES ||
                stop_requested) {
                t->st.dropped++;
                return;
            }
            sleep_ms(1);
        }
        return;
    }
    char buf[HN_STEP_DGRAM_MAX];
    if ((s ? hn_step_format(t->client, s, buf, sizeof(buf))
           : hn_step_format_pause(t->client, at, pause, buf, sizeof(buf))) < 0) {
        t->st.malformed++;
        return;
    }
    (*counter)++;
    printf("%s\n", buf);
    fflush(stdout);
}

/*
 * One rank's share of the job's tokens, rounded to the nearest: the log speaks for the whole
 * job, but the controller reads `tokens` as one rank's and multiplies the ranks' mean by the
 * job's rank count, which is `world` when the reports carry one. Unchanged without a world
 * size (or with 1), and when unknown (-1).
 */
static int64_t rank_share(int64_t tokens, int world)
{
    if (tokens < 0 || world <= 1)
        return tokens;
    return tokens / world + (2 * (tokens % world) >= world); /* no overflow: rest < world */
}

static void report(struct tail *t, const struct hn_trainlog_rec *r)
{
    struct hn_step s;
    hn_step_init(&s);
    s.step = r->iteration;
    s.seconds = r->elapsed_ms / 1000.0;
    s.tokens = rank_share(step_tokens(t, r), t->world);
    s.checkpoint = t->ckpt;        /* on every report after the first completed save: the controller
                                      keeps the highest, so a lost report or an agent restart costs
                                      nothing */
    s.tflops = r->tflops;          /* NaN when not printed: not sent */
    s.flops_per_token = t->o->fpt; /* with tokens, MFU where the log prints no TFLOP/s */
    send_one(t, &s, 0, 0, &t->st.reported);
}

/* A checkpoint of `step` is complete: later reports carry it, unless a higher one is. */
static void ckpt_done(struct tail *t, uint64_t step)
{
    if (step <= INT64_MAX && (int64_t)step > t->ckpt)
        t->ckpt = (int64_t)step;
}

/*
 * A checkpoint line (kind from hn_trainlog_parse) for step `at`. A save is complete when the
 * log says so ("successfully saved checkpoint", printed once the files are written, later
 * for an async save). Not every log shows that line (a log filtered on the way, a fork that
 * drops it), so until it has shown one, a save that was not handed to a background writer
 * is also complete once the job steps again: Megatron's synchronous save returns to training
 * only after every rank has written its part, and a failed save ends the job (the save at
 * step 5 in tests/fixtures/training-logs/superbenchmark/megatron_deepspeed.log is followed by
 * no step and no success line, so it never counts).
 */
static void save_seen(struct tail *t, int kind, uint64_t at)
{
    int64_t step = at <= INT64_MAX ? (int64_t)at : -1;
    switch (kind) {
    case HN_TRAINLOG_SAVE:
        if (step != t->save_at) /* not another line of the same save (one a rank in NeMo) */
            t->save_async = 0;
        t->save_at = step;
        break;
    case HN_TRAINLOG_SAVE_ASYNC: /* step 0: NeMo's line, for the save begun last */
        if (step == t->save_at || at == 0)
            t->save_async = 1;
        break;
    case HN_TRAINLOG_SAVED:
        t->log_has_saved = 1;
        ckpt_done(t, at);
        if (t->save_at <= step)
            t->save_at = -1;
        break;
    default:
        break;
    }
}

/* The job steps again after a save begun at t->save_at (see save_seen). A step not above it
 * is a restart from an earlier checkpoint: that save is forgotten. */
static void steps_after_save(struct tail *t, uint64_t step)
{
    if (t->save_at < 0)
        return;
    if (step > (uint64_t)t->save_at && !t->save_async && !t->log_has_saved)
        ckpt_done(t, (uint64_t)t->save_at);
    t->save_at = -1;
}

/* Ends the save in progress: the time from its first line to its last "ready" line joins the
 * time spent saving; when no "ready" line came (DeepSpeed releases that do not print it, an
 * async engine) how long it took is unknown (ds_save_lost). */
static void deepspeed_save_end(struct tail *t)
{
    if (!isnan(t->ds_save_began)) {
        if (isnan(t->ds_save_ready))
            t->ds_save_lost = 1;
        else
            t->ds_saving += t->ds_save_ready - t->ds_save_began;
    }
    t->ds_save_began = t->ds_save_ready = NAN;
}

/*
 * DeepSpeed's step lines carry no step time: it is the time between this line and the last
 * one over the steps between, less the checkpoint saves and the evaluations in between
 * (Megatron's own step time leaves them out too). Sets r->elapsed_ms and returns 0; returns 1 for a
 * step line that only starts the clock again: the first of a run, or one that does not follow the
 * last (a restart, which may print steps again, or a stamp going back); -1 for a line without a
 * time stamp (malformed). (deepspeed_step leaves untimed a step after a save whose end is not
 * known, ds_save_lost.) Step 0 is printed when the engine is
 * set up, also when a run resumes from a checkpoint at step N, whose next line says N + k: the
 * clock does not start there, and the line after it only starts it.
 */
static int deepspeed_time(struct tail *t, struct hn_trainlog_rec *r)
{
    deepspeed_save_end(t); /* a step line ends a save, stamped or not */
    if (isnan(r->time_s)) {
        t->st.malformed++;
        return -1;
    }
    int follows = t->ds_have && r->iteration > t->ds_step && r->time_s >= t->ds_time;
    double secs = follows ? (r->time_s - t->ds_time - t->ds_saving - t->ds_eval) /
                                (double)(r->iteration - t->ds_step)
                          : NAN;
    t->ds_have = r->iteration > 0;
    t->ds_step = r->iteration;
    t->ds_time = r->time_s;
    t->ds_saving = 0;
    t->ds_eval = 0;
    if (!(secs >= 0)) {
        t->st.untimed++;
        return 1;
    }
    r->elapsed_ms = secs * 1000.0;
    return 0;
}

/*
 * A DeepSpeed save's lines. Every rank prints its own "ready" line once its files are
 * written, and training goes on after the last: the time from the save's first line to its
 * last "ready" line before the next step line is left out of that step's time (a save with
 * no "ready" line before it makes that step line only start the clock), and the save is
 * complete, for the reports' ckpt=, at the first step line after a "ready" line.
 */
static void deepspeed_save(struct tail *t, int kind, uint64_t step, double at)
{
    if (kind == HN_TRAINLOG_SAVE) {
        save_seen(t, kind, step);
        deepspeed_save_end(t); /* an earlier save between the same two step lines */
        if (isnan(at))
            t->ds_save_lost = 1; /* no stamp: its length cannot be known */
        t->ds_save_began = at;
        t->ds_save_step = step;
    } else if (kind == HN_TRAINLOG_SAVED) {
        /* Only this save's own "ready" lines end it (a late one of an earlier save does not). */
        if (!isnan(at) && !isnan(t->ds_save_began) && step == t->ds_save_step &&
            at >= t->ds_save_began)
            t->ds_save_ready = isnan(t->ds_save_ready) ? at : fmax(t->ds_save_ready, at);
        if (step <= INT64_MAX && (int64_t)step > t->ds_ready_step)
            t->ds_ready_step = (int64_t)step;
    }
}

/* A DeepSpeed step line: the checkpoint a "ready" line announced is complete now that the
 * job steps again, then the report when the line has a step time. */
static void deepspeed_step(struct tail *t, struct hn_trainlog_rec *r)
{
    int timed = deepspeed_time(t, r);
    if (timed < 0)
        return;
    if (t->ds_save_lost) {
        t->ds_save_lost = 0;
        if (timed == 0) { /* its time is unknown: this step only starts the clock */
            t->st.untimed++;
            timed = 1;
        }
    }
    if (t->ds_ready_step >= 0) {
        save_seen(t, HN_TRAINLOG_SAVED, (uint64_t)t->ds_ready_step);
        t->ds_ready_step = -1;
    }
    steps_after_save(t, r->iteration);
    if (timed != 0)
        return;
    r->global_batch = t->ds_batch;
    report(t, r);
}

/*
 * A log of another framework read with the wrong --format reports nothing, silently. Once
 * FORMAT_HINT_LINES iteration lines of another format came (or at the end of the input, any)
 * and none of --format's, says so once. A Megatron-DeepSpeed log has both Megatron's lines
 * and DeepSpeed's engine's: one of its own kind stops the hint for good.
 */
static void format_hint(struct tail *t, int at_end)
{
    if (t->hinted || t->own_iters > 0)
        return;
    /* The format to suggest: of those seen, Megatron's lines (step times of their own) before
     * NeMo's, and DeepSpeed's (timed by their stamps) last. */
    uint64_t most = 0;
    enum hn_trainlog_format best = HN_TRAINLOG_MEGATRON;
    for (int f = HN_TRAINLOG_DEEPSPEED; f >= HN_TRAINLOG_MEGATRON; f--) {
        most = t->other_iters[f] > most ? t->other_iters[f] : most;
        if (t->other_iters[f] > 0)
            best = (enum hn_trainlog_format)f;
    }
    uint64_t n = t->other_iters[best];
    if (most == 0 || (!at_end && most < FORMAT_HINT_LINES))
        return;
    t->hinted = 1;
    fprintf(stderr,
            "houston tail: %llu iteration lines read as %s's and none as %s's: is this log "
            "--format %s?\n",
            (unsigned long long)n, hn_trainlog_format_name(best),
            hn_trainlog_format_name(t->o->format), hn_trainlog_format_name(best));
}

/*
 * Whether a record (rc: its kind) that came without its terminator (cut) is whole. A line cut
 * short, by the end of a log whose writer was killed with its output buffered or by a hole of
 * zeros, would otherwise be read with what is left of its numbers ("(ms): 75" for 75000.0,
 * "iteration 10" for 1000). Megatron's iteration line ends with " |" after its last field,
 * NeMo 1's progress bar with ']' (blanks after either); any other record is whole when it does
 * not end in a number, which may be cut (NeMo 2's line ends with consumed_samples, a save line
 * may end with its step). So a whole last line of those without a terminator is malformed
 * too: writers end their lines, and one report is less harm than a wrong one.
 */
static int line_whole(const char *line, size_t len, int rc, const struct hn_trainlog_rec *r)
{
    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    char last = len > 0 ? line[len - 1] : '\0';
    if (rc == HN_TRAINLOG_ITERATION && r->format == HN_TRAINLOG_MEGATRON)
        return last == '|';
    if (rc == HN_TRAINLOG_ITERATION && r->format == HN_TRAINLOG_NEMO && r->progress_bar)
        return last == ']';
    return !isdigit((unsigned char)last) && last != '.';
}

/* An overlong line is skipped; malformed when its first or its last LINE_MAX_BYTES look like
 * a record of the log (an iteration line cannot be this long: garbled, or lines glued). */
static void overlong_line(struct tail *t)
{
    struct hn_trainlog_rec r;
    t->st.lines++;
    /* The line's last LINE_MAX_BYTES: while the ring is not full, the end of the first ones
     * leads it, so that a record across the two (a bar past byte 16,384) is seen whole. */
    char last[LINE_MAX_BYTES];
    size_t lead = sizeof(last) - t->over_len; /* t->len is sizeof(t->line) here */
    memcpy(last, t->line + t->len - lead, lead);
    size_t from = t->over_len < sizeof(t->over) ? 0 : t->over_at;
    size_t first = t->over_len - from;
    memcpy(last + lead, t->over + from, first);
    memcpy(last + lead + first, t->over, from);
    if (hn_trainlog_parse(t->line, t->len, &r) != 0 ||
        hn_trainlog_parse(last, sizeof(last), &r) != 0)
        t->st.malformed++;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* An evaluation begins after step `after` (at most INT64_MAX): a pause notice, once a step. */
static void eval_notice(struct tail *t, uint64_t after)
{
    if ((int64_t)after == t->eval_after)
        return;
    t->eval_after = (int64_t)after;
    send_one(t, NULL, after, HN_STEP_PAUSE_EVAL, &t->st.evals);
}

/*
 * After Megatron's iteration line of step `step`: a notice when a periodic evaluation follows
 * it. One announced whose "validation loss" line did not come before this step's (a run with
 * no validation data, whose arguments still name an interval) means the job does not evaluate:
 * no more notices until such a line comes, so that at most one wait has the long limit for
 * nothing.
 */
static void periodic_eval(struct tail *t, uint64_t step)
{
    if (t->eval_owed >= 0 && step > (uint64_t)t->eval_owed) {
        t->eval_every = 0;
        t->eval_owed = -1;
    }
    if (!t->eval_every || t->eval_never || step % t->eval_every != 0 || step > INT64_MAX)
        return;
    eval_notice(t, step);
    t->eval_owed = (int64_t)step;
}

static void handle_line(struct tail *t, const char *line, size_t len, int cut)
{
    struct hn_trainlog_rec r;
    t->st.lines++;
    int rc = hn_trainlog_parse(line, len, &r);
    if (rc < 0 || (cut && rc != HN_TRAINLOG_OTHER && !line_whole(line, len, rc, &r))) {
        t->st.malformed++;
        return;
    }
    if (rc == HN_TRAINLOG_ITERATION) {
        if (r.format == t->o->format)
            t->own_iters++;
        else if (r.format >= HN_TRAINLOG_MEGATRON && r.format <= HN_TRAINLOG_DEEPSPEED)
            t->other_iters[r.format]++;
        format_hint(t, 0);
    }
    if (rc == HN_TRAINLOG_OTHER || r.format != t->o->format)
        return;
    if (rc == HN_TRAINLOG_BATCH) { /* DeepSpeed's samples per step, for the tokens */
        t->ds_batch = r.global_batch;
        return;
    }
    if (rc == HN_TRAINLOG_EVAL_TIME) { /* not step time: out of the next step line's */
        t->ds_eval += r.elapsed_ms / 1000.0;
        t->st.evals_timed++;
        return;
    }
    /* After the last step reported (none yet: nothing to hold), once: more evaluation sets
     * at the same step are the same pause. */
    if (rc == HN_TRAINLOG_EVAL) {
        if (t->have_last && t->last_iter <= INT64_MAX)
            eval_notice(t, t->last_iter);
        return;
    }
    /* Megatron's periodic evaluations print nothing until they end ("validation loss at
     * iteration N"), and run after the iteration line of each multiple of its eval interval:
     * the interval is its eval_interval argument, printed at its start, else the greatest
     * common divisor of the iterations evaluated at (a run resumed at 5,500 with an interval
     * of 1,000 evaluates at 6,000 first, then 7,000), and the line of each multiple of it is
     * followed by a notice (periodic_eval). */
    if (rc == HN_TRAINLOG_EVAL_INTERVAL) {
        t->eval_every = r.iteration;
        return;
    }
    if (rc == HN_TRAINLOG_EVAL_ITERS) {
        t->eval_never = r.iteration == 0;
        return;
    }
    if (rc == HN_TRAINLOG_VALIDATED) {
        if (r.iteration > 0)
            t->eval_every = gcd_u64(t->eval_every, r.iteration);
        t->eval_never = 0;
        t->eval_owed = -1;
        return;
    }
    if (rc == HN_TRAINLOG_ITERATION && r.format == HN_TRAINLOG_NEMO)
        t->nemo1 = r.progress_bar;
    if (r.lightning && t->nemo1 && r.iteration > 0)
        r.iteration--; /* NeMo 1: Lightning's step is steps done already */
    if (r.no_step) {
        /* A save under a tag of the job's own: of the step the log showed last (at most a log
         * interval behind the save's own: a checkpoint that old is what a restart loses at
         * worst), and its "ready" lines are of the last such save begun. Before any step
         * line, or a "ready" line before any such save, there is nothing to go by. */
        if (rc == HN_TRAINLOG_SAVE && t->have_last && t->last_iter <= INT64_MAX)
            t->tag_save_step = (int64_t)t->last_iter;
        else if (rc == HN_TRAINLOG_SAVE || t->tag_save_step < 0)
            return;
        r.iteration = (uint64_t)t->tag_save_step;
    }
    if (rc != HN_TRAINLOG_ITERATION) {
        /* A checkpoint save begins: the steps stop on purpose. One notice a save, however
         * many of its lines say it begins (Megatron-DeepSpeed's two, NeMo's two). */
        if (rc == HN_TRAINLOG_SAVE && (t->save_at < 0 || (uint64_t)t->save_at != r.iteration))
            send_one(t, NULL, r.iteration, HN_STEP_PAUSE_CHECKPOINT, &t->st.pauses);
        if (r.format == HN_TRAINLOG_DEEPSPEED)
            deepspeed_save(t, rc, r.iteration, r.time_s);
        else
            save_seen(t, rc, r.iteration);
        return;
    }
    if (r.format == HN_TRAINLOG_DEEPSPEED) {
        t->have_last = 1; /* what a save under a tag of the job's own is of */
        t->last_iter = r.iteration;
        deepspeed_step(t, &r);
        return;
    }
    if (t->have_last && r.iteration == t->last_iter) {
        t->st.repeated++;
        return;
    }
    if (t->have_last && r.iteration < t->last_iter)
        t->eval_after = t->eval_owed = -1; /* a run restarted from a checkpoint evaluates anew */
    t->have_last = 1;
    t->last_iter = r.iteration;
    steps_after_save(t, r.iteration);
    report(t, &r);
    periodic_eval(t, r.iteration);
}

/* Ends the current line (a terminator, the end of the input, a file replaced under us). */
static void end_line(struct tail *t)
{
    if (t->overlong)
        overlong_line(t);
    else
        handle_line(t, t->line, t->len, t->cut);
    t->len = t->over_at = t->over_len = 0;
    t->overlong = t->cut = t->held = 0;
}

/* Splits data into lines; the last, unterminated piece stays in t->line. */
static void feed(struct tail *t, const char *data, size_t n)
{
    if (!t->quiet)
        t->held = 0; /* a byte after the start: the line is being written */
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (c == '\0') {
            /* No text has NULs: a run of them is a hole (logrotate's copytruncate under a
             * writer without O_APPEND, Slurm's output file: zeros as long as the old log
             * before the next line) or blocks a crash zeroed. It ends the line it cuts
             * short (line_whole), and the text after it starts a line of its own. */
            if (t->len > 0 || t->overlong) {
                t->cut = 1;
                end_line(t);
            }
            continue;
        }
        if (c == '\n' && t->after_cr) {
            t->after_cr = 0;
            continue;
        }
        t->after_cr = c == '\r';
        if (c == '\n' || c == '\r') {
            end_line(t);
            continue;
        }
        if (t->len < sizeof(t->line)) {
            t->line[t->len++] = c;
            continue;
        }
        t->overlong = 1;
        t->over[t->over_at] = c;
        t->over_at = (t->over_at + 1) % sizeof(t->over);
        if (t->over_len < sizeof(t->over))
            t->over_len++;
    }
}

/* At the end of the input: a last line without a terminator still counts, when it is whole
 * (line_whole). */
static void finish_input(struct tail *t)
{
    if (t->len > 0 || t->overlong) {
        t->cut = 1;
        end_line(t);
    }
}

/* ---- reading ---- */

/* Reads fd to its end (or, when stoppable, to a stop request). Returns 0, or a negative
 * errno. */
static int read_to_end(struct tail *t, int fd, int stoppable)
{
    while (!stoppable || !stop_requested) {
        ssize_t n = read(fd, t->chunk, sizeof(t->chunk));
        if (n > 0) {
            feed(t, t->chunk, (size_t)n);
            continue;
        }
        if (n == 0)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
    return 0;
}

/*
 * For --from-end: reads the `end` bytes the file holds at the start without sending anything,
 * so that what the log said before (Megatron's eval interval, DeepSpeed's batch size and its
 * last step line's stamp, a save in progress, the last step) holds for the lines after, as if
 * the file had been read from its start. A line the writer is still writing stays in t->line,
 * and is sent once its end comes: no report was sent for it before. Returns 0, or a negative
 * errno.
 */
static int read_before(struct tail *t, int fd, off_t end)
{
    t->quiet = 1;
    off_t at = 0;
    int rc = 0;
    while (at < end) { /* a regular file's read never waits: no stop needed */
        size_t want = (size_t)(end - at) < sizeof(t->chunk) ? (size_t)(end - at) : sizeof(t->chunk);
        ssize_t n = read(fd, t->chunk, want);
        if (n > 0) {
            feed(t, t->chunk, (size_t)n);
            at += n;
        } else if (n == 0) {
            break; /* truncated meanwhile: follow() reads it again from the start */
        } else if (errno != EINTR) {
            rc = -errno;
            break;
        }
    }
    t->quiet = 0;
    t->held = t->len > 0 || t->overlong;
    t->st = (struct tail_stats){.before = t->st.lines, .before_reports = t->st.reported};
    return rc;
}

/* tail -F for a regular file: returns 0 at a stop request, or a negative errno. */
static int follow(struct tail *t, const char *path, int *fdp)
{
    struct stat cur;
    if (fstat(*fdp, &cur) != 0)
        return -errno;
    while (!stop_requested) {
        int rc = read_to_end(t, *fdp, 1);
        if (rc != 0)
            return rc;
        sleep_ms(FOLLOW_POLL_MS);
        struct stat now;
        off_t pos = lseek(*fdp, 0, SEEK_CUR);
        if (fstat(*fdp, &now) == 0 && pos > now.st_size) {
            fprintf(stderr, "houston tail: %s: file truncated, reading it from the start\n", path);
            (void)lseek(*fdp, 0, SEEK_SET);
            t->len = t->over_at = t->over_len = 0; /* a piece of a line from before ends nothing */
            t->overlong = t->after_cr = t->held = 0;
            continue;
        }
        if (stat(path, &now) != 0 || (now.st_ino == cur.st_ino && now.st_dev == cur.st_dev))
            continue; /* the same file, or none yet at the path: keep the one we have */
        rc = read_to_end(t, *fdp, 1); /* what the writer put in the old file before moving on */
        if (rc != 0)
            return rc;
        finish_input(t);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* gone again: retry at the next poll */
        fprintf(stderr, "houston tail: %s: file replaced, following the new one\n", path);
        close(*fdp);
        *fdp = fd;
        if (fstat(fd, &cur) != 0)
            return -errno;
    }
    /* Stopped (a batch script's `kill %1` once the training has ended): what the file holds
     * was written before the stop, the job's last lines among it, so it is read up to the
     * file's current end (a regular file's read never waits); only a line still being
     * written is left (hn_cmd_tail). */
    return read_to_end(t, *fdp, 0);
}

static void install_stop_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop; /* no SA_RESTART: a blocked read or sleep returns at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/*
 * Opens the log at path. With --follow, one that is not there yet (a batch script starts the
 * tail before the training that creates its log) is waited for, as tail -F does: *late is then
 * set, since all it holds when it appears was written after the start. Returns the fd, or a
 * negative errno (-EINTR: a stop came first).
 */
static int open_log(const char *path, int follow, int *late)
{
    int said = 0;
    for (;;) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 || errno != ENOENT || !follow)
            return fd >= 0 ? fd : -errno;
        if (!said) {
            fprintf(stderr, "houston tail: %s: not there yet, waiting for it\n", path);
            said = 1;
        }
        *late = 1;
        sleep_ms(FOLLOW_POLL_MS);
        if (stop_requested)
            return -EINTR;
    }
}

/* A positive count in environment variable name, else -1. */
static long env_count(const char *name)
{
    const char *v = getenv(name);
    uint64_t n;
    return v && hn_parse_u64(v, 10, &n) == 0 && n > 0 && n <= INT_MAX ? (long)n : -1;
}

/* A world size from SLURM_NTASKS counts Slurm's tasks: in a job that starts one task per node
 * and a rank per GPU from it (torchrun, the DeepSpeed launcher), fewer than its GPUs, and the
 * controller's MFU from --flops-per-token comes out that many times too high. Slurm gives the
 * batch step its node count (SLURM_JOB_NUM_NODES) and GPUs (SLURM_GPUS_ON_NODE; sbatch(1),
 * "OUTPUT ENVIRONMENT VARIABLES"); with fewer tasks than nodes x GPUs, say so. */
static void warn_tasks_not_gpus(int world)
{
    if (env_count("WORLD_SIZE") > 0 || env_count("SLURM_NTASKS") != world)
        return;
    long nodes = env_count("SLURM_JOB_NUM_NODES"), gpus = env_count("SLURM_GPUS_ON_NODE");
    if (nodes < 1 || gpus < 2 || (long long)world >= (long long)nodes * gpus)
        return;
    fprintf(stderr,
            "houston tail: warning: the world size %d is SLURM_NTASKS, Slurm's task count, and "
            "the job has %ld node(s) with %ld GPUs here: if a launcher (torchrun) starts a rank "
            "per GPU, give --world %lld, or the controller's MFU comes out %.3g times too high\n",
            world, nodes, gpus, (long long)nodes * gpus, (double)nodes * (double)gpus / world);
}

/* The client, with the flags' identity over the environment's; -1 without a job id. */
static int open_client(struct tail *t)
{
    const struct tail_opts *o = t->o;
    t->client = hn_step_open();
    hn_step_set_identity(t->client, o->job, o->rank, o->local_rank, o->world);
    if (o->socket)
        hn_step_set_socket(t->client, o->socket);
    const char *job;
    int rank;
    hn_step_identity_get(t->client, &job, &rank, NULL, NULL);
    if (job[0] == '\0') {
        fprintf(stderr, "houston tail: no job id: give --job, or set SLURM_JOB_ID or "
                        "HOUSTON_JOB_ID\n");
        return -1;
    }
    if (rank < 0)
        hn_step_set_identity(t->client, NULL, 0, -1, -1);
    hn_step_identity_get(t->client, NULL, NULL, NULL, &t->world);
    if (!isnan(o->fpt) && t->world < 1)
        fprintf(stderr,
                "houston tail: warning: --flops-per-token without a world size: the controller "
                "takes the job's tokens for one GPU's, so its MFU comes out as many times too "
                "high as the job has GPUs; give --world with the job's GPU count\n");
    else if (!isnan(o->fpt) && o->world < 0)
        warn_tasks_not_gpus(t->world);
    return 0;
}

int hn_cmd_tail(int argc, char **argv)
{
    struct tail_opts o;
    int pr = parse_opts(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    struct tail *t = xcalloc(1, sizeof(*t));
    t->o = &o;
    t->last_tokens = -1;
    t->ckpt = t->save_at = t->tag_save_step = -1;
    t->ds_save_began = t->ds_save_ready = NAN;
    t->ds_batch = t->ds_ready_step = t->eval_after = t->eval_owed = -1;
    int status = 2;
    if (open_client(t) != 0)
        goto out_free;

    const char *name = o.path ? o.path : "stdin";
    stop_requested = 0;
    install_stop_handlers();
    int fd = STDIN_FILENO, late = 0;
    if (o.path) {
        fd = open_log(o.path, o.follow, &late);
        if (fd < 0 && !stop_requested) {
            fprintf(stderr, "houston tail: cannot open %s: %s\n", o.path, strerror(-fd));
            goto out_free;
        }
        if (fd < 0) { /* stopped before the file appeared: nothing read */
            status = 0;
            goto out_free;
        }
    }
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    /* A follower sends what is written from its start on. The steps a file already holds were
     * reported as they ran, by a tail started before this one in the middle of the run, or in
     * the run before a requeue (Slurm runs a requeued job's script again, this tail with it,
     * and an appended log holds the runs before): sent again, their steps going back would
     * read as the job restarting from its start. Sent for the first time, they are history
     * stamped now, which tells the controller nothing it can time. */
    int before = regular && !late && (o.from_end || (o.follow && o.path && !o.from_start));
    int rc = before ? read_before(t, fd, st.st_size) : 0;
    /* In a requeued job (Slurm sets SLURM_RESTART_COUNT, sbatch(1)) a line the file ends with
     * unfinished is the last of the run before, killed as it wrote it (its output buffered, a
     * progress bar not ended yet): what comes next is the new run's first line, not its end,
     * and the two joined can read as the old run's step (a report the controller would take
     * for the new run's first). It is dropped. */
    if (before && t->held && env_count("SLURM_RESTART_COUNT") > 0) {
        t->len = t->over_at = t->over_len = 0;
        t->overlong = t->cut = t->held = 0;
        t->st.before++;
    }
    if (before && !o.from_end && t->st.before_reports)
        fprintf(stderr,
                "houston tail: %s: following from its end: the %llu steps it holds were read, "
                "not sent (--from-start sends them)\n",
                o.path, (unsigned long long)t->st.before_reports);
    if (rc == 0)
        rc = o.follow && regular && o.path ? follow(t, o.path, &fd) : read_to_end(t, fd, 1);
    if (!stop_requested && t->held)
        t->st.before++; /* a last piece the file held all of at the start: its end never came */
    else if (!stop_requested)
        finish_input(t); /* after a stop, a last piece may be a line still being written */
    format_hint(t, 1);
    if (rc != 0)
        fprintf(stderr, "houston tail: reading %s: %s\n", name, strerror(-rc));
    status = rc != 0 ? 2 : 0;
    fprintf(stderr,
            "houston tail: %llu lines read, %llu iterations reported, %llu malformed skipped, "
            "%llu reports dropped",
            (unsigned long long)t->st.lines, (unsigned long long)t->st.reported,
            (unsigned long long)t->st.malformed, (unsigned long long)t->st.dropped);
    if (t->st.before)
        fprintf(stderr, " (and %llu lines the file held at the start, not sent)",
                (unsigned long long)t->st.before);
    if (t->st.repeated)
        fprintf(stderr, " (%llu repeated steps skipped)", (unsigned long long)t->st.repeated);
    if (t->st.untimed)
        fprintf(stderr, " (%llu step lines only started the clock)",
                (unsigned long long)t->st.untimed);
    int err = hn_step_last_errno(t->client);
    if (t->st.dropped && err)
        fprintf(stderr, " (last: %s)", strerror(err));
    if (t->st.pauses)
        fprintf(stderr, ", %llu checkpoint saves announced", (unsigned long long)t->st.pauses);
    if (t->st.evals)
        fprintf(stderr, ", %llu evaluations announced", (unsigned long long)t->st.evals);
    if (t->st.evals_timed)
        fprintf(stderr, ", %llu evaluations left out of step times",
                (unsigned long long)t->st.evals_timed);
    fputc('\n', stderr);
    if (fd != STDIN_FILENO)
        close(fd);
out_free:
    hn_step_close(t->client);
    free(t);
    return status;
}
