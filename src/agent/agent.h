/*
 * agent.h - `houston agent`: the per-node telemetry daemon.
 *
 * The agent runs every collector of its table (collector.h) each --interval seconds on one
 * thread, renders all families into a back buffer, and swaps it with the front buffer that
 * the HTTP thread serves on /metrics. A scrape therefore costs a memcpy, never a collection,
 * and the steady loop does no heap allocation once the buffers have grown.
 *
 * hn_agent_render_once() runs one collection and render outside the daemon (used by
 * `houston agent --once`, the benchmark and tests).
 */
#ifndef HN_AGENT_H
#define HN_AGENT_H

#include "agent/config.h"
#include "common/buf.h"

/* Parses agent flags (and --config FILE) into cfg. Returns 0, 1 when --help was printed, or
 * -1 after printing an error. Sets *once for --once. */
int hn_agent_parse_args(int argc, char **argv, struct hn_agent_config *cfg, int *once);

#endif
