/*
 * control_fleet.h - a controller for the unit tests that drive it in process (frames through
 * hn_control_ingest, replies from its routes): its store and tokens in the scratch folder, its
 * nodes (4 GPUs each) made by the frames they send.
 */
#ifndef HOUSTON_TEST_CONTROL_FLEET_H
#define HOUSTON_TEST_CONTROL_FLEET_H

#include "common/buf.h"
#include "common/util.h"
#include "control/control.h"
#include "testutil.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct fleet {
    struct hn_control c;
    struct hn_buf buf;
    uint64_t seq[2];
};

/* The configuration of a controller whose store is NAME.db and tokens are in the scratch
 * folder. */
static inline void fleet_config(struct fleet *f, const char *name)
{
    memset(f, 0, sizeof(*f));
    const char *dir = tu_tmpdir();
    char path[PATH_MAX];
    hn_control_config_defaults(&f->c.cfg);
    snprintf(f->c.cfg.token_file, sizeof(f->c.cfg.token_file), "%s/token", dir);
    tu_write_file(f->c.cfg.token_file, "agent-secret\n");
    snprintf(f->c.cfg.operator_token_file, sizeof(f->c.cfg.operator_token_file), "%s/op", dir);
    tu_write_file(f->c.cfg.operator_token_file, "operator-secret\n");
    snprintf(path, sizeof(path), "%s/%s.db", dir, name);
    hn_strlcpy(f->c.cfg.store, path, sizeof(f->c.cfg.store));
    f->c.cfg.default_gpus = 4;
}

/* Starts the controller fleet_config (and the caller's changes to it) describe. */
static inline void fleet_start(struct fleet *f)
{
    char err[256] = "";
    assert_int_equal(hn_control_init(&f->c, err, sizeof(err)), 0);
    hn_buf_init(&f->buf, 1 << 16);
}

static inline void fleet_close(struct fleet *f)
{
    hn_buf_fini(&f->buf);
    hn_control_fini(&f->c);
    hn_control_config_fini(&f->c.cfg);
}

#endif
