/*
 * jobid.h - the size of a job id wherever houston keeps one: the agent's step reader, the
 * controller's jobs, actions and findings, the ledger and the store.
 */
#ifndef HN_JOBID_H
#define HN_JOBID_H

#include "houston/step.h"

/* A job id's bytes and its NUL. The clients cut ids at HN_STEP_JOB_MAX, and every part takes
 * what they send. */
#define HN_JOB_ID_SIZE (HN_STEP_JOB_MAX + 1)

#endif
