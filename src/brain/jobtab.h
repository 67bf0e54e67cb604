/*
 * jobtab.h - the brain's job table (job.h): jobs found by id through a hash, added (when the
 * table is full, an ended job goes first, then one no scheduler lists, then the least recently
 * heard) and freed; who owns each job by the scheduler's latest poll; the nodes each job's
 * ranks report from (a small table per job, not an array over the fleet) and its rank cap.
 */
#ifndef HN_BRAIN_JOBTAB_H
#define HN_BRAIN_JOBTAB_H

#include "brain/job.h"

/* A job table of at most cap jobs (0: HN_JOBS_MAX_DEFAULT); freed with its jobs. */
struct hn_jobs *hb_jobs_new(size_t cap);
void hb_jobs_free(struct hn_jobs *js);
/* Every step report looks its job up: a hash, not a scan of thousands of jobs. */
int hb_find_job(const struct hn_jobs *js, const char *id);
/* The uid that owns job id per the latest poll, or -1: not listed, or no scheduler. */
int64_t hb_owner_of(const struct hn_jobs *js, const char *id);
/* A job as it is before its first report. */
struct job *hb_job_alloc(const char *id, double now);
/* A new job; when the table is full the first job by evict_before goes, with whatever of its
 * ledger is not saved yet. The store holds the ledger as of the last hn_control_flush (after
 * every frame and tick), but an eviction during ingest happens inside hn_brain_step, before
 * that frame's flush, so what the frame changed in the evicted job's ledger is lost (usually
 * nothing: ended jobs go first). The controller reloads the saved ledger and history of a
 * job it no longer has when the job reports again (hn_brain_restore_job); what else the
 * brain knew of it (its ranks' nodes, the detector, the hang watch) starts afresh. */
struct job *hb_new_job(struct hn_jobs *js, const char *id, double now);
/* Empties j's rows in flight and starts its feed again at stride 1 (a new run, a restride). */
void hb_clear_rows(struct job *j);
/* How many of j's ranks last reported from node (a brain node index). */
unsigned hb_ranks_on(const struct job *j, int node);
/* Rank r now reports from node (the job's node count follows, without a scan of its ranks);
 * -1: from none. */
void hb_set_rank_node(struct job *j, struct rank_st *r, int node);
/* Node (a brain node index) sent a report for j, accepted or not. */
void hb_add_reporter(struct job *j, int node);
/* A new run: only its own reporting nodes count for its rank cap (hb_rank_cap), and the table
 * drops the nodes nothing points at any more, so neither grows over requeues. */
void hb_new_run_nodes(struct job *j, int node);
/* The current run's own ranks: those its reports' world claims when they agree on it, before
 * hb_resize() sheds the others (at the first row, which a smaller run fills only when pushed
 * out). Without a world size, or with ranks that disagree on it (a heterogeneous job's
 * components), the job's. */
unsigned hb_run_ranks(const struct job *j);
/* ranks_per_node_max, 0 counted as 1. */
unsigned hb_ranks_per_node(const struct hn_brain *b);
/* The most ranks j may have: ranks_per_node_max for each node of the larger of the nodes the
 * scheduler lists it on and the nodes that have sent reports for it, at most RANKS_MAX. The
 * scan of the nodes' job lists is cached until the scheduler's next input or a new reporting
 * node; a cached cap can only be too large (hn_brain_node_idle empties a node's list between
 * polls), never too small. */
unsigned hb_rank_cap(const struct hn_brain *b, struct job *j);
/* The brain was told of now. js->now is the latest such time: a report received late (an
 * agent's backlog keeps its frames' times, up to an hour back) does not take the views' clock
 * (wall time, the wait shown lost so far) back. */
void hb_told(struct hn_jobs *js, double now);
/* The node rank of j last reported from; NULL when none yet or no such rank. */
struct node *hb_rank_node(struct hn_brain *b, const struct job *j, unsigned rank);
/* Whether houston may act on what j's reports say: with a scheduler that lists jobs, only for
 * a job it lists, whose reports come from its owner or root (docs/steps.md, "Who may
 * report"). Any user of a node can make up a job the scheduler does not know, and its slow
 * rank would otherwise drain that node under other users' jobs. */
int hb_acts_on(const struct hn_brain *b, const struct job *j);
/* The step a hang waits past: the highest since this controller knew the job (the saved one
 * before any report after a restore). */
uint64_t hb_waited_step(const struct job *j);
/* 1 when a rank of j's current run reports from node. */
int hb_job_uses(const struct job *j, int node);

/* j's ledger or history changed: the store saves it at the next flush
 * (hn_brain_jobs_changed). */
void hb_job_changed(struct hn_jobs *js, struct job *j);
/* Frees j, a job of the table that the caller takes out of it (evicted, or replaced). */
void hb_job_forget(struct hn_jobs *js, struct job *j);

#endif
