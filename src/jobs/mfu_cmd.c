/* mfu_cmd.c - placeholder for `houston mfu` while it is being written. */
#include "verbs.h"

void hn_usage_mfu(FILE *out)
{
    fprintf(out, "usage: houston mfu\n\nNot implemented yet.\n");
}

int hn_cmd_mfu(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "houston mfu: not implemented yet\n");
    return 2;
}
