/*
 * cli.h - the operator verbs that talk to the controller's JSON API (docs/api.md):
 * `houston status`, `nodes`, `events`, `drain`, `resume` and `approve`.
 *
 * Each verb parses its flags, makes one to three requests through cli/client.h and prints
 * either the server's JSON (--json, pretty-printed) or a table for people. The pieces that
 * need no server are public so that they are tested on their own: duration parsing and age
 * formatting, a small table renderer (aligned columns, capped widths, terminal-safe cells)
 * and the JSON-to-text renderers for each reply.
 *
 * Exit codes, for scripts: 0 done, 1 the server said no (4xx/5xx, its {"error"} printed) or
 * sent a bad reply (not JSON, wrong shape, over 16 MiB), 2 a usage error (bad flags, an
 * unreadable token file), 3 the server could not be reached (the URL and libcurl's error are
 * printed).
 *
 * Everything here runs on the caller's thread; nothing is kept between calls.
 */
#ifndef HN_CLI_H
#define HN_CLI_H

#include <stddef.h>
#include <stdio.h>

enum hn_cli_exit {
    HN_CLI_OK = 0,
    HN_CLI_SERVER = 1,      /* the server refused, failed, or answered nonsense */
    HN_CLI_USAGE = 2,       /* bad command line or local set-up */
    HN_CLI_UNREACHABLE = 3, /* no answer from the server */
};

/* Runs operator verb `verb` with its arguments (argv[0] is the verb's name), writing results
 * to out and messages to err. Returns an exit code above. Unknown verb: HN_CLI_USAGE. */
int hn_cli_run(const char *verb, int argc, char **argv, FILE *out, FILE *err);

/* Parses a duration "90", "90s", "10m", "2h", "1.5d" (a positive number, optional unit s, m,
 * h or d) into seconds. 0 or -EINVAL; *seconds is untouched on error. */
int hn_cli_parse_duration(const char *s, double *seconds);

/* Formats an age in whole units, rounded down: "42s", "5m", "2h", "3d". Negative ages
 * (clock skew) print as "0s"; NaN and ages past 10^12 s (a bogus time) as "-". */
void hn_cli_format_age(double seconds, char *out, size_t size);

/* Formats Unix seconds as local "YYYY-MM-DD HH:MM:SS"; "-" when not a sane time. */
void hn_cli_format_time(double unix_s, char *out, size_t size);

/*
 * A table printed with aligned columns separated by two blanks. Cells are copied when added;
 * control characters (including C1 ones, which some terminals obey) become blanks, and a cell
 * wider than its column's maximum is cut to fit with "..." at the end. Widths count UTF-8
 * code points. A note is one extra line printed indented under the row added last. The last
 * column is never padded and no line ends in a blank. The caller owns the struct.
 */
struct hn_cli_table {
    size_t ncols;
    const char *const *headers; /* borrowed, ncols entries */
    const size_t *maxw;         /* borrowed, ncols entries, 0 = unlimited; may be NULL */
    size_t nrows;
    size_t caprows;
    char **cells; /* nrows * ncols, owned */
    char **notes; /* nrows, owned, NULL where none */
};

void hn_cli_table_init(struct hn_cli_table *t, size_t ncols, const char *const *headers,
                       const size_t *maxw);
void hn_cli_table_add(struct hn_cli_table *t, const char *const *cells);
/* Sets the note of the last row (ignored when there is none); capped at 300 code points. */
void hn_cli_table_note(struct hn_cli_table *t, const char *text);
void hn_cli_table_print(const struct hn_cli_table *t, FILE *out);
void hn_cli_table_fini(struct hn_cli_table *t);

/*
 * Renderers: each takes a reply body (NUL-terminated JSON) and prints it for people to out.
 * Returns 0, or -EBADMSG with err saying what is wrong with the reply (not JSON, a missing
 * array, an element that is not an object); nothing is printed then. Fields of the wrong type
 * or missing print as "-" rather than fail. `now` is the Unix time ages are computed from.
 */

/* GET /v1/nodes as NAME RACK STATE GPUS SINCE REASON; state, when not NULL, keeps only the
 * nodes in that state. */
int hn_cli_nodes_render(const char *json, const char *state, double now, FILE *out, char *err,
                        size_t errsize);
/* GET /v1/events as TIME NODE KIND RULE DETAIL, with each transition's evidence under it. */
int hn_cli_events_render(const char *json, FILE *out, char *err, size_t errsize);
/* GET /v1/nodes, /v1/racks and /v1/events: counts by state, degraded racks, held nodes and
 * the newest five events. */
int hn_cli_status_render(const char *nodes_json, const char *racks_json, const char *events_json,
                         FILE *out, char *err, size_t errsize);
/* GET /v1/jobs as JOB STATE RANKS STEP STEP_S MFU ETTR EMFU LOST_GPU_H STRAGGLER. */
int hn_cli_jobs_render(const char *json, FILE *out, char *err, size_t errsize);
/* GET /v1/jobs/ID: the job's row, its straggler policy, accounting and events. */
int hn_cli_job_render(const char *json, FILE *out, char *err, size_t errsize);
/* A write's reply {"node": {...}}: one line "NAME: STATE" with what else matters. */
int hn_cli_node_render(const char *json, FILE *out, char *err, size_t errsize);

#endif
