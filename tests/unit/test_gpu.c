/*
 * test_gpu.c - the GPU collector (agent/gpu.h) against the fake NVML (tests/fakenvml,
 * docs/fakenvml.md): discovery and identity labels, values set in the fake's state file as they
 * come out of /metrics, faults (ECC, row remap, NVLink down, lost GPU, unsupported functions),
 * Xid events through the event thread, and an NVML that cannot be loaded or initialised.
 *
 * Every test writes its own state file and points HN_FAKENVML_STATE at it before
 * hn_gpus_init(), since the fake reads the variable at nvmlInit_v2. The fake re-reads a changed
 * file at most every 50 ms, so a test that edits it while NVML is open waits 120 ms.
 */
#include "testutil.h"

#include "agent/gpu.h"

#include <errno.h>
#include <math.h>

struct fx {
    struct hn_gpu_set *s;
    int inited;
    struct hn_buf out;
    char state[PATH_MAX];
};

/* Writes the fake's state file and opens lib on it, as the agent would with --nvml-lib. */
static void open_lib(struct fx *f, const char *lib, const char *content)
{
    tu_replace_file(f->state, content);
    assert_int_equal(setenv("HN_FAKENVML_STATE", f->state, 1), 0);
    hn_gpus_init(f->s, lib, "testhost");
    f->inited = 1;
}

/* Loads the fake with the given state. */
static void start(struct fx *f, const char *content)
{
    const char *lib = getenv("HN_FAKENVML");
    if (!lib || !*lib)
        fail_msg("HN_FAKENVML is not set (run through ctest)");
    open_lib(f, lib, content);
}

/* Renders the collector into f->out, which must not be truncated and must pass
 * tu_check_exposition. */
static const char *render(struct fx *f)
{
    hn_buf_reset(&f->out);
    struct hn_expo e;
    hn_expo_init(&e, &f->out);
    hn_gpus_render(f->s, &e);
    assert_int_equal(e.truncated, 0);
    tu_check_exposition(f->out.data);
    return f->out.data;
}

/* One agent cycle for this collector: collect (which must succeed), then render. */
static const char *cycle(struct fx *f)
{
    assert_int_equal(hn_gpus_collect(f->s), 0);
    return render(f);
}

/*
 * Counts the samples of metric name whose labels contain every one of the NULL-terminated
 * label fragments (e.g. "gpu=\"2\""), and stores the value of the last one in *v unless v is
 * NULL.
 */
static int samples(const char *text, double *v, const char *name, ...)
{
    int found = 0;
    size_t nl = strlen(name);
    char buf[2048];
    for (const char *pos = text; tu_next_line(&pos, buf, sizeof(buf));) {
        if (buf[0] == '#' || strncmp(buf, name, nl) != 0 || (buf[nl] != '{' && buf[nl] != ' '))
            continue;
        char *sp = strrchr(buf, ' ');
        assert_non_null(sp);
        *sp = '\0';
        int all = 1;
        va_list ap;
        va_start(ap, name);
        for (const char *frag = va_arg(ap, const char *); frag; frag = va_arg(ap, const char *))
            all &= strstr(buf + nl, frag) != NULL;
        va_end(ap);
        if (!all)
            continue;
        double d = NAN;
        if (strcmp(sp + 1, "+Inf") != 0)
            assert_int_equal(hn_parse_double(sp + 1, &d), 0);
        if (v)
            *v = d;
        found++;
    }
    return found;
}

/* COUNT(text, name, fragments...): how many samples of name carry every label fragment. */
#define COUNT(text, ...) samples((text), NULL, __VA_ARGS__, (const char *)NULL)

/* The value of the one sample of name, which has no gpu label. */
static double node_value(const char *text, const char *name)
{
    double v = NAN;
    int n = samples(text, &v, name, (const char *)NULL);
    if (n != 1)
        fail_msg("%d samples of %s, want 1", n, name);
    return v;
}

