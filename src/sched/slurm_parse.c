/*
 * slurm_parse.c - the Slurm backend's readers of what scontrol and squeue print (see sched.h):
 * `scontrol show node` records and squeue's time-left text. Pure functions of their text, so
 * that tests and the fuzz targets drive them without a Slurm; slurm.c runs the commands.
 */
#include "sched/sched.h"

#include "common/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- `scontrol show node` parser ---- */

/* Copies the n bytes at src into dst (size bytes), cut to fit, NUL-terminated. */
static void copy_span(char *dst, size_t size, const char *src, size_t n)
{
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Splits a trailing " [user@time]" off out->reason into reason_user and reason_time. */
static void split_reason(struct hn_sched_node *out)
{
    char *r = out->reason;
    size_t n = strlen(r);
    if (n < 3 || r[n - 1] != ']')
        return;
    char *open = strrchr(r, '[');
    if (!open || (open != r && open[-1] != ' '))
        return;
    char *at = memchr(open, '@', (size_t)(r + n - open));
    if (!at)
        return;
    copy_span(out->reason_user, sizeof(out->reason_user), open + 1, (size_t)(at - open - 1));
    copy_span(out->reason_time, sizeof(out->reason_time), at + 1, (size_t)(r + n - 1 - at - 1));
    *open = '\0';
    hn_trim(r);
}

/* Sets drain and responding from a state such as "IDLE+DRAIN" or "DOWN*+DRAIN". */
static void parse_state(struct hn_sched_node *out)
{
    const char *p = out->state;
    while (*p) {
        size_t n = strcspn(p, "+");
        if ((n == 5 && strncmp(p, "DRAIN", 5) == 0) || (n == 7 && strncmp(p, "DRAINED", 7) == 0) ||
            (n == 8 && strncmp(p, "DRAINING", 8) == 0))
            out->drain = 1;
        if (n == 14 && strncmp(p, "NOT_RESPONDING", 14) == 0)
            out->responding = 0;
        if (n > 0 && p[n - 1] == '*')
            out->responding = 0;
        p += n;
        if (*p == '+')
            p++;
    }
}

int hn_slurm_parse_node(const char *text, const char *node, struct hn_sched_node *out)
{
    int found = 0, have_state = 0, in_record = 0;

    memset(out, 0, sizeof(*out));
    out->responding = 1;
    for (const char *line = text; *line;) {
        const char *eol = line + strcspn(line, "\n");
        const char *p = line;
        int first = 1;

        while (p < eol) {
            while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r'))
                p++;
            if (p >= eol)
                break;
            const char *tok = p;
            while (p < eol && *p != ' ' && *p != '\t' && *p != '\r')
                p++;
            size_t tlen = (size_t)(p - tok);

            /* A line opening with NodeName= starts a record (either output format). */
            if (first && tlen > 9 && strncmp(tok, "NodeName=", 9) == 0) {
                if (found)
                    goto done;
                in_record = (tlen - 9 == strlen(node) && strncmp(tok + 9, node, tlen - 9) == 0);
                if (in_record) {
                    found = 1;
                    copy_span(out->name, sizeof(out->name), tok + 9, tlen - 9);
                }
            }
            first = 0;
            if (!in_record)
                continue;
            /* The first State= wins: free-text fields later in a record must not override
             * it. */
            if (!have_state && tlen > 6 && strncmp(tok, "State=", 6) == 0) {
                copy_span(out->state, sizeof(out->state), tok + 6, tlen - 6);
                have_state = 1;
            } else if (tlen >= 7 && strncmp(tok, "Reason=", 7) == 0) {
                /* The reason is free text: it runs to the end of the line. */
                const char *end = eol;
                while (end > tok + 7 && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
                    end--;
                copy_span(out->reason, sizeof(out->reason), tok + 7, (size_t)(end - tok - 7));
                p = eol;
            }
        }
        line = *eol ? eol + 1 : eol;
    }
done:
    if (!found)
        return -ENOENT;
    if (!have_state)
        return -EINVAL;
    parse_state(out);
    split_reason(out);
    return 0;
}

/* Up to three ':'-separated numbers of at most 9 digits ([[H:]M:]S after a "D-", or the
 * forms Slurm's time strings take: see hn_slurm_parse_time_left). */
static int clock_parts(const char *p, long v[3], int *n)
{
    *n = 0;
    while (*n < 3) {
        size_t d = strspn(p, "0123456789");
        if (d == 0 || d > 9)
            return -1;
        long x = 0;
        for (size_t i = 0; i < d; i++)
            x = 10 * x + (p[i] - '0');
        v[(*n)++] = x;
        p += d;
        if (*p == '\0')
            return 0;
        if (*p++ != ':')
            return -1;
    }
    return -1;
}

int hn_slurm_parse_time_left(const char *text, double *seconds)
{
    /* Slurm's forms (squeue(1), "-t"/"--time" of sbatch(1)): "M", "M:S", "H:M:S", "D-H",
     * "D-H:M", "D-H:M:S"; squeue's %L prints "M:S", "H:M:S" or "D-H:M:S". */
    const char *dash = strchr(text, '-');
    long days = 0, v[3];
    int n;
    if (dash) {
        size_t d = strspn(text, "0123456789");
        if (d == 0 || d > 6 || text + d != dash)
            return -1;
        days = strtol(text, NULL, 10);
        if (clock_parts(dash + 1, v, &n) != 0)
            return -1;
        /* D-H, D-H:M, D-H:M:S */
        double h = (double)v[0], m = n > 1 ? (double)v[1] : 0, s = n > 2 ? (double)v[2] : 0;
        *seconds = (double)days * 86400 + h * 3600 + m * 60 + s;
        return 0;
    }
    if (clock_parts(text, v, &n) != 0)
        return -1;
    /* M, M:S, H:M:S */
    if (n == 1)
        *seconds = (double)v[0] * 60;
    else if (n == 2)
        *seconds = (double)v[0] * 60 + (double)v[1];
    else
        *seconds = (double)v[0] * 3600 + (double)v[1] * 60 + (double)v[2];
    return 0;
}
