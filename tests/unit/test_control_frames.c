/*
 * test_control_frames.c - which agent frames the controller takes as already accepted
 * (hn_control_ingest's 208): a frame whose seq is not above the last one saved for its agent
 * boot. The controller answers a frame of the boot it last saved for the node from memory and
 * asks the store otherwise; the answers must be the store's in every case: after a restart on
 * the same store, for a late resend from an earlier boot, and after retention deleted a boot's
 * record (tests/unit/test_store.c checks the store's own answers).
 */
#include "common/frame.h"
#include "control/control.h"
#include "control_fleet.h"
#include "testutil.h"

#include <stdio.h>
#include <string.h>

/* Node n1's agent boot `boot` sends frame seq at now; returns the controller's answer. */
static int frame(struct fleet *f, uint64_t boot, uint64_t seq, double now)
{
    struct hn_frame_writer w;
    hn_frame_begin(&w, &f->buf, boot, seq, (uint64_t)(now * 1e9));
    hn_frame_node(&w, "n1", 4, "H100");
    assert_int_equal(hn_frame_end(&w), 0);
    char err[256] = "";
    return hn_control_ingest(&f->c, f->buf.data, f->buf.len, now, err, sizeof(err));
}

static void fleet_open(struct fleet *f, const char *name)
{
    fleet_config(f, name);
    hn_strlcpy(f->c.cfg.scheduler, "dry-run", sizeof(f->c.cfg.scheduler));
    fleet_start(f);
}

static void duplicates_across_restarts_and_boots(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "dedup");
    double t = 100;
    assert_int_equal(frame(&f, 7, 1, t), 200);
    assert_int_equal(frame(&f, 7, 1, t + 1), 208);
    assert_int_equal(frame(&f, 7, 3, t + 2), 200); /* a gap is no duplicate */
    assert_int_equal(frame(&f, 7, 2, t + 3), 208); /* nor is anything below the last */
    assert_int_equal(frame(&f, 7, 3, t + 4), 208);
    assert_int_equal(f.c.frames_accepted, 2);
    assert_int_equal(f.c.frames_duplicate, 3);
    fleet_close(&f);

    /* A restart (the store as a kill -9 leaves it) knows what was accepted. */
    fleet_open(&f, "dedup");
    assert_int_equal(frame(&f, 7, 3, t + 10), 208);
    assert_int_equal(frame(&f, 7, 4, t + 11), 200);
    assert_int_equal(frame(&f, 7, 4, t + 12), 208);

    /* The agent restarted (boot 8); a late resend from boot 7 is still known, a frame of boot
     * 7 never accepted is not, and boot 8's are known after it. */
    assert_int_equal(frame(&f, 8, 1, t + 13), 200);
    assert_int_equal(frame(&f, 7, 4, t + 14), 208);
    assert_int_equal(frame(&f, 7, 5, t + 15), 200);
    assert_int_equal(frame(&f, 8, 1, t + 16), 208);
    assert_int_equal(frame(&f, 7, 5, t + 17), 208);
    assert_int_equal(frame(&f, 8, 2, t + 18), 200);
    assert_int_equal(f.c.frames_accepted, 4);
    assert_int_equal(f.c.frames_duplicate, 5);
    fleet_close(&f);
}

/* Retention forgets the boots whose last frame is older than it; a resend of such a boot is
 * then new, as the store says, though the controller had it in memory. */
static void retention_forgets_boots(void **state)
{
    (void)state;
    struct fleet f;
    fleet_open(&f, "dedup-retention");
    f.c.cfg.retention_days = 1;
    assert_int_equal(frame(&f, 7, 5, 99), 200);
    assert_int_equal(frame(&f, 7, 5, 99.5), 208);
    hn_control_tick(&f.c, 100);
    assert_int_equal(f.c.pruned[4], 0);
    double later = 100 + 2 * 86400;
    hn_control_tick(&f.c, later);
    assert_int_equal(f.c.pruned[4], 1);
    assert_int_equal(frame(&f, 7, 5, later + 1), 200);
    assert_int_equal(frame(&f, 7, 5, later + 2), 208);
    fleet_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(duplicates_across_restarts_and_boots),
        cmocka_unit_test(retention_forgets_boots),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
