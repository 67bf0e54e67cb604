#include "common/opts.h"

#include <stdio.h>
#include <string.h>

void hn_opts_begin(struct hn_opts *g, const char *verb, const struct option *opts, FILE *err)
{
    g->verb = verb;
    g->opts = opts;
    g->err = err;
    g->shorts = ":h";
    g->name = "";
    g->idx = -1;
    g->saved_opterr = opterr;
    for (size_t i = 0; i < sizeof(g->given) / sizeof(g->given[0]); i++)
        g->given[i] = NULL;
    opterr = 0; /* the messages below name the verb */
    optind = 0; /* 0, not 1: glibc then also forgets a half-read -abc cluster */
}

/* The long option named by the first len bytes of name exactly; -1 when none. */
static int exact_opt(const struct option *opts, const char *name, size_t len)
{
    for (int i = 0; opts[i].name; i++) {
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return i;
    }
    return -1;
}

void hn_opts_unknown(struct hn_opts *g)
{
    const char *a = g->name;
    if (strncmp(a, "--", 2) == 0 && a[2]) {
        const char *n = a + 2;
        size_t len = strcspn(n, "=");
        int i = exact_opt(g->opts, n, len);
        if (i >= 0 && n[len] == '=' && g->opts[i].has_arg == no_argument) {
            fprintf(g->err, "houston %s: --%s takes no value\n", g->verb, g->opts[i].name);
            return;
        }
        /* getopt_long takes a unique prefix of a long option; one of several is refused. */
        char some[256] = "";
        size_t used = 0;
        int matches = 0;
        for (int k = 0; i < 0 && g->opts[k].name; k++) {
            if (strncmp(g->opts[k].name, n, len) != 0)
                continue;
            matches++;
            int w = snprintf(some + used, sizeof(some) - used, "%s--%s", used ? ", " : "",
                             g->opts[k].name);
            if (w > 0 && (size_t)w < sizeof(some) - used)
                used += (size_t)w;
        }
        if (matches >= 2) {
            fprintf(g->err, "houston %s: ambiguous option '--%.*s' (%s)\n", g->verb, (int)len, n,
                    some);
            return;
        }
    }
    fprintf(g->err, "houston %s: unknown option '%s' (try `houston %s --help`)\n", g->verb, g->name,
            g->verb);
}

int hn_opts_next(struct hn_opts *g, int argc, char **argv)
{
    int idx = -1;
    int first = optind > 0 ? optind : 1; /* optind 0: getopt starts at argv[1] */
    int ch = getopt_long(argc, argv, g->shorts, g->opts, &idx);
    if (ch == -1)
        return -1;
    /* The option as typed: after one that took a value, optind is past the value. A long one
     * (also one refused) is the argument it read this call, before optind; a short one is its
     * letter: optind stays on a cluster (-fv) until its last letter, so argv[optind - 1] may be
     * an argument before it, or a non-option that getopt skipped. */
    g->idx = ch != '?' && ch != ':' ? idx : -1;
    if (g->idx >= 0 ||
        (optind - 1 >= first && strncmp(argv[optind - 1], "--", 2) == 0 && argv[optind - 1][2])) {
        g->name = argv[optind - 1];
    } else {
        int c = ch == '?' || ch == ':' ? optopt : ch;
        snprintf(g->shortname, sizeof(g->shortname), "-%c", c > 0 && c < 127 ? c : '?');
        g->name = g->shortname;
    }
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
    /* A value left out takes the next flag as the value: "--gpu --json". */
    if (g->idx >= 0 && g->opts[g->idx].has_arg == required_argument && optarg &&
        strncmp(optarg, "--", 2) == 0 && optarg[2] &&
        exact_opt(g->opts, optarg + 2, strcspn(optarg + 2, "=")) >= 0) {
        fprintf(g->err, "houston %s: %s needs a value (the next argument is the option %s)\n",
                g->verb, g->name, optarg);
        return '?';
    }
    /* A value given twice is a mistake (a script's override, a typo): getopt keeps the last. */
    if (g->idx >= 0 && (size_t)g->idx < sizeof(g->given) / sizeof(g->given[0]) && optarg &&
        g->opts[g->idx].has_arg != no_argument) {
        if (g->given[g->idx]) {
            fprintf(g->err, "houston %s: %s given twice ('%s', then '%s')\n", g->verb, g->name,
                    g->given[g->idx], optarg);
            return '?';
        }
        g->given[g->idx] = optarg;
    }
    return ch;
}

void hn_opts_end(struct hn_opts *g)
{
    opterr = g->saved_opterr;
}
