/*
 * opts.h - getopt_long with houston's messages, for the verbs that parse their own flags.
 *
 *   struct hn_opts g;
 *   hn_opts_begin(&g, "mfu", long_opts, stderr);
 *   while ((ch = hn_opts_next(&g, argc, argv)) != -1) {
 *       if (ch == '?') return 2;           // unknown option or missing value: said already
 *       ...                                // g.name: the option as typed, for messages
 *   }
 *   hn_opts_end(&g);                       // restores opterr; optind is left for the caller
 *
 * Messages: "houston VERB: --x needs a value" (also when the next argument, taken as its value,
 * is one of the verb's options: "--gpu --json"), "houston VERB: unknown option '--y' (try
 * `houston VERB --help`)", "houston VERB: ambiguous option '--he' (--heads, --head-dim)" (a
 * unique prefix is taken, as getopt_long does), "houston VERB: --json takes no value", "houston
 * VERB: --gpus given twice ('8', then '16')" (an option with a value; a flag may repeat). -h and
 * --help come back as 'h'. A verb with more one-letter flags sets g.shorts after hn_opts_begin
 * (":fh": -f too); they take no value.
 */
#ifndef HN_OPTS_H
#define HN_OPTS_H

#include <getopt.h>
#include <stdio.h>

struct hn_opts {
    const char *verb;
    const struct option *opts;
    FILE *err;
    const char *shorts; /* getopt's option string: ":h" unless the caller sets another */
    const char *name;   /* the option as typed, valid until the next call */
    char longname[64];
    char shortname[3]; /* "-f": a short option, named by its letter */
    int idx;           /* index in opts of the long option returned, -1 when none */
    int saved_opterr;
    const char *given[128]; /* given[i]: opts[i]'s value (in argv) once given, else NULL */
};

void hn_opts_begin(struct hn_opts *g, const char *verb, const struct option *opts, FILE *err);
/* The next option's character (0 for a long-only one: opts[g->idx]), '?' after printing why
 * the argument is wrong, or -1 at the end. */
int hn_opts_next(struct hn_opts *g, int argc, char **argv);
/* Prints the unknown-option message for the option just returned (a verb that refuses an
 * option hn_opts_next accepted, e.g. one that does not apply to it). */
void hn_opts_unknown(struct hn_opts *g);
void hn_opts_end(struct hn_opts *g);

#endif
