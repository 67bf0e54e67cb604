/* tail_cmd.c - placeholder for `houston tail` while it is being written. */
#include "verbs.h"

void hn_usage_tail(FILE *out)
{
    fprintf(out, "usage: houston tail\n\nNot implemented yet.\n");
}

int hn_cmd_tail(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "houston tail: not implemented yet\n");
    return 2;
}
