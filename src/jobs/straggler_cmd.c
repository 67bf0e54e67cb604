/* straggler_cmd.c - placeholder for `houston straggler` while it is being written. */
#include "verbs.h"

void hn_usage_straggler(FILE *out)
{
    fprintf(out, "usage: houston straggler\n\nNot implemented yet.\n");
}

int hn_cmd_straggler(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "houston straggler: not implemented yet\n");
    return 2;
}
