#include "common/opts.h"

#include <stdio.h>

void hn_opts_begin(struct hn_opts *g, const char *verb, const struct option *opts, FILE *err)
{
    g->verb = verb;
    g->opts = opts;
    g->err = err;
    g->name = "";
    g->idx = -1;
    g->saved_opterr = opterr;
    opterr = 0; /* the messages below name the verb */
    optind = 0; /* 0, not 1: glibc then also forgets a half-read -abc cluster */
}

void hn_opts_unknown(struct hn_opts *g)
{
    fprintf(g->err, "houston %s: unknown option '%s' (try `houston %s --help`)\n", g->verb, g->name,
            g->verb);
}

int hn_opts_next(struct hn_opts *g, int argc, char **argv)
{
    int idx = -1;
    int ch = getopt_long(argc, argv, ":h", g->opts, &idx);
    if (ch == -1)
        return -1;
    /* The option as typed: after one that took a value, optind is past the value. */
    g->name = argv[optind - 1];
    g->idx = ch != '?' && ch != ':' ? idx : -1;
    if (g->idx >= 0) {
        snprintf(g->longname, sizeof(g->longname), "--%s", g->opts[g->idx].name);
        g->name = g->longname;
    }
    if (ch == ':') {
        fprintf(g->err, "houston %s: %s needs a value\n", g->verb, g->name);
        return '?';
    }
    if (ch == '?') {
        hn_opts_unknown(g);
        return '?';
    }
    return ch;
}

void hn_opts_end(struct hn_opts *g)
{
    opterr = g->saved_opterr;
}