/* The value of the one sample of name for GPU gpu (with an optional extra label fragment). */
static double gpu_value(const char *text, const char *name, unsigned gpu, const char *extra)
{
    char sel[32];
    (void)snprintf(sel, sizeof(sel), "gpu=\"%u\"", gpu);
    double v = NAN;
    int n = samples(text, &v, name, sel, extra, (const char *)NULL);
    if (n != 1)
        fail_msg("%d samples of %s{%s%s%s}, want 1", n, name, sel, extra ? "," : "",
                 extra ? extra : "");
    return v;
}

/* One expected sample: name for GPU gpu (and the label fragment extra unless NULL) is value. */
struct want {
    const char *name;
    unsigned gpu;
    const char *extra;
    double value;
};

/* Checks every sample of w[0..n) in text. */
static void expect_values(const char *text, const struct want *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double v = gpu_value(text, w[i].name, w[i].gpu, w[i].extra);
        if (v != w[i].value)
            fail_msg("%s{gpu=\"%u\"%s%s} is %g, want %g", w[i].name, w[i].gpu,
                     w[i].extra ? "," : "", w[i].extra ? w[i].extra : "", v, w[i].value);
    }
}

#define EXPECT_VALUES(text, w) expect_values((text), (w), HN_ARRAY_LEN(w))

/* ---- fixture ---- */

static int fx_setup(void **state)
{
    static unsigned seq;
    struct fx *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    f->s = calloc(1, sizeof(*f->s));
    if (!f->s) {
        free(f);
        return -1;
    }
    hn_buf_init(&f->out, 1u << 20);
    (void)snprintf(f->state, sizeof(f->state), "%s/state-%u", tu_tmpdir(), seq++);
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    if (f->inited)
        hn_gpus_fini(f->s);
    hn_buf_fini(&f->out);
    unlink(f->state);
    free(f->s);
    free(f);
    return 0;
}

/* ---- discovery ---- */

