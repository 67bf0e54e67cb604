/*
 * test_fakenvml.c - the fake libnvidia-ml (tests/fakenvml) against its contract.
 *
 * The library is dlopened from $HN_FAKENVML like the agent does, every symbol the agent asks
 * for (src/agent/nvml.h) must resolve, the default node must be 8 healthy H100s, every model
 * must agree with its nvidia-smi capture in tests/fixtures/nvidia-smi/hardware/, and every knob
 * of the state file (docs/fakenvml.md) must take effect, including while NVML is in use.
 */
#include "testutil.h"

#include "agent/nvml.h"
#include "agent/nvml_abi.h"

#include <dlfcn.h>
#include <pthread.h>

#define MIB 1048576ull

struct fake {
    void *dl;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*driver_version)(char *, unsigned);
    nvmlReturn_t (*count)(unsigned *);
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*minor)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*encoder)(nvmlDevice_t, unsigned *, unsigned *);
    nvmlReturn_t (*decoder)(nvmlDevice_t, unsigned *, unsigned *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*temp_threshold)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_v2_t *);
    nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *);
    nvmlReturn_t (*retired)(nvmlDevice_t, int, unsigned *, unsigned long long *);
    nvmlReturn_t (*retired_pending)(nvmlDevice_t, int *);
    nvmlReturn_t (*remap)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *);
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*pcie_replay)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int *);
    nvmlReturn_t (*nvlink_err)(nvmlDevice_t, unsigned, int, unsigned long long *);
    nvmlReturn_t (*violation)(nvmlDevice_t, int, nvmlViolationTime_t *);
    nvmlReturn_t (*fields)(nvmlDevice_t, int, nvmlFieldValue_t *);
    nvmlReturn_t (*set_create)(nvmlEventSet_t *);
    nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
    nvmlReturn_t (*set_wait)(nvmlEventSet_t, nvmlEventData_t *, unsigned);
    nvmlReturn_t (*set_free)(nvmlEventSet_t);
};

#define SYM(field, name)                                                                           \
    {                                                                                              \
        name, offsetof(struct fake, field)                                                         \
    }
