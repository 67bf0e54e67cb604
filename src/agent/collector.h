/*
 * collector.h - the agent's collectors: a static table of { name, init, collect, render, fini }
 * (collectd, netdata). Adding a data source is adding a row to the table in agent.c.
 *
 * Lifecycle, all on the agent's collect thread:
 *   init(cfg, &state)   once; allocates everything the collector will need. Returns 0, or a
 *                       negative errno when the source is absent (the agent then says so once
 *                       and keeps serving the other collectors).
 *   collect(state)      each cycle; refreshes the collector's snapshot. Must not allocate from
 *                       the heap in the steady state. Returns 0 or a negative errno; errors are
 *                       counted in houston_agent_collector_errors_total{collector=NAME}.
 *   render(state, e)    after collect; writes the collector's metric families to e.
 *   fini(state)         once at exit; frees what init allocated.
 */
#ifndef HN_COLLECTOR_H
#define HN_COLLECTOR_H

#include "agent/expo.h"

struct hn_agent_config;

struct hn_collector {
    const char *name;
    int (*init)(const struct hn_agent_config *cfg, void **state);
    int (*collect)(void *state);
    void (*render)(void *state, struct hn_expo *e);
    void (*fini)(void *state);
};

#endif
