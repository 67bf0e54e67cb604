/*
 * state.c - parser of the fake NVML state file; see state.h and docs/fakenvml.md.
 *
 * A line is a few blank-separated words; "#" starts a comment. Global lines set the model and
 * library-wide behaviour, "gpu N|all KNOB ARGS" lines set one knob of one GPU (or of every
 * slot). Each knob is a row in gpu_knobs[]: adding one is adding a row and a handler.
 */
#include "state.h"

#include "common/util.h"

#include <stdio.h>
#include <string.h>

#define MAX_WORDS 8
#define MAX_LINE  256

static const char *const fn_names[HN_FAKE_FN_COUNT][2] = {
    [HN_FAKE_FN_NAME] = {"name", "nvmlDeviceGetName"},
    [HN_FAKE_FN_UUID] = {"uuid", "nvmlDeviceGetUUID"},
    [HN_FAKE_FN_PCI_INFO] = {"pci_info", "nvmlDeviceGetPciInfo_v3"},
    [HN_FAKE_FN_MINOR] = {"minor_number", "nvmlDeviceGetMinorNumber"},
    [HN_FAKE_FN_UTILIZATION] = {"utilization", "nvmlDeviceGetUtilizationRates"},
    [HN_FAKE_FN_ENCODER] = {"encoder", "nvmlDeviceGetEncoderUtilization"},
    [HN_FAKE_FN_DECODER] = {"decoder", "nvmlDeviceGetDecoderUtilization"},
    [HN_FAKE_FN_CLOCK] = {"clock", "nvmlDeviceGetClockInfo"},
    [HN_FAKE_FN_POWER] = {"power", "nvmlDeviceGetPowerUsage"},
    [HN_FAKE_FN_ENERGY] = {"energy", "nvmlDeviceGetTotalEnergyConsumption"},
    [HN_FAKE_FN_TEMPERATURE] = {"temperature", "nvmlDeviceGetTemperature"},
    [HN_FAKE_FN_TEMPERATURE_THRESHOLD] = {"temperature_threshold",
                                          "nvmlDeviceGetTemperatureThreshold"},
    [HN_FAKE_FN_MEMORY] = {"memory", "nvmlDeviceGetMemoryInfo_v2"},
    [HN_FAKE_FN_ECC] = {"ecc", "nvmlDeviceGetTotalEccErrors"},
    [HN_FAKE_FN_RETIRED_PAGES] = {"retired_pages", "nvmlDeviceGetRetiredPages"},
    [HN_FAKE_FN_RETIRED_PENDING] = {"retired_pending", "nvmlDeviceGetRetiredPagesPendingStatus"},
    [HN_FAKE_FN_REMAPPED_ROWS] = {"remapped_rows", "nvmlDeviceGetRemappedRows"},
    [HN_FAKE_FN_CLOCKS_EVENT_REASONS] = {"clocks_event_reasons",
                                         "nvmlDeviceGetCurrentClocksEventReasons"},
    [HN_FAKE_FN_PCIE_REPLAY] = {"pcie_replay", "nvmlDeviceGetPcieReplayCounter"},
    [HN_FAKE_FN_PCIE_GEN] = {"pcie_gen", "nvmlDeviceGetCurrPcieLinkGeneration"},
    [HN_FAKE_FN_PCIE_WIDTH] = {"pcie_width", "nvmlDeviceGetCurrPcieLinkWidth"},
    [HN_FAKE_FN_NVLINK_STATE] = {"nvlink_state", "nvmlDeviceGetNvLinkState"},
    [HN_FAKE_FN_NVLINK_ERRORS] = {"nvlink_errors", "nvmlDeviceGetNvLinkErrorCounter"},
    [HN_FAKE_FN_VIOLATION] = {"violation", "nvmlDeviceGetViolationStatus"},
    [HN_FAKE_FN_FIELD_VALUES] = {"field_values", "nvmlDeviceGetFieldValues"},
    [HN_FAKE_FN_REGISTER_EVENTS] = {"register_events", "nvmlDeviceRegisterEvents"},
    [HN_FAKE_FN_FIELD_MEMORY_TEMP] = {"memory_temp", "NVML_FI_DEV_MEMORY_TEMP"},
    [HN_FAKE_FN_FIELD_RECOVERY_ACTION] = {"recovery_action", "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION"},
};

const char *hn_fake_fn_name(enum hn_fake_fn fn)
{
    return (unsigned)fn < HN_FAKE_FN_COUNT ? fn_names[fn][0] : "?";
}

