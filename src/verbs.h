/*
 * verbs.h - the entry points of houston's verbs, dispatched by the table in main.c
 * (tmux's cmd_entry). Each verb parses its own arguments, prints its usage with
 * `houston help VERB` or `houston VERB --help`, and returns the process exit code.
 */
#ifndef HN_VERBS_H
#define HN_VERBS_H

#include <stdio.h>

struct hn_verb {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *out);
};

int hn_cmd_agent(int argc, char **argv);
void hn_usage_agent(FILE *out);
int hn_cmd_check(int argc, char **argv);
void hn_usage_check(FILE *out);
int hn_cmd_control(int argc, char **argv);
void hn_usage_control(FILE *out);
/* Operator verbs that talk to the controller's API (src/cli/cli.c). */
int hn_cmd_status(int argc, char **argv);
void hn_usage_status(FILE *out);
int hn_cmd_nodes(int argc, char **argv);
void hn_usage_nodes(FILE *out);
int hn_cmd_events(int argc, char **argv);
void hn_usage_events(FILE *out);
int hn_cmd_drain(int argc, char **argv);
void hn_usage_drain(FILE *out);
int hn_cmd_resume(int argc, char **argv);
void hn_usage_resume(FILE *out);
int hn_cmd_approve(int argc, char **argv);
void hn_usage_approve(FILE *out);
int hn_cmd_jobs(int argc, char **argv);
void hn_usage_jobs(FILE *out);

/* Jobs: offline straggler detection, MFU arithmetic, training-log tailing (src/jobs). */
int hn_cmd_straggler(int argc, char **argv);
void hn_usage_straggler(FILE *out);
int hn_cmd_mfu(int argc, char **argv);
void hn_usage_mfu(FILE *out);
int hn_cmd_tail(int argc, char **argv);
void hn_usage_tail(FILE *out);

/* The fleet simulator (src/sim). */
int hn_cmd_sim(int argc, char **argv);
void hn_usage_sim(FILE *out);
int hn_cmd_demo(int argc, char **argv);
void hn_usage_demo(FILE *out);

/* Looks a verb up by name; NULL when unknown. */
const struct hn_verb *hn_verb_find(const char *name);

#endif
