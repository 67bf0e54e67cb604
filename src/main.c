/*
 * main.c - the houston binary: one program, verbs dispatched from a table.
 *
 * Adding a verb is adding a row to `verbs` and its hn_cmd_X/hn_usage_X pair (verbs.h).
 */
#include "verbs.h"

#include <stdio.h>
#include <string.h>

static int cmd_version(int argc, char **argv);
static void usage_version(FILE *out);
static int cmd_help(int argc, char **argv);
static void usage_help(FILE *out);

static const struct hn_verb verbs[] = {
    {"agent", "run the node agent: GPU/NIC/Xid telemetry on /metrics", hn_cmd_agent,
     hn_usage_agent},
    {"check", "one-shot node health check for Slurm (exit code + reason)", hn_cmd_check,
     hn_usage_check},
    {"control", "run the cluster controller: ingest, decisions, Slurm actions, API", hn_cmd_control,
     hn_usage_control},
    {"status", "the fleet at a glance: nodes by state, held removals, racks, last events",
     hn_cmd_status, hn_usage_status},
    {"nodes", "list the nodes the controller knows, with state and reason", hn_cmd_nodes,
     hn_usage_nodes},
    {"events", "list findings, transitions and actions, newest first", hn_cmd_events,
     hn_usage_events},
    {"drain", "drain a node now (operator token)", hn_cmd_drain, hn_usage_drain},
    {"resume", "put a node back to ready (operator token)", hn_cmd_resume, hn_usage_resume},
    {"approve", "carry out a removal the blast-radius guard holds (operator token)", hn_cmd_approve,
     hn_usage_approve},
    {"jobs", "training jobs: MFU, ETTR, lost GPU-hours by cause, stragglers", hn_cmd_jobs,
     hn_usage_jobs},
    {"mfu", "model FLOPs utilisation from a model description and a token rate", hn_cmd_mfu,
     hn_usage_mfu},
    {"demo", "8 GB200 NVL72 racks in accelerated real time: a laggard found and replaced, live",
     hn_cmd_demo, hn_usage_demo},
    {"sim", "simulate a fleet and a training job in virtual time, with the real brain", hn_cmd_sim,
     hn_usage_sim},
    {"straggler", "find slow ranks in a step-time CSV (offline)", hn_cmd_straggler,
     hn_usage_straggler},
    {"tail", "turn a training log (Megatron, Megatron-DeepSpeed, NeMo) into step reports",
     hn_cmd_tail, hn_usage_tail},
    {"version", "print houston's version", cmd_version, usage_version},
    {"help", "show help for houston or one verb", cmd_help, usage_help},
};

const struct hn_verb *hn_verb_find(const char *name)
{
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        if (strcmp(verbs[i].name, name) == 0)
            return &verbs[i];
    }
    return NULL;
}

static void usage_main(FILE *out)
{
    fprintf(out, "usage: houston VERB [options]\n\n"
                 "houston is mission control for GPU training fleets.\n\nverbs:\n");
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
        fprintf(out, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(out, "\n`houston help VERB` or `houston VERB --help` shows a verb's options.\n");
}

static void usage_version(FILE *out)
{
    fprintf(out, "usage: houston version\n\nPrints houston's version and exits.\n");
}

static int cmd_version(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage_version(stdout);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "houston version: unexpected argument '%s'\n", argv[1]);
        return 2;
    }
    printf("houston %s\n", HN_VERSION);
    return 0;
}

static void usage_help(FILE *out)
{
    fprintf(out, "usage: houston help [VERB]\n\nShows the list of verbs, or one verb's "
                 "options.\n");
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage_help(stdout);
        return 0;
    }
    const struct hn_verb *v = hn_verb_find(argv[1]);
    if (!v) {
        fprintf(stderr, "houston help: unknown verb '%s'\n", argv[1]);
        return 2;
    }
    v->usage(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage_main(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(1, argv + 1);
    const struct hn_verb *v = hn_verb_find(argv[1]);
    if (!v) {
        fprintf(stderr, "houston: unknown verb '%s' (try `houston help`)\n", argv[1]);
        return 2;
    }
    return v->run(argc - 1, argv + 1);
}