static const struct {
    const char *name;
    size_t off;
} syms[] = {
    SYM(init, "nvmlInit_v2"),
    SYM(shutdown, "nvmlShutdown"),
    SYM(error_string, "nvmlErrorString"),
    SYM(driver_version, "nvmlSystemGetDriverVersion"),
    SYM(count, "nvmlDeviceGetCount_v2"),
    SYM(handle, "nvmlDeviceGetHandleByIndex_v2"),
    SYM(name, "nvmlDeviceGetName"),
    SYM(uuid, "nvmlDeviceGetUUID"),
    SYM(pci, "nvmlDeviceGetPciInfo_v3"),
    SYM(minor, "nvmlDeviceGetMinorNumber"),
    SYM(util, "nvmlDeviceGetUtilizationRates"),
    SYM(encoder, "nvmlDeviceGetEncoderUtilization"),
    SYM(decoder, "nvmlDeviceGetDecoderUtilization"),
    SYM(clock, "nvmlDeviceGetClockInfo"),
    SYM(power, "nvmlDeviceGetPowerUsage"),
    SYM(energy, "nvmlDeviceGetTotalEnergyConsumption"),
    SYM(temp, "nvmlDeviceGetTemperature"),
    SYM(temp_threshold, "nvmlDeviceGetTemperatureThreshold"),
    SYM(memory, "nvmlDeviceGetMemoryInfo_v2"),
    SYM(ecc, "nvmlDeviceGetTotalEccErrors"),
    SYM(retired, "nvmlDeviceGetRetiredPages"),
    SYM(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus"),
    SYM(remap, "nvmlDeviceGetRemappedRows"),
    SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons"),
    SYM(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons"),
    SYM(pcie_replay, "nvmlDeviceGetPcieReplayCounter"),
    SYM(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration"),
    SYM(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth"),
    SYM(nvlink_state, "nvmlDeviceGetNvLinkState"),
    SYM(nvlink_err, "nvmlDeviceGetNvLinkErrorCounter"),
    SYM(violation, "nvmlDeviceGetViolationStatus"),
    SYM(fields, "nvmlDeviceGetFieldValues"),
    SYM(set_create, "nvmlEventSetCreate"),
    SYM(register_events, "nvmlDeviceRegisterEvents"),
    SYM(set_wait, "nvmlEventSetWait_v2"),
    SYM(set_free, "nvmlEventSetFree"),
};

static struct fake F;
static char state_path[PATH_MAX];

static nvmlDevice_t dev(unsigned i)
{
    nvmlDevice_t d = NULL;
    assert_int_equal(F.handle(i, &d), NVML_SUCCESS);
    assert_non_null(d);
    return d;
}

static void init_with(const char *content)
{
    tu_replace_file(state_path, content);
    assert_int_equal(F.init(), NVML_SUCCESS);
}

static int group_setup(void **unused)
{
    (void)unused;
    const char *lib = getenv("HN_FAKENVML");
    if (!lib || !*lib) {
        (void)fprintf(stderr, "HN_FAKENVML is not set\n");
        return -1;
    }
    F.dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!F.dl) {
        (void)fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
        return -1;
    }
    for (size_t i = 0; i < HN_ARRAY_LEN(syms); i++) {
        void *p = dlsym(F.dl, syms[i].name);
        if (!p) {
            (void)fprintf(stderr, "%s lacks %s\n", lib, syms[i].name);
            return -1;
        }
        memcpy((char *)&F + syms[i].off, &p, sizeof(p));
    }
    tu_tmpdir_setup(NULL);
    (void)snprintf(state_path, sizeof(state_path), "%s/state", tu_tmpdir());
    setenv("HN_FAKENVML_STATE", state_path, 1);
    return 0;
}

static int group_teardown(void **unused)
{
    (void)unused;
    tu_tmpdir_teardown(NULL);
    if (F.dl)
        dlclose(F.dl);
    return 0;
}

/* Leaves NVML uninitialised whatever a failed test did. */
static int test_teardown(void **unused)
{
    (void)unused;
    while (F.shutdown() == NVML_SUCCESS)
        ;
    return 0;
}

/* ---- contract ---- */

static void test_agent_symbols_resolve(void **unused)
{
    (void)unused;
#define AGENT_SYM(field, sym, alt, ret, args) {sym, alt},
    static const char *const agent[][2] = {HN_NVML_FUNCS(AGENT_SYM)};
#undef AGENT_SYM
    for (size_t i = 0; i < HN_ARRAY_LEN(agent); i++) {
        assert_non_null(dlsym(F.dl, agent[i][0]));
        if (agent[i][1])
            assert_non_null(dlsym(F.dl, agent[i][1]));
    }
}

static void test_uninitialized(void **unused)
{
    (void)unused;
    unsigned n;
    nvmlDevice_t d;
    nvmlEventSet_t set;
    char buf[80];
    assert_int_equal(F.count(&n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(F.handle(0, &d), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(F.driver_version(buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(F.set_create(&set), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(F.shutdown(), NVML_ERROR_UNINITIALIZED);
    assert_string_equal(F.error_string(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
    assert_string_equal(F.error_string(12345), "Unknown Error");

    /* Init nests; the last shutdown closes. */
    unlink(state_path);
    assert_int_equal(F.init(), NVML_SUCCESS);
    assert_int_equal(F.init(), NVML_SUCCESS);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
    assert_int_equal(F.count(&n), NVML_SUCCESS);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
    assert_int_equal(F.count(&n), NVML_ERROR_UNINITIALIZED);
}

/* ---- defaults: 8 healthy H100 ---- */

static void test_defaults(void **unused)
{
    (void)unused;
    unlink(state_path); /* a missing file means the defaults */
    assert_int_equal(F.init(), NVML_SUCCESS);

    unsigned n = 0, v;
    char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    assert_int_equal(F.count(&n), NVML_SUCCESS);
    assert_int_equal(n, 8);
    assert_int_equal(F.driver_version(buf, sizeof(buf)), NVML_SUCCESS);
    assert_string_equal(buf, "580.105.08");
    assert_int_equal(F.driver_version(buf, 4), NVML_ERROR_INSUFFICIENT_SIZE);

    nvmlDevice_t d;
    assert_int_equal(F.handle(8, &d), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(F.handle(0, NULL), NVML_ERROR_INVALID_ARGUMENT);
    int bogus;
    assert_int_equal(F.name((nvmlDevice_t)(void *)&bogus, buf, sizeof(buf)),
                     NVML_ERROR_INVALID_ARGUMENT);

    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t h = dev(i);
        assert_ptr_equal(h, dev(i)); /* handles are stable */
        assert_int_equal(F.name(h, buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "NVIDIA H100 80GB HBM3");
        assert_int_equal(F.name(h, buf, 5), NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(F.minor(h, &v), NVML_SUCCESS);
        assert_int_equal(v, i);

        nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
        assert_int_equal(F.memory(h, &mem), NVML_SUCCESS);
        assert_int_equal(mem.total, 81559 * MIB);
        assert_int_equal(mem.reserved, 480 * MIB);
        assert_int_equal(mem.total, mem.reserved + mem.used + mem.free);
        assert_true(mem.used > 0); /* the default node is busy */
        mem.version = 1;
        assert_int_equal(F.memory(h, &mem), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);

        nvmlUtilization_t u;
        assert_int_equal(F.util(h, &u), NVML_SUCCESS);
        assert_in_range(u.gpu, 80, 90);
        assert_in_range(u.memory, 40, 60);
        assert_int_equal(F.power(h, &v), NVML_SUCCESS);
        assert_in_range(v, 400000, 700000);
        assert_int_equal(F.temp(h, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
        assert_in_range(v, 50, 80);
        assert_int_equal(F.temp(h, 7, &v), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(F.temp_threshold(h, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v),
                         NVML_SUCCESS);
        assert_int_equal(v, 89);
        assert_int_equal(F.clock(h, NVML_CLOCK_SM, &v), NVML_SUCCESS);
        assert_int_equal(v, 1980);
        assert_int_equal(F.clock(h, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
        assert_int_equal(v, 2619);

        unsigned long long r, c;
        assert_int_equal(F.reasons(h, &r), NVML_SUCCESS);
        assert_int_equal(r, 0);
        for (int type = 0; type < 2; type++)
            for (int counter = 0; counter < 2; counter++) {
                assert_int_equal(F.ecc(h, type, counter, &c), NVML_SUCCESS);
                assert_int_equal(c, 0);
            }
        unsigned corr, unc, pend, fail;
        assert_int_equal(F.remap(h, &corr, &unc, &pend, &fail), NVML_SUCCESS);
        assert_int_equal(corr + unc + pend + fail, 0);
        unsigned pages = 0;
        assert_int_equal(
            F.retired(h, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &pages, NULL),
            NVML_SUCCESS);
        assert_int_equal(pages, 0);
        assert_int_equal(F.pcie_replay(h, &v), NVML_SUCCESS);
        assert_int_equal(v, 0);
        for (unsigned link = 0; link < 18; link++) {
            int active = -1;
            assert_int_equal(F.nvlink_state(h, link, &active), NVML_SUCCESS);
            assert_int_equal(active, NVML_FEATURE_ENABLED);
        }
        int active;
        assert_int_equal(F.nvlink_state(h, 18, &active), NVML_ERROR_INVALID_ARGUMENT);

        nvmlFieldValue_t fv[2] = {{.fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION},
                                  {.fieldId = NVML_FI_DEV_MEMORY_TEMP}};
        assert_int_equal(F.fields(h, 2, fv), NVML_SUCCESS);
        assert_int_equal(fv[0].nvmlReturn, NVML_SUCCESS);
        assert_int_equal(fv[0].value.uiVal, NVML_GPU_RECOVERY_ACTION_NONE);
        assert_int_equal(fv[1].nvmlReturn, NVML_SUCCESS);
        assert_in_range(fv[1].value.uiVal, 40, 80);
    }
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
}

/* Live data: energy grows with power * time, GPUs differ, jitter off pins the load. */
static void test_live_values(void **unused)
{
    (void)unused;
    init_with("");
    unsigned long long e0, e1;
    unsigned p;
    assert_int_equal(F.energy(dev(0), &e0), NVML_SUCCESS);
    assert_int_equal(F.power(dev(0), &p), NVML_SUCCESS);
    uint64_t t0 = hn_mono_ns();
    tu_sleep_ms(300);
    assert_int_equal(F.energy(dev(0), &e1), NVML_SUCCESS);
    double dt = (double)(hn_mono_ns() - t0) / 1e9;
    /* mW * s = mJ; power may move by a few percent between seconds. */
    assert_true(e1 > e0);
    assert_true((double)(e1 - e0) > 0.8 * p * dt && (double)(e1 - e0) < 1.2 * p * dt + 1000);

    unsigned distinct = 0, prev = 0;
    for (unsigned i = 0; i < 8; i++) {
        assert_int_equal(F.power(dev(i), &p), NVML_SUCCESS);
        distinct += p != prev;
        prev = p;
    }
    assert_true(distinct >= 4);

    tu_fakenvml_change(state_path, "jitter off\nload 50\n");
    nvmlUtilization_t u;
    assert_int_equal(F.util(dev(3), &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 50);
    assert_int_equal(u.memory, 30);

    tu_fakenvml_change(state_path, "load 0\n");
    unsigned long long r;
    unsigned clk;
    assert_int_equal(F.util(dev(3), &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 0);
    assert_int_equal(F.reasons(dev(3), &r), NVML_SUCCESS);
    assert_int_equal(r, nvmlClocksEventReasonGpuIdle);
    assert_int_equal(F.clock(dev(3), NVML_CLOCK_GRAPHICS, &clk), NVML_SUCCESS);
    assert_int_equal(clk, 345);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
}

/* ---- profiles agree with the captures they cite ---- */

/* Text of the first <tag> at or after *pos; advances *pos past it. */
static void xml_next(const char *xml, const char **pos, const char *tag, char *out, size_t size)
{
    char open[64];
    (void)snprintf(open, sizeof(open), "<%s>", tag);
    const char *p = strstr(*pos ? *pos : xml, open);
    assert_non_null(p);
    p += strlen(open);
    const char *e = strchr(p, '<');
    assert_non_null(e);
    size_t n = (size_t)(e - p) < size - 1 ? (size_t)(e - p) : size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    *pos = e;
}

static long xml_num(const char *s)
{
    return strtol(s, NULL, 10); /* "81559 MiB", "-8 C", "16x" */
}

static void check_capture(const char *model, const char *file)
{
    char path[PATH_MAX], state[64], want[128], got[128];
    char *xml = tu_slurp(tu_fixture(path, sizeof(path), "nvidia-smi/hardware/%s", file), NULL);
    const char *pos = NULL;

    (void)snprintf(state, sizeof(state), "model %s\n", model);
    init_with(state);
    xml_next(xml, &pos, "driver_version", want, sizeof(want));
    assert_int_equal(F.driver_version(got, sizeof(got)), NVML_SUCCESS);
    assert_string_equal(got, want);
    xml_next(xml, &pos, "attached_gpus", want, sizeof(want));
    unsigned n;
    assert_int_equal(F.count(&n), NVML_SUCCESS);
    assert_int_equal(n, xml_num(want));

    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t h = dev(i);
        unsigned v;
        xml_next(xml, &pos, "product_name", want, sizeof(want));
        assert_int_equal(F.name(h, got, sizeof(got)), NVML_SUCCESS);
        assert_string_equal(got, want);
        xml_next(xml, &pos, "uuid", want, sizeof(want));
        assert_int_equal(F.uuid(h, got, sizeof(got)), NVML_SUCCESS);
        assert_string_equal(got, want);
        xml_next(xml, &pos, "minor_number", want, sizeof(want));
        assert_int_equal(F.minor(h, &v), NVML_SUCCESS);
        assert_int_equal(v, xml_num(want));

        nvmlPciInfo_t pci;
        assert_int_equal(F.pci(h, &pci), NVML_SUCCESS);
        xml_next(xml, &pos, "pci_device_id", want, sizeof(want));
        assert_int_equal(pci.pciDeviceId, strtoul(want, NULL, 16));
        xml_next(xml, &pos, "pci_bus_id", want, sizeof(want));
        assert_string_equal(pci.busId, want);
        xml_next(xml, &pos, "pci_sub_system_id", want, sizeof(want));
        assert_int_equal(pci.pciSubSystemId, strtoul(want, NULL, 16));
        xml_next(xml, &pos, "current_link_gen", want, sizeof(want));
        assert_int_equal(F.pcie_gen(h, &v), NVML_SUCCESS);
        assert_int_equal(v, xml_num(want));
        xml_next(xml, &pos, "current_link_width", want, sizeof(want));
        assert_int_equal(F.pcie_width(h, &v), NVML_SUCCESS);
        assert_int_equal(v, xml_num(want));

        xml_next(xml, &pos, "fb_memory_usage", want, sizeof(want));
        nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
        assert_int_equal(F.memory(h, &mem), NVML_SUCCESS);
        xml_next(xml, &pos, "total", want, sizeof(want));
        assert_int_equal(mem.total, (unsigned long long)xml_num(want) * MIB);
        xml_next(xml, &pos, "reserved", want, sizeof(want));
        assert_int_equal(mem.reserved, (unsigned long long)xml_num(want) * MIB);

        /* Absolute limits from the relative ones: reference = temp + T.Limit margin. GPUs of
         * one capture differ by a degree of rounding, so only GPU 0 is exact. */
        xml_next(xml, &pos, "gpu_temp", want, sizeof(want));
        long ref = xml_num(want);
        xml_next(xml, &pos, "gpu_temp_tlimit", want, sizeof(want));
        ref += xml_num(want);
        xml_next(xml, &pos, "gpu_temp_max_tlimit_threshold", want, sizeof(want));
        long shutdown = ref - xml_num(want);
        xml_next(xml, &pos, "gpu_temp_slow_tlimit_threshold", want, sizeof(want));
        long slowdown = ref - xml_num(want);
        unsigned t_shut, t_slow, t_max;
        assert_int_equal(F.temp_threshold(h, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &t_shut), 0);
        assert_int_equal(F.temp_threshold(h, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &t_slow), 0);
        assert_int_equal(F.temp_threshold(h, NVML_TEMPERATURE_THRESHOLD_GPU_MAX, &t_max), 0);
        if (i == 0) {
            assert_int_equal(t_max, ref);
            assert_int_equal(t_shut, shutdown);
            assert_int_equal(t_slow, slowdown);
        } else {
            assert_in_range(t_max, ref - 1, ref + 1);
        }
    }
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
    free(xml);
}

static void test_profiles_match_captures(void **unused)
{
    (void)unused;
    check_capture("h100", "qx-h100.xml");
    check_capture("gb200", "qx-gb200.xml");
    check_capture("b200", "qx-b200.xml");
    check_capture("gb300", "qx-gb300.xml");
    check_capture("h200", "qx-h200.xml");
}

static void test_count_past_capture(void **unused)
{
    (void)unused;
    init_with("count 6\nmodel gb200\n");
    unsigned n;
    nvmlPciInfo_t pci;
    assert_int_equal(F.count(&n), NVML_SUCCESS);
    assert_int_equal(n, 6);
    assert_int_equal(F.pci(dev(5), &pci), NVML_SUCCESS);
    assert_string_equal(pci.busId, "00000000:E5:00.0");
    assert_string_equal(pci.busIdLegacy, "0000:E5:00.0");
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
}

/* ---- knobs ---- */

static const char knobs[] = "# every knob of docs/fakenvml.md\n"
                            "jitter off\n"
                            "node 7\n"
                            "driver 550.54.15\n"
                            "gpu 0 power 650\n"
                            "gpu 0 util 97\n"
                            "gpu 0 recovery_action 2   # node reboot\n"
                            "gpu 0 pcie_replay 5\n"
                            "gpu 0 pcie_gen 4\n"
                            "gpu 0 pcie_width 8\n"
                            "gpu 1 ecc dbe_volatile 2\n"
                            "gpu 1 ecc sbe_volatile 10\n"
                            "gpu 1 ecc dbe_aggregate 3\n"
                            "gpu 1 ecc sbe_aggregate 12\n"
                            "gpu 2 remap pending 1\n"
                            "gpu 2 remap failure 1\n"
                            "gpu 2 remap correctable 4\n"
                            "gpu 2 remap uncorrectable 1\n"
                            "gpu 3 not_supported power\n"
                            "gpu 3 not_supported nvmlDeviceGetTotalEnergyConsumption\n"
                            "gpu 3 fail ecc 999\n"
                            "gpu 3 not_supported memory_temp\n"
                            "gpu 3 mem_used 1000\n"
                            "gpu 4 retired sbe 2\n"
                            "gpu 4 retired dbe 63\n"
                            "gpu 4 retired pending 1\n"
                            "gpu 5 throttle 0x20\n"
                            "gpu 5 sm_clock 1200\n"
                            "gpu 6 temp 92\n"
                            "gpu 6 mem_temp 90\n"
                            "gpu 7 nvlink 3 down\n"
                            "gpu 7 nvlink 3 crc_flit 150\n"
                            "gpu 7 nvlink 3 crc_data 9\n"
                            "gpu 7 nvlink 3 replay 2\n"
                            "gpu 7 nvlink 3 recovery 1\n"
                            "gpu all not_supported nvmlDeviceGetRetiredPagesPendingStatus\n"
                            "this line is not understood\n"
                            "gpu 9 frobnicate 1\n"
                            "gpu 99 lost\n";

static void test_knobs(void **unused)
{
    (void)unused;
    init_with(knobs);
    unsigned v, n;
    unsigned long long c;
    char buf[96];

    assert_int_equal(F.count(&n), NVML_SUCCESS);
    assert_int_equal(n, 8);
    assert_int_equal(F.driver_version(buf, sizeof(buf)), NVML_SUCCESS);
    assert_string_equal(buf, "550.54.15");
    assert_int_equal(F.uuid(dev(2), buf, sizeof(buf)), NVML_SUCCESS);
    assert_string_equal(buf, "GPU-00000002-0000-0000-0007-000000000002");

    /* gpu 0: power, util, recovery action, PCIe. */
    nvmlDevice_t g0 = dev(0);
    nvmlUtilization_t u;
    assert_int_equal(F.power(g0, &v), NVML_SUCCESS);
    assert_int_equal(v, 650000);
    assert_int_equal(F.util(g0, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 97);
    assert_int_equal(F.pcie_replay(g0, &v), NVML_SUCCESS);
    assert_int_equal(v, 5);
    assert_int_equal(F.pcie_gen(g0, &v), NVML_SUCCESS);
    assert_int_equal(v, 4);
    assert_int_equal(F.pcie_width(g0, &v), NVML_SUCCESS);
    assert_int_equal(v, 8);
    nvmlFieldValue_t fv[3] = {{.fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION},
                              {.fieldId = NVML_FI_DEV_MEMORY_TEMP},
                              {.fieldId = 1234}};
    assert_int_equal(F.fields(g0, 3, fv), NVML_SUCCESS);
    assert_int_equal(fv[0].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(fv[0].valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
    assert_int_equal(fv[0].value.uiVal, NVML_GPU_RECOVERY_ACTION_NODE_REBOOT);
    assert_int_equal(fv[1].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(fv[2].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(F.fields(g0, 0, fv), NVML_ERROR_INVALID_ARGUMENT);

    /* gpu 1: ECC counters. */
    nvmlDevice_t g1 = dev(1);
    assert_int_equal(F.ecc(g1, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &c), 0);
    assert_int_equal(c, 2);
    assert_int_equal(F.ecc(g1, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &c), 0);
    assert_int_equal(c, 10);
    assert_int_equal(F.ecc(g1, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &c), 0);
    assert_int_equal(c, 3);
    assert_int_equal(F.ecc(g1, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, &c), 0);
    assert_int_equal(c, 12);
    assert_int_equal(F.ecc(g1, 5, NVML_AGGREGATE_ECC, &c), NVML_ERROR_INVALID_ARGUMENT);

    /* gpu 2: row remapping. */
    unsigned corr, unc, pend, fail;
    assert_int_equal(F.remap(dev(2), &corr, &unc, &pend, &fail), NVML_SUCCESS);
    assert_int_equal(corr, 4);
    assert_int_equal(unc, 1);
    assert_int_equal(pend, 1);
    assert_int_equal(fail, 1);

    /* gpu 3: injected errors, per function and per field. */
    nvmlDevice_t g3 = dev(3);
    assert_int_equal(F.power(g3, &v), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(F.energy(g3, &c), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(F.ecc(g3, 0, 0, &c), NVML_ERROR_UNKNOWN);
    assert_int_equal(F.temp(g3, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_int_equal(F.fields(g3, 3, fv), NVML_SUCCESS);
    assert_int_equal(fv[0].nvmlReturn, NVML_SUCCESS);
    assert_int_equal(fv[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
    assert_int_equal(F.memory(g3, &mem), NVML_SUCCESS);
    assert_int_equal(mem.used, 1000 * MIB);

    /* gpu 4: retired pages, with the two-call size protocol. */
    nvmlDevice_t g4 = dev(4);
    unsigned pages = 0;
    unsigned long long addr[64];
    assert_int_equal(F.retired(g4, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &pages, NULL),
                     NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(pages, 63);
    pages = 64;
    assert_int_equal(F.retired(g4, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &pages, addr),
                     NVML_SUCCESS);
    assert_int_equal(pages, 63);
    assert_true(addr[0] != 0 && addr[0] != addr[62]);
    pages = 64;
    assert_int_equal(
        F.retired(g4, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &pages, addr),
        NVML_SUCCESS);
    assert_int_equal(pages, 2);
    int pending;
    assert_int_equal(F.retired_pending(g4, &pending), NVML_ERROR_NOT_SUPPORTED); /* gpu all */

    /* gpu 5: thermal slowdown with a lowered clock, and violation time that accumulates. */
    nvmlDevice_t g5 = dev(5);
    unsigned long long r;
    assert_int_equal(F.reasons(g5, &r), NVML_SUCCESS);
    assert_int_equal(r, nvmlClocksEventReasonSwThermalSlowdown);
    assert_int_equal(F.throttle(g5, &r), NVML_SUCCESS);
    assert_int_equal(r, nvmlClocksEventReasonSwThermalSlowdown);
    assert_int_equal(F.clock(g5, NVML_CLOCK_SM, &v), NVML_SUCCESS);
    assert_int_equal(v, 1200);
    tu_sleep_ms(100);
    nvmlViolationTime_t vt;
    assert_int_equal(F.violation(g5, NVML_PERF_POLICY_THERMAL, &vt), NVML_SUCCESS);
    assert_true(vt.violationTime >= 50000000ull);
    assert_true(vt.referenceTime > 0);
    assert_int_equal(F.violation(g5, NVML_PERF_POLICY_POWER, &vt), NVML_SUCCESS);
    assert_int_equal(vt.violationTime, 0);

    /* gpu 6: heat. */
    assert_int_equal(F.temp(dev(6), NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_int_equal(v, 92);
    nvmlFieldValue_t mt = {.fieldId = NVML_FI_DEV_MEMORY_TEMP};
    assert_int_equal(F.fields(dev(6), 1, &mt), NVML_SUCCESS);
    assert_int_equal(mt.value.uiVal, 90);

    /* gpu 7: one NVLink down with errors; its neighbours untouched. */
    nvmlDevice_t g7 = dev(7);
    int active;
    assert_int_equal(F.nvlink_state(g7, 3, &active), NVML_SUCCESS);
    assert_int_equal(active, NVML_FEATURE_DISABLED);
    assert_int_equal(F.nvlink_state(g7, 2, &active), NVML_SUCCESS);
    assert_int_equal(active, NVML_FEATURE_ENABLED);
    assert_int_equal(F.nvlink_err(g7, 3, NVML_NVLINK_ERROR_DL_CRC_FLIT, &c), NVML_SUCCESS);
    assert_int_equal(c, 150);
    assert_int_equal(F.nvlink_err(g7, 3, NVML_NVLINK_ERROR_DL_CRC_DATA, &c), NVML_SUCCESS);
    assert_int_equal(c, 9);
    assert_int_equal(F.nvlink_err(g7, 3, NVML_NVLINK_ERROR_DL_REPLAY, &c), NVML_SUCCESS);
    assert_int_equal(c, 2);
    assert_int_equal(F.nvlink_err(g7, 3, NVML_NVLINK_ERROR_DL_RECOVERY, &c), NVML_SUCCESS);
    assert_int_equal(c, 1);
    assert_int_equal(F.nvlink_err(g7, 4, NVML_NVLINK_ERROR_DL_CRC_FLIT, &c), NVML_SUCCESS);
    assert_int_equal(c, 0);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
}

static void test_init_fail(void **unused)
{
    (void)unused;
    unsigned n;
    tu_replace_file(state_path, "init_fail 9\n");
    assert_int_equal(F.init(), NVML_ERROR_DRIVER_NOT_LOADED);
    assert_int_equal(F.count(&n), NVML_ERROR_UNINITIALIZED);
    tu_replace_file(state_path, "gpu 0 util 10\n");
    assert_int_equal(F.init(), NVML_SUCCESS);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
}

/* A GPU falls off the bus while NVML is in use, and comes back when the line goes. */
static void test_gpu_lost_live(void **unused)
{
    (void)unused;
    init_with("");
    nvmlDevice_t g3 = dev(3);
    unsigned v, n;
    assert_int_equal(F.temp(g3, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);

    tu_fakenvml_change(state_path, "gpu 3 lost\n");
    assert_int_equal(F.count(&n), NVML_SUCCESS);
    assert_int_equal(n, 8);
    assert_ptr_equal(dev(3), g3);
    char buf[96];
    nvmlUtilization_t u;
    nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
    nvmlFieldValue_t fv = {.fieldId = NVML_FI_DEV_MEMORY_TEMP};
    assert_int_equal(F.temp(g3, NVML_TEMPERATURE_GPU, &v), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(F.name(g3, buf, sizeof(buf)), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(F.util(g3, &u), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(F.memory(g3, &mem), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(F.fields(g3, 1, &fv), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(F.temp(dev(2), NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);

    tu_fakenvml_change(state_path, "count 2\n");
    assert_int_equal(F.temp(g3, NVML_TEMPERATURE_GPU, &v), NVML_ERROR_GPU_IS_LOST);
    tu_fakenvml_change(state_path, "");
    assert_int_equal(F.temp(g3, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
}

/* ---- Xid events ---- */

struct waiter {
    nvmlEventSet_t set;
    unsigned timeout_ms;
    nvmlReturn_t rc;
    nvmlEventData_t data;
    uint64_t end_ns; /* hn_mono_ns() when set_wait returned */
};

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;
    w->rc = F.set_wait(w->set, &w->data, w->timeout_ms);
    w->end_ns = hn_mono_ns();
    return NULL;
}

static void test_xid_once(void **unused)
{
    (void)unused;
    init_with("gpu 0 xid 79 id=1\ngpu 1 xid 48 id=1   # gpu 1 is not registered\n");
    nvmlEventSet_t set;
    nvmlEventData_t data;
    assert_int_equal(F.set_create(&set), NVML_SUCCESS);
    assert_int_equal(F.register_events(dev(0), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
    assert_int_equal(F.register_events(dev(0), nvmlEventTypeXidCriticalError, NULL),
                     NVML_ERROR_INVALID_ARGUMENT);

    assert_int_equal(F.set_wait(set, &data, 1000), NVML_SUCCESS);
    assert_ptr_equal(data.device, dev(0));
    assert_int_equal(data.eventType, nvmlEventTypeXidCriticalError);
    assert_int_equal(data.eventData, 79);

    /* Delivered once: the next wait really waits, then times out. */
    uint64_t t0 = hn_mono_ns();
    assert_int_equal(F.set_wait(set, &data, 200), NVML_ERROR_TIMEOUT);
    assert_true(hn_mono_ns() - t0 >= 190 * 1000000ull);
    assert_int_equal(F.set_wait(set, &data, 0), NVML_ERROR_TIMEOUT);

    /* An Xid added while another thread waits arrives within a poll or two (50 ms each; the
     * bound leaves room for a busy machine), not at the wait's timeout; the old one does not
     * come back; collection calls go on meanwhile. */
    struct waiter w = {.set = set, .timeout_ms = 10000};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
    tu_sleep_ms(150);
    unsigned v;
    for (int k = 0; k < 20; k++)
        assert_int_equal(F.power(dev(k % 8), &v), NVML_SUCCESS);
    tu_replace_file(state_path, "gpu 0 xid 79 id=1\ngpu 0 xid 94 id=2\ngpu 1 xid 48 id=1\n");
    uint64_t replaced = hn_mono_ns();
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(w.rc, NVML_SUCCESS);
    assert_int_equal(w.data.eventData, 94);
    assert_true(w.end_ns < replaced + 3000 * 1000000ull);
    assert_int_equal(F.set_wait(set, &data, 100), NVML_ERROR_TIMEOUT);

    /* Registering GPU 1 later still delivers its pending Xid, once. */
    assert_int_equal(F.register_events(dev(1), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
    assert_int_equal(F.set_wait(set, &data, 500), NVML_SUCCESS);
    assert_ptr_equal(data.device, dev(1));
    assert_int_equal(data.eventData, 48);
    assert_int_equal(F.set_wait(set, &data, 100), NVML_ERROR_TIMEOUT);

    assert_int_equal(F.set_free(set), NVML_SUCCESS);
    assert_int_equal(F.set_free(set), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(F.set_wait(set, &data, 10), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);

    /* Still once across a re-init of the library. */
    assert_int_equal(F.init(), NVML_SUCCESS);
    assert_int_equal(F.set_create(&set), NVML_SUCCESS);
    assert_int_equal(F.register_events(dev(0), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
    assert_int_equal(F.set_wait(set, &data, 100), NVML_ERROR_TIMEOUT);
    assert_int_equal(F.shutdown(), NVML_SUCCESS); /* frees the set */
}

/* A lost GPU reports its Xid (79, fallen off the bus) even though every query fails. */
static void test_xid_on_lost_gpu(void **unused)
{
    (void)unused;
    init_with("");
    nvmlEventSet_t set;
    nvmlEventData_t data;
    assert_int_equal(F.set_create(&set), NVML_SUCCESS);
    for (unsigned i = 0; i < 8; i++)
        assert_int_equal(F.register_events(dev(i), nvmlEventTypeXidCriticalError, set),
                         NVML_SUCCESS);
    tu_fakenvml_change(state_path, "gpu 5 lost\ngpu 5 xid 79 id=100\n");
    assert_int_equal(F.set_wait(set, &data, 500), NVML_SUCCESS);
    assert_ptr_equal(data.device, dev(5));
    assert_int_equal(data.eventData, 79);
    unsigned v;
    assert_int_equal(F.power(dev(5), &v), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(F.register_events(dev(5), nvmlEventTypeXidCriticalError, set),
                     NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
}

/* The benchmark hook: calls and CPU time inside the library, only when asked for. */
static void test_account(void **unused)
{
    (void)unused;
    void (*stats)(unsigned long long *, unsigned long long *);
    void *sym = dlsym(F.dl, "hn_fakenvml_account");
    assert_non_null(sym);
    memcpy(&stats, &sym, sizeof(sym));
    unsigned long long calls0, ns0, calls1, ns1;
    unsigned v;

    setenv("HN_FAKENVML_ACCOUNT", "1", 1);
    init_with("");
    unsetenv("HN_FAKENVML_ACCOUNT");
    stats(&calls0, &ns0);
    for (int k = 0; k < 100; k++)
        assert_int_equal(F.power(dev(k % 8), &v), NVML_SUCCESS);
    stats(&calls1, &ns1);
    assert_int_equal(calls1 - calls0, 200); /* 100 handles + 100 readings */
    assert_true(ns1 > ns0 && ns1 - ns0 < 1000000000ull);
    assert_int_equal(F.shutdown(), NVML_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_agent_symbols_resolve, test_teardown),
        cmocka_unit_test_teardown(test_uninitialized, test_teardown),
        cmocka_unit_test_teardown(test_defaults, test_teardown),
        cmocka_unit_test_teardown(test_live_values, test_teardown),
        cmocka_unit_test_teardown(test_profiles_match_captures, test_teardown),
        cmocka_unit_test_teardown(test_count_past_capture, test_teardown),
        cmocka_unit_test_teardown(test_knobs, test_teardown),
        cmocka_unit_test_teardown(test_init_fail, test_teardown),
        cmocka_unit_test_teardown(test_gpu_lost_live, test_teardown),
        cmocka_unit_test_teardown(test_xid_once, test_teardown),
        cmocka_unit_test_teardown(test_xid_on_lost_gpu, test_teardown),
        cmocka_unit_test_teardown(test_account, test_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