static int find_fn(const char *s)
{
    if (strcmp(s, "nvmlDeviceGetCurrentClocksThrottleReasons") == 0)
        return HN_FAKE_FN_CLOCKS_EVENT_REASONS;
    for (int i = 0; i < HN_FAKE_FN_COUNT; i++)
        if (strcmp(s, fn_names[i][0]) == 0 || strcmp(s, fn_names[i][1]) == 0)
            return i;
    return -1;
}

/* A decimal number no larger than max (base 0 also takes 0x... for bit masks). */
static int num_base(const char *s, int base, unsigned long long max, unsigned long long *out)
{
    uint64_t v;
    if (hn_parse_u64(s, base, &v) < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

static int num(const char *s, unsigned long long max, unsigned long long *out)
{
    return num_base(s, 10, max, out);
}

static void gpu_defaults(struct hn_fake_gpu *g)
{
    memset(g, 0, sizeof(*g));
    g->util = -1;
    g->power_w = -1;
    g->temp = -1;
    g->mem_temp = -1;
    g->sm_clock = -1;
    g->pcie_gen = -1;
    g->pcie_width = -1;
    g->mem_used_mib = -1;
}

void hn_fake_state_defaults(struct hn_fake_state *st)
{
    memset(st, 0, sizeof(*st));
    st->profile = hn_fake_profile_default();
    st->count = st->profile->count;
    st->load = 85;
    st->jitter = 1;
    for (unsigned i = 0; i < HN_FAKE_MAX_GPUS; i++)
        gpu_defaults(&st->gpu[i]);
}

/* ---- gpu knobs: each returns NULL or why the line is unusable ---- */

typedef const char *(*knob_fn)(struct hn_fake_state *st, unsigned gpu, char **w, int n);

static const char *knob_lost(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    (void)w;
    if (n != 0)
        return "lost takes no argument";
    st->gpu[gpu].lost = 1;
    return NULL;
}

static const char *knob_xid(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    unsigned long long code, id;
    if (n != 2 || num(w[0], 0xffffffffu, &code) < 0 || strncmp(w[1], "id=", 3) != 0 ||
        num(w[1] + 3, ~0ull, &id) < 0)
        return "expected: xid CODE id=ID";
    if (st->nxid >= HN_FAKE_MAX_XIDS)
        return "too many xid lines";
    st->xid[st->nxid++] = (struct hn_fake_xid){.gpu = gpu, .code = (unsigned)code, .id = id};
    return NULL;
}

static const char *knob_ecc(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    static const struct {
        const char *name;
        int type, counter;
    } kinds[] = {
        {"sbe_volatile", NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC},
        {"dbe_volatile", NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC},
        {"sbe_aggregate", NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC},
        {"dbe_aggregate", NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC},
    };
    unsigned long long v;
    if (n == 2 && num(w[1], ~0ull, &v) == 0)
        for (size_t i = 0; i < HN_ARRAY_LEN(kinds); i++)
            if (strcmp(w[0], kinds[i].name) == 0) {
                st->gpu[gpu].ecc[kinds[i].type][kinds[i].counter] = v;
                return NULL;
            }
    return "expected: ecc sbe_volatile|dbe_volatile|sbe_aggregate|dbe_aggregate N";
}

static const char *knob_remap(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    struct hn_fake_gpu *g = &st->gpu[gpu];
    unsigned long long v;
    if (n != 2 || num(w[1], 0xffffffffu, &v) < 0)
        return "expected: remap correctable|uncorrectable|pending|failure N";
    if (strcmp(w[0], "correctable") == 0)
        g->remap_corr = (unsigned)v;
    else if (strcmp(w[0], "uncorrectable") == 0)
        g->remap_unc = (unsigned)v;
    else if (strcmp(w[0], "pending") == 0 && v <= 1)
        g->remap_pending = (unsigned)v;
    else if (strcmp(w[0], "failure") == 0 && v <= 1)
        g->remap_failure = (unsigned)v;
    else
        return "expected: remap correctable|uncorrectable N, remap pending|failure 0|1";
    return NULL;
}

static const char *knob_retired(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    struct hn_fake_gpu *g = &st->gpu[gpu];
    unsigned long long v;
    if (n != 2 || num(w[1], HN_FAKE_MAX_PAGES, &v) < 0)
        return "expected: retired sbe|dbe N (N <= 1024), retired pending 0|1";
    if (strcmp(w[0], "sbe") == 0)
        g->retired[NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS] = (unsigned)v;
    else if (strcmp(w[0], "dbe") == 0)
        g->retired[NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR] = (unsigned)v;
    else if (strcmp(w[0], "pending") == 0 && v <= 1)
        g->retired_pending = (int)v;
    else
        return "expected: retired sbe|dbe N, retired pending 0|1";
    return NULL;
}

static const char *knob_throttle(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    unsigned long long v;
    if (n != 1 || num_base(w[0], 0, ~0ull, &v) < 0)
        return "expected: throttle MASK (e.g. 0x20)";
    st->gpu[gpu].has_throttle = 1;
    st->gpu[gpu].throttle = v;
    return NULL;
}

/* Knobs that set one int field within [min, max]. */
static const struct {
    const char *name;
    size_t off;
    int is_ll;
    unsigned long long max;
} int_knobs[] = {
    {"util", offsetof(struct hn_fake_gpu, util), 0, 100},
    {"power", offsetof(struct hn_fake_gpu, power_w), 0, 5000},
    {"temp", offsetof(struct hn_fake_gpu, temp), 0, 200},
    {"mem_temp", offsetof(struct hn_fake_gpu, mem_temp), 0, 200},
    {"sm_clock", offsetof(struct hn_fake_gpu, sm_clock), 0, 10000},
    {"pcie_gen", offsetof(struct hn_fake_gpu, pcie_gen), 0, 7},
    {"pcie_width", offsetof(struct hn_fake_gpu, pcie_width), 0, 32},
    {"mem_used", offsetof(struct hn_fake_gpu, mem_used_mib), 1, 1u << 24},
    {"recovery_action", offsetof(struct hn_fake_gpu, recovery_action), 0,
     NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET},
    {"pcie_replay", offsetof(struct hn_fake_gpu, pcie_replay), 0, 0x7fffffff},
};

static const char *knob_int(struct hn_fake_state *st, unsigned gpu, const char *name, char **w,
                            int n)
{
    for (size_t i = 0; i < HN_ARRAY_LEN(int_knobs); i++) {
        if (strcmp(name, int_knobs[i].name) != 0)
            continue;
        unsigned long long v;
        if (n != 1 || num(w[0], int_knobs[i].max, &v) < 0)
            return "expected one number in range";
        char *field = (char *)&st->gpu[gpu] + int_knobs[i].off;
        if (int_knobs[i].is_ll) {
            long long ll = (long long)v;
            memcpy(field, &ll, sizeof(ll));
        } else {
            int iv = (int)v;
            memcpy(field, &iv, sizeof(iv));
        }
        return NULL;
    }
    return "unknown gpu knob";
}

static const char *knob_nvlink(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    static const char *const counters[] = {
        [NVML_NVLINK_ERROR_DL_REPLAY] = "replay",
        [NVML_NVLINK_ERROR_DL_RECOVERY] = "recovery",
        [NVML_NVLINK_ERROR_DL_CRC_FLIT] = "crc_flit",
        [NVML_NVLINK_ERROR_DL_CRC_DATA] = "crc_data",
    };
    struct hn_fake_gpu *g = &st->gpu[gpu];
    unsigned long long link, v;
    if (n < 2 || num(w[0], HN_FAKE_MAX_LINKS - 1, &link) < 0)
        return "expected: nvlink LINK down|up|replay|recovery|crc_flit|crc_data [N]";
    if (n == 2 && strcmp(w[1], "down") == 0) {
        g->nvlink_down |= 1u << link;
        return NULL;
    }
    if (n == 2 && strcmp(w[1], "up") == 0) {
        g->nvlink_down &= ~(1u << link);
        return NULL;
    }
    if (n == 3 && num(w[2], ~0ull, &v) == 0)
        for (size_t i = 0; i < HN_ARRAY_LEN(counters); i++)
            if (strcmp(w[1], counters[i]) == 0) {
                g->nvlink_err[link][i] = v;
                return NULL;
            }
    return "expected: nvlink LINK down|up, or nvlink LINK replay|recovery|crc_flit|crc_data N";
}

static const char *knob_fail(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    unsigned long long code;
    int fn = n == 2 ? find_fn(w[0]) : -1;
    if (fn < 0 || num(w[1], 0x7fffffff, &code) < 0 || code == 0)
        return "expected: fail FUNCTION CODE (a known function, CODE > 0)";
    st->gpu[gpu].fail[fn] = (nvmlReturn_t)code;
    return NULL;
}

static const char *knob_not_supported(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    int fn = n == 1 ? find_fn(w[0]) : -1;
    if (fn < 0)
        return "expected: not_supported FUNCTION (see docs/fakenvml.md)";
    st->gpu[gpu].fail[fn] = NVML_ERROR_NOT_SUPPORTED;
    return NULL;
}

static const struct {
    const char *name;
    knob_fn fn;
} gpu_knobs[] = {
    {"lost", knob_lost},     {"xid", knob_xid},         {"ecc", knob_ecc},
    {"remap", knob_remap},   {"retired", knob_retired}, {"throttle", knob_throttle},
    {"nvlink", knob_nvlink}, {"fail", knob_fail},       {"not_supported", knob_not_supported},
};

static const char *apply_gpu_one(struct hn_fake_state *st, unsigned gpu, char **w, int n)
{
    for (size_t i = 0; i < HN_ARRAY_LEN(gpu_knobs); i++)
        if (strcmp(w[0], gpu_knobs[i].name) == 0)
            return gpu_knobs[i].fn(st, gpu, w + 1, n - 1);
    return knob_int(st, gpu, w[0], w + 1, n - 1);
}

/* "gpu N|all KNOB ARGS": w[0] is the selector. */
static const char *apply_gpu(struct hn_fake_state *st, char **w, int n)
{
    unsigned long long gpu;
    if (n < 2)
        return "expected: gpu N|all KNOB [ARGS]";
    if (strcmp(w[0], "all") == 0) {
        for (unsigned i = 0; i < HN_FAKE_MAX_GPUS; i++) {
            const char *why = apply_gpu_one(st, i, w + 1, n - 1);
            if (why)
                return why;
        }
        return NULL;
    }
    if (num(w[0], HN_FAKE_MAX_GPUS - 1, &gpu) < 0)
        return "gpu index must be 0..15 or all";
    return apply_gpu_one(st, (unsigned)gpu, w + 1, n - 1);
}

static const char *apply_global(struct hn_fake_state *st, char **w, int n, int *count_set)
{
    unsigned long long v;
    if (strcmp(w[0], "gpu") == 0)
        return apply_gpu(st, w + 1, n - 1);
    if (n != 2)
        return "unknown line";
    if (strcmp(w[0], "model") == 0) {
        const struct hn_fake_profile *p = hn_fake_profile_find(w[1]);
        if (!p)
            return "unknown model (h100, gb200, b200, gb300)";
        st->profile = p;
        return NULL;
    }
    if (strcmp(w[0], "count") == 0) {
        if (num(w[1], HN_FAKE_MAX_GPUS, &v) < 0)
            return "count must be 0..16";
        st->count = (unsigned)v;
        *count_set = 1;
        return NULL;
    }
    if (strcmp(w[0], "init_fail") == 0) {
        if (num(w[1], 0x7fffffff, &v) < 0)
            return "expected: init_fail CODE";
        st->init_fail = (nvmlReturn_t)v;
        return NULL;
    }
    if (strcmp(w[0], "load") == 0) {
        if (num(w[1], 100, &v) < 0)
            return "load must be 0..100";
        st->load = (unsigned)v;
        return NULL;
    }
    if (strcmp(w[0], "jitter") == 0) {
        if (strcmp(w[1], "on") != 0 && strcmp(w[1], "off") != 0)
            return "expected: jitter on|off";
        st->jitter = strcmp(w[1], "on") == 0;
        return NULL;
    }
    if (strcmp(w[0], "node") == 0) {
        if (num(w[1], 0xffff, &v) < 0)
            return "node must be 0..65535";
        st->node = (unsigned)v;
        return NULL;
    }
    if (strcmp(w[0], "driver") == 0) {
        if (hn_strlcpy(st->driver, w[1], sizeof(st->driver)) >= sizeof(st->driver))
            return "driver version too long";
        return NULL;
    }
    return "unknown line";
}

/* Splits line into blank-separated words, stopping at '#'. Returns the word count or -1. */
static int split(char *line, char **w)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (*p == '\0' || *p == '#')
            return n;
        if (n == MAX_WORDS)
            return -1;
        w[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '#')
            p++;
        if (*p == '#') {
            *p = '\0';
            return n;
        }
        if (*p)
            *p++ = '\0';
    }
}

int hn_fake_state_parse(struct hn_fake_state *st, char *text, const char *origin)
{
    int ignored = 0, count_set = 0, lineno = 0;
    char *line = text;

    hn_fake_state_defaults(st);
    while (line && *line) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;

        char copy[MAX_LINE];
        char *w[MAX_WORDS];
        const char *why = NULL;
        int n = 0;
        if (hn_strlcpy(copy, line, sizeof(copy)) >= sizeof(copy))
            why = "line too long";
        else if ((n = split(line, w)) < 0)
            why = "too many words";
        else if (n > 0)
            why = apply_global(st, w, n, &count_set);
        if (why) {
            (void)fprintf(stderr, "fakenvml: %s:%d: %s, ignored: %.80s\n", origin, lineno, why,
                          copy);
            ignored++;
        }
        line = next;
    }
    if (!count_set)
        st->count = st->profile->count;
    return ignored;
}
