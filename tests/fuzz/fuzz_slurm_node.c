/*
 * fuzz_slurm_node.c - libFuzzer target for the `scontrol show node` parser
 * (hn_slurm_parse_node in src/sched/slurm.c).
 *
 * Input: the node name to look for on the first line, then scontrol's output. Besides not
 * crashing, the parser must keep its promises: on success every string is terminated inside
 * its field, the name is the one asked for, and drained_by_houston agrees with the fields.
 */
#include "sched/sched.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void terminated(const char *field, size_t size)
{
    if (memchr(field, '\0', size) == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[64];
    const uint8_t *nl = memchr(data, '\n', size);
    size_t nlen = nl ? (size_t)(nl - data) : size;
    if (nlen >= sizeof(name))
        return 0;
    memcpy(name, data, nlen);
    name[nlen] = '\0';

    size_t tlen = nl ? size - nlen - 1 : 0;
    char *text = malloc(tlen + 1);
    if (!text)
        return 0;
    if (tlen)
        memcpy(text, nl + 1, tlen);
    text[tlen] = '\0';

    struct hn_sched_node n;
    if (hn_slurm_parse_node(text, name, &n) == 0) {
        terminated(n.name, sizeof(n.name));
        terminated(n.state, sizeof(n.state));
        terminated(n.reason, sizeof(n.reason));
        terminated(n.reason_user, sizeof(n.reason_user));
        terminated(n.reason_time, sizeof(n.reason_time));
        if (strcmp(n.name, name) != 0 || n.state[0] == '\0')
            abort();
        if (hn_sched_drained_by_houston(&n) &&
            (!n.drain || strncmp(n.reason, HN_SCHED_REASON_PREFIX, 8) != 0))
            abort();
    }
    free(text);
    return 0;
}