static void test_init_labels(void **state)
{
    struct fx *f = *state;
    start(f, "node 7\n");
    struct hn_gpu_set *s = f->s;
    assert_int_equal(s->open, 1);
    assert_string_equal(s->open_error, "");
    assert_int_equal(s->count, 8);
    assert_string_equal(s->driver, "580.105.08");
    assert_string_equal(s->gpus[0].labels,
                        "gpu=\"0\",UUID=\"GPU-00000000-0000-0000-0007-000000000000\","
                        "pci_bus_id=\"00000000:53:00.0\",device=\"nvidia0\","
                        "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"testhost\","
                        "DCGM_FI_DRIVER_VERSION=\"580.105.08\"");
    assert_string_equal(s->gpus[3].hlabels,
                        "gpu=\"3\",uuid=\"GPU-00000003-0000-0000-0007-000000000003\","
                        "pci_bus_id=\"00000000:86:00.0\",device=\"nvidia3\","
                        "model_name=\"NVIDIA H100 80GB HBM3\",hostname=\"testhost\"");
    for (unsigned i = 0; i < s->count; i++) {
        assert_int_equal(s->gpus[i].index, i);
        assert_int_equal(s->gpus[i].lost, 0);
        assert_int_equal(s->gpus[i].nlinks, 18);
    }
    assert_non_null(strstr(s->gpus[7].labels, "pci_bus_id=\"00000000:CA:00.0\""));

    const char *text = cycle(f);
    assert_true(node_value(text, "houston_nvml_up") == 1);
    assert_true(node_value(text, "houston_gpus") == 8);
    assert_int_equal(COUNT(text, "houston_gpu_up"), 8);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_GPU_TEMP"), 8);
    /* DCGM series carry dcgm-exporter's label names, houston's their snake_case form. */
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_GPU_TEMP", "UUID=\"", "modelName=\"",
                           "Hostname=\"testhost\"", "DCGM_FI_DRIVER_VERSION=\"580.105.08\""),
                     8);
    assert_int_equal(
        COUNT(text, "houston_gpu_up", "uuid=\"", "model_name=\"", "hostname=\"testhost\""), 8);
    assert_int_equal(COUNT(text, "houston_gpu_up", "UUID="), 0);
    assert_int_equal(COUNT(text, "houston_gpu_nvlink_up"), 8 * 18);
    assert_non_null(strstr(text, "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"));
    assert_non_null(strstr(text, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"));
}

static void test_init_other_model(void **state)
{
    struct fx *f = *state;
    start(f, "model gb200\ndriver 999.12.3\n");
    assert_int_equal(f->s->open, 1);
    assert_int_equal(f->s->count, 4);
    assert_non_null(strstr(f->s->gpus[0].labels, "modelName=\"NVIDIA GB200\""));
    assert_non_null(strstr(f->s->gpus[0].labels, "DCGM_FI_DRIVER_VERSION=\"999.12.3\""));
    const char *text = cycle(f);
    assert_true(node_value(text, "houston_gpus") == 4);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_POWER_USAGE"), 4);
}

/* ---- values ---- */

static void test_values(void **state)
{
    struct fx *f = *state;
    start(f, "jitter off\n"
             "gpu 0 power 612\n"
             "gpu 4 temp 92\n"
             "gpu 5 throttle 0x60\n"
             "gpu 5 sm_clock 1200\n"
             "gpu 6 pcie_replay 17\n");
    const char *text = cycle(f);
    static const struct want set[] = {
        {"DCGM_FI_DEV_POWER_USAGE", 0, NULL, 612},
        {"DCGM_FI_DEV_GPU_TEMP", 4, NULL, 92},
        {"DCGM_FI_DEV_SM_CLOCK", 5, NULL, 1200},
        {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", 6, NULL, 17},
        {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", 0, NULL, 0},
        {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 5, NULL, 0x60},
        {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 0, NULL, 0},
        {"houston_gpu_clock_event_active", 5, "reason=\"sw_thermal_slowdown\"", 1},
        {"houston_gpu_clock_event_active", 5, "reason=\"hw_thermal_slowdown\"", 1},
        {"houston_gpu_clock_event_active", 5, "reason=\"sw_power_cap\"", 0},
        {"houston_gpu_clock_event_active", 0, "reason=\"sw_thermal_slowdown\"", 0},
    };
    EXPECT_VALUES(text, set);
    /* GPUs the state file leaves alone get the fake's own readings. */
    double p1 = gpu_value(text, "DCGM_FI_DEV_POWER_USAGE", 1, NULL);
    assert_true(p1 > 50 && p1 < 700 && p1 != 612);

    /* A change in the state file shows in the next cycle. */
    tu_fakenvml_change(f->state, "jitter off\ngpu 0 power 300\n");
    text = cycle(f);
    assert_true(gpu_value(text, "DCGM_FI_DEV_POWER_USAGE", 0, NULL) == 300);
    assert_true(gpu_value(text, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 5, NULL) == 0);
}

static void test_ecc_and_remap(void **state)
{
    struct fx *f = *state;
    start(f, "gpu 1 ecc dbe_volatile 3\n"
             "gpu 1 ecc sbe_aggregate 40\n"
             "gpu 1 remap uncorrectable 2\n"
             "gpu 1 remap pending 1\n"
             "gpu 1 remap failure 1\n"
             "gpu 2 retired dbe 5\n");
    const char *text = cycle(f);
    static const struct want faults[] = {
        {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 1, NULL, 3},
        {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 0, NULL, 0},
        {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", 1, NULL, 0},
        {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", 1, NULL, 40},
        {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", 1, NULL, 0},
        {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 1, NULL, 2},
        {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", 1, NULL, 0},
        {"DCGM_FI_DEV_ROW_REMAP_PENDING", 1, NULL, 1},
        {"DCGM_FI_DEV_ROW_REMAP_FAILURE", 1, NULL, 1},
        {"DCGM_FI_DEV_ROW_REMAP_FAILURE", 0, NULL, 0},
        {"DCGM_FI_DEV_RETIRED_DBE", 2, NULL, 5},
        {"DCGM_FI_DEV_RETIRED_SBE", 2, NULL, 0},
    };
    EXPECT_VALUES(text, faults);
    assert_non_null(strstr(text, "# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter\n"));
    assert_non_null(strstr(text, "# TYPE DCGM_FI_DEV_ROW_REMAP_FAILURE gauge\n"));
}

static void test_nvlink_down(void **state)
{
    struct fx *f = *state;
    start(f, "gpu 7 nvlink 3 down\ngpu 7 nvlink 3 crc_flit 150\ngpu 7 nvlink 3 replay 2\n");
    const char *text = cycle(f);
    static const struct want links[] = {
        {"houston_gpu_nvlink_up", 7, "link=\"3\"", 0},
        {"houston_gpu_nvlink_up", 7, "link=\"2\"", 1},
        {"houston_gpu_nvlink_up", 7, "link=\"17\"", 1},
        {"houston_gpu_nvlink_up", 0, "link=\"3\"", 1},
        {"houston_gpu_nvlinks_active", 7, NULL, 17},
        {"houston_gpu_nvlinks_active", 0, NULL, 18},
        {"houston_gpu_nvlink_crc_flit_errors_total", 7, "link=\"3\"", 150},
        {"houston_gpu_nvlink_crc_flit_errors_total", 7, "link=\"4\"", 0},
        {"houston_gpu_nvlink_replay_errors_total", 7, "link=\"3\"", 2},
        {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", 7, NULL, 150},
        {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", 0, NULL, 0},
        {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", 7, NULL, 2},
    };
    EXPECT_VALUES(text, links);
    /* Per-link series use houston's snake_case labels. */
    assert_int_equal(COUNT(text, "houston_gpu_nvlink_up", "UUID="), 0);
}

static void test_lost_gpu(void **state)
{
    struct fx *f = *state;
    start(f, "");
    const char *text = cycle(f);
    assert_true(gpu_value(text, "houston_gpu_up", 2, NULL) == 1);

    tu_fakenvml_change(f->state, "gpu 2 lost\n");
    text = cycle(f);
    assert_int_equal(f->s->gpus[2].lost, 1);
    static const struct want lost[] = {
        {"houston_gpu_up", 2, NULL, 0},
        {"houston_gpu_up", 1, NULL, 1},
        {"houston_gpu_up", 3, NULL, 1},
    };
    EXPECT_VALUES(text, lost);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_GPU_TEMP", "gpu=\"2\""), 0);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_GPU_TEMP"), 7);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_POWER_USAGE"), 7);
    assert_int_equal(COUNT(text, "houston_gpu_nvlink_up", "gpu=\"2\""), 0);
    assert_int_equal(COUNT(text, "houston_gpu_nvlink_up"), 7 * 18);
    assert_true(node_value(text, "houston_gpus") == 8);

    /* Removing the line brings it back on the next cycle. */
    tu_fakenvml_change(f->state, "");
    text = cycle(f);
    assert_int_equal(f->s->gpus[2].lost, 0);
    assert_true(gpu_value(text, "houston_gpu_up", 2, NULL) == 1);
    assert_true(gpu_value(text, "DCGM_FI_DEV_GPU_TEMP", 2, NULL) > 0);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_GPU_TEMP"), 8);
}

static void test_not_supported(void **state)
{
    struct fx *f = *state;
    start(f, "gpu 3 not_supported power\n");
    const char *text = cycle(f);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_POWER_USAGE"), 7);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_POWER_USAGE", "gpu=\"3\""), 0);
    assert_true(gpu_value(text, "houston_gpu_up", 3, NULL) == 1);

    tu_fakenvml_change(f->state, "gpu all not_supported power\n");
    text = cycle(f);
    assert_null(strstr(text, "DCGM_FI_DEV_POWER_USAGE"));
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_GPU_TEMP"), 8);
    assert_int_equal(COUNT(text, "houston_gpu_up"), 8);
}

/* ---- Xid events ---- */

/* Cycles until GPU gpu's DCGM_FI_DEV_XID_ERRORS reads code, for 10 s at most (the event
 * thread picks the Xid up asynchronously, later on a busy machine); returns that cycle's text. */
static const char *wait_xid(struct fx *f, unsigned gpu, double code)
{
    for (int i = 0; i < 200; i++) {
        tu_sleep_ms(50);
        const char *text = cycle(f);
        if (gpu_value(text, "DCGM_FI_DEV_XID_ERRORS", gpu, NULL) == code)
            return text;
    }
    fail_msg("Xid %g never showed on GPU %u", code, gpu);
    return NULL;
}

static void test_xid_events(void **state)
{
    struct fx *f = *state;
    start(f, "");
    assert_int_equal(hn_gpus_events_start(f->s), 0);
    assert_int_equal(f->s->thread_running, 1);
    const char *text = cycle(f);
    assert_true(gpu_value(text, "DCGM_FI_DEV_XID_ERRORS", 5, NULL) == 0);
    assert_true(gpu_value(text, "houston_gpu_xid_events_total", 5, NULL) == 0);

    tu_replace_file(f->state, "gpu 5 xid 79 id=7901\n");
    text = wait_xid(f, 5, 79);
    static const struct want after[] = {
        {"houston_gpu_xid_events_total", 5, NULL, 1},
        {"DCGM_FI_DEV_XID_ERRORS", 4, NULL, 0},
        {"houston_gpu_xid_events_total", 4, NULL, 0},
    };
    EXPECT_VALUES(text, after);

    /* The last Xid stays and the event is counted once, however many cycles follow. */
    tu_sleep_ms(200);
    text = cycle(f);
    assert_true(gpu_value(text, "DCGM_FI_DEV_XID_ERRORS", 5, NULL) == 79);
    assert_true(gpu_value(text, "houston_gpu_xid_events_total", 5, NULL) == 1);
    assert_non_null(strstr(text, "# TYPE houston_gpu_xid_events_total counter\n"));

    hn_gpus_events_stop(f->s);
    assert_int_equal(f->s->thread_running, 0);
}

/*
 * Xid 79 ("fallen off the bus") is followed by the GPU being lost: the last Xid must stay
 * visible while the GPU is down and after it answers again, or an alert on
 * DCGM_FI_DEV_XID_ERRORS sees it for a single cycle (docs/fakenvml.md's "GPU 3 falls off the
 * bus" example).
 */
static void test_xid_survives_lost_gpu(void **state)
{
    struct fx *f = *state;
    start(f, "");
    assert_int_equal(hn_gpus_events_start(f->s), 0);
    tu_replace_file(f->state, "gpu 3 xid 79 id=7902\n");
    (void)wait_xid(f, 3, 79);

    tu_fakenvml_change(f->state, "gpu 3 xid 79 id=7902\ngpu 3 lost\n");
    for (int i = 0; i < 2; i++) {
        const char *text = cycle(f);
        static const struct want down[] = {
            {"houston_gpu_up", 3, NULL, 0},
            {"DCGM_FI_DEV_XID_ERRORS", 3, NULL, 79},
            {"houston_gpu_xid_events_total", 3, NULL, 1},
        };
        EXPECT_VALUES(text, down);
    }

    tu_fakenvml_change(f->state, "gpu 3 xid 79 id=7902\n");
    const char *text = cycle(f);
    static const struct want back[] = {
        {"houston_gpu_up", 3, NULL, 1},
        {"DCGM_FI_DEV_XID_ERRORS", 3, NULL, 79},
        {"houston_gpu_xid_events_total", 3, NULL, 1},
    };
    EXPECT_VALUES(text, back);
}

/* A burst of Xids within one cycle is counted whole and the newest code wins (the review
 * found a 64-entry buffer that dropped the newest events). */
static void test_xid_burst(void **state)
{
    struct fx *f = *state;
    start(f, "");
    assert_int_equal(hn_gpus_events_start(f->s), 0);
    char burst[4096];
    size_t len = 0;
    for (int i = 0; i < 70; i++)
        len +=
            (size_t)snprintf(burst + len, sizeof(burst) - len, "gpu 0 xid 13 id=%d\n", 13000 + i);
    (void)snprintf(burst + len, sizeof(burst) - len, "gpu 0 xid 48 id=4800\n");
    tu_replace_file(f->state, burst);
    const char *text = NULL;
    for (int i = 0; i < 200; i++) {
        tu_sleep_ms(50);
        text = cycle(f);
        if (gpu_value(text, "houston_gpu_xid_events_total", 0, NULL) == 71)
            break;
    }
    assert_true(gpu_value(text, "houston_gpu_xid_events_total", 0, NULL) == 71);
    assert_true(gpu_value(text, "DCGM_FI_DEV_XID_ERRORS", 0, NULL) == 48);
}

/* An unexpected NVML error is counted per GPU, fails the cycle, and leaves the field out. */
static void test_nvml_error_counted(void **state)
{
    struct fx *f = *state;
    start(f, "gpu 1 fail power 999\n");
    assert_int_equal(hn_gpus_collect(f->s), -EIO);
    const char *text = render(f);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_POWER_USAGE", "gpu=\"1\""), 0);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_POWER_USAGE"), 7);
    assert_true(gpu_value(text, "houston_gpu_nvml_errors_total", 1, NULL) == 1);
    assert_true(gpu_value(text, "houston_gpu_nvml_errors_total", 0, NULL) == 0);
    tu_fakenvml_change(f->state, "");
    text = cycle(f);
    assert_true(gpu_value(text, "houston_gpu_nvml_errors_total", 1, NULL) == 1);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_POWER_USAGE"), 8);
}

/* A GPU lost when NVML starts gets its identity and NVLinks once it answers. */
static void test_lost_at_start_rediscovered(void **state)
{
    struct fx *f = *state;
    start(f, "gpu 6 lost\n");
    const char *text = cycle(f);
    assert_string_equal(f->s->gpus[6].uuid, "unknown");
    assert_true(gpu_value(text, "houston_gpu_up", 6, NULL) == 0);
    tu_fakenvml_change(f->state, "");
    text = cycle(f);
    assert_true(gpu_value(text, "houston_gpu_up", 6, NULL) == 1);
    assert_string_not_equal(f->s->gpus[6].uuid, "unknown");
    assert_int_equal(f->s->gpus[6].nlinks, 18);
    assert_int_equal(COUNT(text, "houston_gpu_nvlink_up", "gpu=\"6\""), 18);
    assert_int_equal(COUNT(text, "DCGM_FI_DEV_GPU_TEMP", "pci_bus_id=\"unknown\""), 0);
}

/* ---- NVML absent or failing ---- */

static void test_library_missing(void **state)
{
    struct fx *f = *state;
    static const char lib[] = "/nonexistent/houston-test/libnvidia-ml.so.1";
    open_lib(f, lib, "");
    assert_int_equal(f->s->open, 0);
    assert_int_equal(f->s->count, 0);
    assert_non_null(strstr(f->s->open_error, lib));
    assert_int_equal(hn_gpus_events_start(f->s), 0);
    assert_int_equal(f->s->thread_running, 0);

    /* The retry is 60 s away: collect says so, render still answers. */
    assert_int_equal(hn_gpus_collect(f->s), -ENODEV);
    const char *text = render(f);
    assert_non_null(strstr(text, "\nhouston_nvml_up 0\n"));
    assert_null(strstr(text, "DCGM_"));
    assert_int_equal(COUNT(text, "houston_gpu_up"), 0);
}

static void test_init_fails(void **state)
{
    struct fx *f = *state;
    start(f, "init_fail 9\n");
    assert_int_equal(f->s->open, 0);
    assert_int_equal(f->s->count, 0);
    assert_non_null(strstr(f->s->open_error, "nvmlInit_v2"));
    assert_int_equal(hn_gpus_collect(f->s), -ENODEV);
    const char *text = render(f);
    assert_non_null(strstr(text, "\nhouston_nvml_up 0\n"));
    assert_null(strstr(text, "DCGM_"));
}

/* ---- main ---- */

#define T(name) cmocka_unit_test_setup_teardown(name, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_init_labels),     T(test_init_other_model),   T(test_values),
        T(test_ecc_and_remap),   T(test_nvlink_down),        T(test_lost_gpu),
        T(test_not_supported),   T(test_xid_events),         T(test_xid_survives_lost_gpu),
        T(test_xid_burst),       T(test_nvml_error_counted), T(test_lost_at_start_rediscovered),
        T(test_library_missing), T(test_init_fails),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
