#include "agent/gpu.h"

#include "agent/config.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Rendering table. Names, types and help texts of DCGM_FI_* follow dcgm-exporter's
 * default-counters.csv and DCGM's field list, so existing dashboards and alerts keep working.
 */
struct field_desc {
    const char *name;
    const char *help;
    enum hn_metric_type type;
};

static const struct field_desc fields[HN_F_COUNT] = {
    [HN_F_SM_CLOCK] = {"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", HN_GAUGE},
    [HN_F_MEM_CLOCK] = {"DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", HN_GAUGE},
    [HN_F_GPU_TEMP] = {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", HN_GAUGE},
    [HN_F_MEMORY_TEMP] = {"DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C).", HN_GAUGE},
    [HN_F_SLOWDOWN_TEMP] = {"DCGM_FI_DEV_SLOWDOWN_TEMP",
                            "Slowdown temperature threshold of the GPU (in C).", HN_GAUGE},
    [HN_F_SHUTDOWN_TEMP] = {"DCGM_FI_DEV_SHUTDOWN_TEMP",
                            "Shutdown temperature threshold of the GPU (in C).", HN_GAUGE},
    [HN_F_POWER] = {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", HN_GAUGE},
    [HN_F_ENERGY] = {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                     "Total energy consumption since boot (in mJ).", HN_COUNTER},
    [HN_F_PCIE_REPLAY] = {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.",
                          HN_COUNTER},
    [HN_F_PCIE_GEN] = {"DCGM_FI_DEV_PCIE_LINK_GEN", "PCIe current link generation.", HN_GAUGE},
    [HN_F_PCIE_WIDTH] = {"DCGM_FI_DEV_PCIE_LINK_WIDTH", "PCIe current link width (lanes).",
                         HN_GAUGE},
    [HN_F_GPU_UTIL] = {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", HN_GAUGE},
    [HN_F_MEM_COPY_UTIL] = {"DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", HN_GAUGE},
    [HN_F_ENC_UTIL] = {"DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %).", HN_GAUGE},
    [HN_F_DEC_UTIL] = {"DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %).", HN_GAUGE},
    [HN_F_XID] = {"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", HN_GAUGE},
    [HN_F_FB_FREE] = {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", HN_GAUGE},
    [HN_F_FB_USED] = {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", HN_GAUGE},
    [HN_F_FB_RESERVED] = {"DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).",
                          HN_GAUGE},
    [HN_F_ECC_SBE_VOL] = {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
                          "Total number of single-bit volatile ECC errors.", HN_COUNTER},
    [HN_F_ECC_DBE_VOL] = {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                          "Total number of double-bit volatile ECC errors.", HN_COUNTER},
    [HN_F_ECC_SBE_AGG] = {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
                          "Total number of single-bit persistent ECC errors.", HN_COUNTER},
    [HN_F_ECC_DBE_AGG] = {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
                          "Total number of double-bit persistent ECC errors.", HN_COUNTER},
    [HN_F_RETIRED_SBE] = {"DCGM_FI_DEV_RETIRED_SBE",
                          "Total number of retired pages due to single-bit errors.", HN_COUNTER},
    [HN_F_RETIRED_DBE] = {"DCGM_FI_DEV_RETIRED_DBE",
                          "Total number of retired pages due to double-bit errors.", HN_COUNTER},
    [HN_F_RETIRED_PENDING] = {"DCGM_FI_DEV_RETIRED_PENDING",
                              "Total number of pages pending retirement.", HN_COUNTER},
    [HN_F_REMAP_CORRECTABLE] = {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
                                "Number of remapped rows for correctable errors", HN_COUNTER},
    [HN_F_REMAP_UNCORRECTABLE] = {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                                  "Number of remapped rows for uncorrectable errors", HN_COUNTER},
    [HN_F_REMAP_PENDING] = {"DCGM_FI_DEV_ROW_REMAP_PENDING",
                            "Whether a row remap is pending (applied at the next GPU reset)",
                            HN_GAUGE},
    [HN_F_REMAP_FAILURE] = {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "Whether remapping of rows has failed",
                            HN_GAUGE},
    [HN_F_NVLINK_CRC_FLIT] = {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                              "Total number of NVLink flow-control CRC errors.", HN_COUNTER},
    [HN_F_NVLINK_CRC_DATA] = {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
                              "Total number of NVLink data CRC errors.", HN_COUNTER},
    [HN_F_NVLINK_REPLAY] = {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
                            "Total number of NVLink retries.", HN_COUNTER},
    [HN_F_NVLINK_RECOVERY] = {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
                              "Total number of NVLink recovery errors.", HN_COUNTER},
    [HN_F_CLOCK_REASONS] = {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                            "Current clock event (throttle) reasons, NVML bitmask.", HN_GAUGE},
    [HN_F_POWER_VIOLATION] = {"DCGM_FI_DEV_POWER_VIOLATION",
                              "Throttling duration due to power constraints (in us).", HN_COUNTER},
    [HN_F_THERMAL_VIOLATION] = {"DCGM_FI_DEV_THERMAL_VIOLATION",
                                "Throttling duration due to thermal constraints (in us).",
                                HN_COUNTER},
    [HN_F_RECOVERY_ACTION] = {"houston_gpu_recovery_action",
                              "GPU recovery action NVML asks for: 0 none, 1 GPU reset, 2 node "
                              "reboot, 3 drain peer-to-peer, 4 drain and reset.",
                              HN_GAUGE},
    [HN_F_NVLINKS_ACTIVE] = {"houston_gpu_nvlinks_active", "NVLinks of the GPU that are active.",
                             HN_GAUGE},
    [HN_F_GPU_UP] = {"houston_gpu_up", "1 if NVML answers for the GPU, 0 if it is lost.", HN_GAUGE},
    [HN_F_XID_EVENTS] = {"houston_gpu_xid_events_total",
                         "Xid events NVML delivered for the GPU since the agent started.",
                         HN_COUNTER},
};

static const struct field_desc link_fields[HN_L_COUNT] = {
    [HN_L_UP] = {"houston_gpu_nvlink_up", "1 if the NVLink is active, 0 if it is down.", HN_GAUGE},
    [HN_L_REPLAY] = {"houston_gpu_nvlink_replay_errors_total",
                     "NVLink data-link replay errors per link.", HN_COUNTER},
    [HN_L_RECOVERY] = {"houston_gpu_nvlink_recovery_errors_total",
                       "NVLink data-link recovery errors per link.", HN_COUNTER},
    [HN_L_CRC_FLIT] = {"houston_gpu_nvlink_crc_flit_errors_total",
                       "NVLink flow-control CRC errors per link.", HN_COUNTER},
    [HN_L_CRC_DATA] = {"houston_gpu_nvlink_crc_data_errors_total",
                       "NVLink data CRC errors per link.", HN_COUNTER},
};

/* Clock event reason bits and the names houston_gpu_clock_event_active uses for them. */
static const struct {
    unsigned long long bit;
    const char *name;
} reasons[] = {
    {nvmlClocksEventReasonGpuIdle, "gpu_idle"},
    {nvmlClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting"},
    {nvmlClocksEventReasonSwPowerCap, "sw_power_cap"},
    {nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown"},
    {nvmlClocksEventReasonSyncBoost, "sync_boost"},
    {nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
    {nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
    {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
};

#define OPEN_RETRY_NS (60ull * 1000000000ull)

/* Records the outcome of one NVML read into field f of g. Returns 1 when the GPU is lost so
 * the caller stops querying it this cycle. */
static int put(struct hn_gpu_set *s, struct hn_gpu *g, int f, nvmlReturn_t rc, double v)
{
    switch (rc) {
    case NVML_SUCCESS:
        g->v[f] = v;
        return 0;
    case NVML_ERROR_GPU_IS_LOST:
        g->lost = 1;
        return 1;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        if (!(s->unsupported_logged[g->index] & (1ull << f))) {
            s->unsupported_logged[g->index] |= 1ull << f;
            hn_info("gpu %u: %s is not supported (%s); not exported", g->index, fields[f].name,
                    hn_nvml_strerror(&s->nvml, rc));
        }
        return 0;
    default:
        g->nvml_errors++;
        s->cycle_errors++;
        if (!(s->error_logged[g->index] & (1ull << f))) {
            s->error_logged[g->index] |= 1ull << f;
            hn_warn("gpu %u: reading %s failed: %s (counted in houston_gpu_nvml_errors_total; "
                    "said once)",
                    g->index, fields[f].name, hn_nvml_strerror(&s->nvml, rc));
        }
        return 0;
    }
}

/*
 * dcgm-exporter's label names (UUID, modelName, Hostname) are kept for DCGM_* series so that
 * its dashboards work; houston's own series use snake_case names, as Prometheus' linter asks,
 * with the same values, and share gpu, pci_bus_id and device for joins.
 */
void hn_gpus_format_labels(const struct hn_gpu_set *s, struct hn_gpu *g)
{
    static const char *const dcgm[] = {"gpu",    "UUID",      "pci_bus_id",
                                       "device", "modelName", "Hostname"};
    static const char *const snake[] = {"gpu",    "uuid",       "pci_bus_id",
                                        "device", "model_name", "hostname"};
    char idx[16], dev[32];
    snprintf(idx, sizeof(idx), "%u", g->index);
    snprintf(dev, sizeof(dev), "nvidia%u", g->index);
    const char *values[] = {idx, g->uuid, g->pci_bus_id, dev, g->name, s->hostname};
    size_t len = 0, hlen = 0;
    g->labels[0] = g->hlabels[0] = '\0';
    for (size_t i = 0; i < HN_ARRAY_LEN(values); i++) {
        hn_expo_label(g->labels, sizeof(g->labels), &len, dcgm[i], values[i]);
        hn_expo_label(g->hlabels, sizeof(g->hlabels), &hlen, snake[i], values[i]);
    }
    hn_expo_label(g->labels, sizeof(g->labels), &len, "DCGM_FI_DRIVER_VERSION", s->driver);
}

/* Reads the identity of GPU i: handle, UUID, name, PCI bus id, NVLink count. Values and Xid
 * counts survive a second discovery (a GPU that comes back). */
static void discover(struct hn_gpu_set *s, unsigned i)
{
    const struct hn_nvml *n = &s->nvml;
    struct hn_gpu *g = &s->gpus[i];
    g->index = i;
    g->identified = 0;
    if (!g->dev) {
        nvmlReturn_t rc = n->ops.device_get_handle_by_index(i, &g->dev);
        if (rc != NVML_SUCCESS) {
            g->dev = NULL;
            g->lost = 1;
        }
    }
    int ok = g->dev != NULL;
    ok &= HN_NVML(n, device_get_uuid, g->dev, g->uuid, sizeof(g->uuid)) == NVML_SUCCESS;
    ok &= HN_NVML(n, device_get_name, g->dev, g->name, sizeof(g->name)) == NVML_SUCCESS;
    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof(pci));
    ok &= HN_NVML(n, device_get_pci_info, g->dev, &pci) == NVML_SUCCESS;
    if (ok) {
        hn_strlcpy(g->pci_bus_id, pci.busId, sizeof(g->pci_bus_id));
        g->identified = 1;
    } else {
        hn_strlcpy(g->uuid, "unknown", sizeof(g->uuid));
        hn_strlcpy(g->name, "unknown", sizeof(g->name));
        hn_strlcpy(g->pci_bus_id, "unknown", sizeof(g->pci_bus_id));
    }
    g->nlinks = 0;
    for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
        int active;
        for (int f = 0; f < HN_L_COUNT; f++)
            g->link[l][f] = NAN;
        if (HN_NVML(n, device_get_nvlink_state, g->dev, l, &active) == NVML_SUCCESS)
            g->nlinks = l + 1;
    }
    hn_gpus_format_labels(s, g);
}

/* Registers GPU g for Xid events on the running event set. */
static void register_events(struct hn_gpu_set *s, struct hn_gpu *g)
{
    if (!s->thread_running || g->registered || !g->dev)
        return;
    nvmlReturn_t rc =
        s->nvml.ops.device_register_events(g->dev, nvmlEventTypeXidCriticalError, s->events);
    if (rc == NVML_SUCCESS)
        g->registered = 1;
    else
        hn_info("gpu %u: no Xid events from NVML: %s", g->index, hn_nvml_strerror(&s->nvml, rc));
}

static int open_nvml(struct hn_gpu_set *s)
{
    char err[512];
    int rc = hn_nvml_open(&s->nvml, s->lib, err, sizeof(err));
    if (rc) {
        if (strcmp(err, s->open_error) != 0)
            hn_warn("gpu: %s; serving without GPU metrics, retrying every 60 s", err);
        hn_strlcpy(s->open_error, err, sizeof(s->open_error));
        s->next_open_ns = hn_mono_ns() + OPEN_RETRY_NS;
        return rc;
    }
    s->open = 1;
    s->open_error[0] = '\0';
    if (HN_NVML(&s->nvml, system_get_driver_version, s->driver, sizeof(s->driver)) != NVML_SUCCESS)
        hn_strlcpy(s->driver, "unknown", sizeof(s->driver));
    unsigned count = 0;
    nvmlReturn_t nrc = s->nvml.ops.device_get_count(&count);
    if (nrc != NVML_SUCCESS) {
        snprintf(err, sizeof(err), "nvmlDeviceGetCount_v2: %s", hn_nvml_strerror(&s->nvml, nrc));
        if (strcmp(err, s->open_error) != 0)
            hn_warn("gpu: %s; retrying every 60 s", err);
        hn_strlcpy(s->open_error, err, sizeof(s->open_error));
        hn_nvml_close(&s->nvml);
        s->open = 0;
        s->next_open_ns = hn_mono_ns() + OPEN_RETRY_NS;
        return -EIO;
    }
    if (count > HN_MAX_GPUS) {
        hn_warn("gpu: %u GPUs, only the first %d are collected", count, HN_MAX_GPUS);
        count = HN_MAX_GPUS;
    }
    s->count = count;
    for (unsigned i = 0; i < count; i++) {
        struct hn_gpu *g = &s->gpus[i];
        memset(g, 0, sizeof(*g));
        for (int f = 0; f < HN_F_COUNT; f++)
            g->v[f] = NAN;
        discover(s, i);
    }
    hn_info("gpu: NVML driver %s, %u GPUs", s->driver, count);
    return 0;
}

void hn_gpus_init(struct hn_gpu_set *s, const char *lib, const char *hostname)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    hn_strlcpy(s->lib, lib ? lib : "", sizeof(s->lib));
    hn_strlcpy(s->hostname, hostname, sizeof(s->hostname));
    open_nvml(s);
}

void hn_gpus_fini(struct hn_gpu_set *s)
{
    hn_gpus_events_stop(s);
    if (s->open)
        hn_nvml_close(&s->nvml);
    s->open = 0;
    pthread_mutex_destroy(&s->lock);
}

static void collect_links(struct hn_gpu_set *s, struct hn_gpu *g)
{
    const struct hn_nvml *n = &s->nvml;
    double tot[4] = {0, 0, 0, 0};
    int have[4] = {0, 0, 0, 0};
    static const int counters[4] = {NVML_NVLINK_ERROR_DL_REPLAY, NVML_NVLINK_ERROR_DL_RECOVERY,
                                    NVML_NVLINK_ERROR_DL_CRC_FLIT, NVML_NVLINK_ERROR_DL_CRC_DATA};
    static const int lf[4] = {HN_L_REPLAY, HN_L_RECOVERY, HN_L_CRC_FLIT, HN_L_CRC_DATA};
    static const int gf[4] = {HN_F_NVLINK_REPLAY, HN_F_NVLINK_RECOVERY, HN_F_NVLINK_CRC_FLIT,
                              HN_F_NVLINK_CRC_DATA};
    unsigned active = 0;
    for (unsigned l = 0; l < g->nlinks; l++) {
        int up = 0;
        nvmlReturn_t rc = HN_NVML(n, device_get_nvlink_state, g->dev, l, &up);
        if (rc == NVML_ERROR_GPU_IS_LOST) {
            g->lost = 1;
            return;
        }
        g->link[l][HN_L_UP] = rc == NVML_SUCCESS ? (up == NVML_FEATURE_ENABLED) : NAN;
        if (rc == NVML_SUCCESS && up == NVML_FEATURE_ENABLED)
            active++;
        for (int c = 0; c < 4; c++) {
            unsigned long long v = 0;
            rc = HN_NVML(n, device_get_nvlink_error_counter, g->dev, l, counters[c], &v);
            g->link[l][lf[c]] = rc == NVML_SUCCESS ? (double)v : NAN;
            if (rc == NVML_SUCCESS) {
                tot[c] += (double)v;
                have[c] = 1;
            }
        }
    }
    for (int c = 0; c < 4; c++)
        g->v[gf[c]] = have[c] ? tot[c] : NAN;
    g->v[HN_F_NVLINKS_ACTIVE] = g->nlinks ? (double)active : NAN;
}

/* Reads every field of one GPU. Stops at the first GPU_IS_LOST. */
static void collect_one(struct hn_gpu_set *s, struct hn_gpu *g)
{
    const struct hn_nvml *n = &s->nvml;
    nvmlDevice_t d = g->dev;
    unsigned u = 0, u2 = 0, u3 = 0, u4 = 0;
    unsigned long long ull = 0;
    nvmlReturn_t rc;
    int keep_xid = !isnan(g->v[HN_F_XID]);
    double xid = g->v[HN_F_XID];

    for (int f = 0; f < HN_F_COUNT; f++)
        g->v[f] = NAN;
    /* The last Xid stays visible while the GPU is lost: an Xid 79 is what makes it lost. */
    g->v[HN_F_XID] = keep_xid ? xid : 0;
    g->v[HN_F_XID_EVENTS] = (double)g->xid_events;
    g->lost = 0;
    if (!d) {
        g->lost = 1;
        return;
    }
#define TRY(f, call, value)                                                                        \
    do {                                                                                           \
        rc = (call);                                                                               \
        if (put(s, g, (f), rc, (double)(value)))                                                   \
            return;                                                                                \
    } while (0)

    TRY(HN_F_SM_CLOCK, HN_NVML(n, device_get_clock_info, d, NVML_CLOCK_SM, &u), u);
    TRY(HN_F_MEM_CLOCK, HN_NVML(n, device_get_clock_info, d, NVML_CLOCK_MEM, &u), u);
    TRY(HN_F_GPU_TEMP, HN_NVML(n, device_get_temperature, d, NVML_TEMPERATURE_GPU, &u), u);
    TRY(HN_F_SLOWDOWN_TEMP,
        HN_NVML(n, device_get_temperature_threshold, d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &u),
        u);
    TRY(HN_F_SHUTDOWN_TEMP,
        HN_NVML(n, device_get_temperature_threshold, d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &u),
        u);
    TRY(HN_F_POWER, HN_NVML(n, device_get_power_usage, d, &u), u / 1000.0);
    TRY(HN_F_ENERGY, HN_NVML(n, device_get_total_energy_consumption, d, &ull), ull);
    TRY(HN_F_PCIE_REPLAY, HN_NVML(n, device_get_pcie_replay_counter, d, &u), u);
    TRY(HN_F_PCIE_GEN, HN_NVML(n, device_get_curr_pcie_link_generation, d, &u), u);
    TRY(HN_F_PCIE_WIDTH, HN_NVML(n, device_get_curr_pcie_link_width, d, &u), u);

    nvmlUtilization_t util = {0, 0};
    rc = HN_NVML(n, device_get_utilization_rates, d, &util);
    if (put(s, g, HN_F_GPU_UTIL, rc, util.gpu) || put(s, g, HN_F_MEM_COPY_UTIL, rc, util.memory))
        return;
    TRY(HN_F_ENC_UTIL, HN_NVML(n, device_get_encoder_utilization, d, &u, &u2), u);
    TRY(HN_F_DEC_UTIL, HN_NVML(n, device_get_decoder_utilization, d, &u, &u2), u);

    nvmlMemory_v2_t mem;
    memset(&mem, 0, sizeof(mem));
    mem.version = nvmlMemory_v2;
    rc = HN_NVML(n, device_get_memory_info_v2, d, &mem);
    if (put(s, g, HN_F_FB_FREE, rc, (double)(mem.free >> 20)) ||
        put(s, g, HN_F_FB_USED, rc, (double)(mem.used >> 20)) ||
        put(s, g, HN_F_FB_RESERVED, rc, (double)(mem.reserved >> 20)))
        return;

    TRY(HN_F_ECC_SBE_VOL,
        HN_NVML(n, device_get_total_ecc_errors, d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                NVML_VOLATILE_ECC, &ull),
        ull);
    TRY(HN_F_ECC_DBE_VOL,
        HN_NVML(n, device_get_total_ecc_errors, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                NVML_VOLATILE_ECC, &ull),
        ull);
    TRY(HN_F_ECC_SBE_AGG,
        HN_NVML(n, device_get_total_ecc_errors, d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
                NVML_AGGREGATE_ECC, &ull),
        ull);
    TRY(HN_F_ECC_DBE_AGG,
        HN_NVML(n, device_get_total_ecc_errors, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                NVML_AGGREGATE_ECC, &ull),
        ull);

    /* With a zero-sized buffer NVML returns the page count, as INSUFFICIENT_SIZE when >0. */
    static const int causes[2] = {NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
                                  NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR};
    for (int c = 0; c < 2; c++) {
        u = 0;
        rc = HN_NVML(n, device_get_retired_pages, d, causes[c], &u, NULL);
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE)
            rc = NVML_SUCCESS;
        if (put(s, g, c == 0 ? HN_F_RETIRED_SBE : HN_F_RETIRED_DBE, rc, u))
            return;
    }
    int pending = 0;
    TRY(HN_F_RETIRED_PENDING, HN_NVML(n, device_get_retired_pages_pending_status, d, &pending),
        pending == NVML_FEATURE_ENABLED);

    rc = HN_NVML(n, device_get_remapped_rows, d, &u, &u2, &u3, &u4);
    if (put(s, g, HN_F_REMAP_CORRECTABLE, rc, u) || put(s, g, HN_F_REMAP_UNCORRECTABLE, rc, u2) ||
        put(s, g, HN_F_REMAP_PENDING, rc, u3 != 0) || put(s, g, HN_F_REMAP_FAILURE, rc, u4 != 0))
        return;

    TRY(HN_F_CLOCK_REASONS, HN_NVML(n, device_get_clocks_event_reasons, d, &ull), ull);
    nvmlViolationTime_t vt = {0, 0};
    TRY(HN_F_POWER_VIOLATION,
        HN_NVML(n, device_get_violation_status, d, NVML_PERF_POLICY_POWER, &vt),
        (double)vt.violationTime / 1000.0);
    TRY(HN_F_THERMAL_VIOLATION,
        HN_NVML(n, device_get_violation_status, d, NVML_PERF_POLICY_THERMAL, &vt),
        (double)vt.violationTime / 1000.0);

    /* Field values: memory temperature and the recovery action, in one call. */
    nvmlFieldValue_t fv[2];
    memset(fv, 0, sizeof(fv));
    fv[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
    fv[1].fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
    rc = HN_NVML(n, device_get_field_values, d, 2, fv);
    if (rc == NVML_SUCCESS) {
        static const int ff[2] = {HN_F_MEMORY_TEMP, HN_F_RECOVERY_ACTION};
        for (int i = 0; i < 2; i++) {
            double v =
                fv[i].valueType == NVML_VALUE_TYPE_DOUBLE               ? fv[i].value.dVal
                : fv[i].valueType == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG ? (double)fv[i].value.ullVal
                : fv[i].valueType == NVML_VALUE_TYPE_SIGNED_LONG_LONG   ? (double)fv[i].value.sllVal
                                                                        : (double)fv[i].value.uiVal;
            if (put(s, g, ff[i], fv[i].nvmlReturn, v))
                return;
        }
    } else if (put(s, g, HN_F_MEMORY_TEMP, rc, 0) || put(s, g, HN_F_RECOVERY_ACTION, rc, 0)) {
        return;
    }
#undef TRY
    collect_links(s, g);
}

/* Takes over the Xid events the event thread counted since the last cycle. */
static void take_xids(struct hn_gpu_set *s)
{
    for (unsigned i = 0; i < s->count; i++) {
        struct hn_gpu *g = &s->gpus[i];
        pthread_mutex_lock(&s->lock);
        uint64_t n = s->xid_pending[i];
        unsigned long long code = s->xid_last[i];
        s->xid_pending[i] = 0;
        pthread_mutex_unlock(&s->lock);
        if (n == 0)
            continue;
        g->xid_events += n;
        g->v[HN_F_XID] = (double)code;
        g->v[HN_F_XID_EVENTS] = (double)g->xid_events;
        if (n == 1)
            hn_warn("gpu %u (%s): Xid %llu", g->index, g->pci_bus_id, code);
        else
            hn_warn("gpu %u (%s): %llu Xid events since the last cycle, the last Xid %llu",
                    g->index, g->pci_bus_id, (unsigned long long)n, code);
    }
}

int hn_gpus_collect(struct hn_gpu_set *s)
{
    if (!s->open) {
        if (hn_mono_ns() < s->next_open_ns)
            return -ENODEV;
        if (open_nvml(s) != 0)
            return -ENODEV;
        hn_gpus_events_start(s);
    }
    s->cycle_errors = 0;
    for (unsigned i = 0; i < s->count; i++) {
        struct hn_gpu *g = &s->gpus[i];
        int was_lost = g->lost;
        if (!g->identified)
            discover(s, i);
        register_events(s, g);
        collect_one(s, g);
        g->v[HN_F_GPU_UP] = g->lost ? 0 : 1;
        if (g->lost && !was_lost)
            hn_warn("gpu %u (%s): GPU is lost; marking it down", g->index, g->pci_bus_id);
        else if (!g->lost && was_lost)
            hn_info("gpu %u (%s): GPU answers again", g->index, g->pci_bus_id);
    }
    take_xids(s);
    return s->cycle_errors ? -EIO : 0;
}

void hn_gpus_render(struct hn_gpu_set *s, struct hn_expo *e)
{
    for (int f = 0; f < HN_F_COUNT; f++) {
        int any = 0;
        for (unsigned i = 0; i < s->count && !any; i++)
            any = !isnan(s->gpus[i].v[f]);
        if (!any)
            continue;
        int dcgm = strncmp(fields[f].name, "DCGM_", 5) == 0;
        hn_expo_family(e, fields[f].name, fields[f].help, fields[f].type);
        for (unsigned i = 0; i < s->count; i++)
            hn_expo_sample(e, fields[f].name, dcgm ? s->gpus[i].labels : s->gpus[i].hlabels,
                           s->gpus[i].v[f]);
    }

    hn_expo_family(e, "houston_gpu_nvml_errors_total",
                   "NVML calls for the GPU that failed other than NOT_SUPPORTED or GPU_IS_LOST.",
                   HN_COUNTER);
    for (unsigned i = 0; i < s->count; i++)
        hn_expo_sample(e, "houston_gpu_nvml_errors_total", s->gpus[i].hlabels,
                       (double)s->gpus[i].nvml_errors);
    hn_expo_family(e, "houston_gpus", "GPUs NVML reports on this node.", HN_GAUGE);
    hn_expo_sample(e, "houston_gpus", NULL, s->open ? (double)s->count : NAN);
    hn_expo_family(e, "houston_nvml_up", "1 if the NVML library is loaded and initialised.",
                   HN_GAUGE);
    hn_expo_sample(e, "houston_nvml_up", NULL, s->open);

    char labels[1600];
    int any_reasons = 0;
    for (unsigned i = 0; i < s->count; i++)
        any_reasons |= !isnan(s->gpus[i].v[HN_F_CLOCK_REASONS]);
    if (any_reasons) {
        hn_expo_family(e, "houston_gpu_clock_event_active",
                       "1 while the named clock event (throttle) reason is active.", HN_GAUGE);
        for (unsigned i = 0; i < s->count; i++) {
            const struct hn_gpu *g = &s->gpus[i];
            if (isnan(g->v[HN_F_CLOCK_REASONS]))
                continue;
            unsigned long long mask = (unsigned long long)g->v[HN_F_CLOCK_REASONS];
            for (size_t r = 0; r < HN_ARRAY_LEN(reasons); r++) {
                size_t len = strlen(g->hlabels);
                memcpy(labels, g->hlabels, len + 1);
                if (hn_expo_label(labels, sizeof(labels), &len, "reason", reasons[r].name))
                    continue;
                hn_expo_sample(e, "houston_gpu_clock_event_active", labels,
                               (mask & reasons[r].bit) ? 1 : 0);
            }
        }
    }

    for (int f = 0; f < HN_L_COUNT; f++) {
        int any = 0;
        for (unsigned i = 0; i < s->count; i++)
            for (unsigned l = 0; l < s->gpus[i].nlinks && !any; l++)
                any = !isnan(s->gpus[i].link[l][f]);
        if (!any)
            continue;
        hn_expo_family(e, link_fields[f].name, link_fields[f].help, link_fields[f].type);
        for (unsigned i = 0; i < s->count; i++) {
            const struct hn_gpu *g = &s->gpus[i];
            if (g->lost)
                continue;
            for (unsigned l = 0; l < g->nlinks; l++) {
                char num[16];
                size_t len = strlen(g->hlabels);
                memcpy(labels, g->hlabels, len + 1);
                snprintf(num, sizeof(num), "%u", l);
                if (hn_expo_label(labels, sizeof(labels), &len, "link", num))
                    continue;
                hn_expo_sample(e, link_fields[f].name, labels, g->link[l][f]);
            }
        }
    }
}

static void *event_main(void *arg)
{
    struct hn_gpu_set *s = arg;
    while (!s->stop) {
        nvmlEventData_t ev;
        memset(&ev, 0, sizeof(ev));
        nvmlReturn_t rc = s->nvml.ops.event_set_wait(s->events, &ev, 500);
        if (rc == NVML_ERROR_TIMEOUT)
            continue;
        if (rc != NVML_SUCCESS) {
            /* A lost GPU makes the wait fail at once; don't spin. */
            struct timespec ts = {0, 200L * 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (ev.eventType != nvmlEventTypeXidCriticalError)
            continue;
        unsigned gpu = HN_MAX_GPUS;
        pthread_mutex_lock(&s->lock);
        for (unsigned i = 0; i < s->count; i++) {
            if (s->gpus[i].dev == ev.device)
                gpu = i;
        }
        if (gpu < HN_MAX_GPUS) {
            s->xid_pending[gpu]++;
            s->xid_last[gpu] = ev.eventData;
        } else {
            s->xid_unknown_device++;
        }
        pthread_mutex_unlock(&s->lock);
    }
    return NULL;
}

int hn_gpus_events_start(struct hn_gpu_set *s)
{
    if (!s->open || s->thread_running)
        return 0;
    if (!s->nvml.ops.event_set_create || !s->nvml.ops.device_register_events ||
        !s->nvml.ops.event_set_wait || !s->nvml.ops.event_set_free) {
        hn_info("gpu: NVML has no event API; Xid events come from the kernel log only");
        return -ENOSYS;
    }
    nvmlReturn_t rc = s->nvml.ops.event_set_create(&s->events);
    if (rc != NVML_SUCCESS) {
        hn_warn("gpu: nvmlEventSetCreate: %s", hn_nvml_strerror(&s->nvml, rc));
        return -EIO;
    }
    s->stop = 0;
    if (pthread_create(&s->thread, NULL, event_main, s) != 0) {
        s->nvml.ops.event_set_free(s->events);
        return -EAGAIN;
    }
    s->thread_running = 1;
    for (unsigned i = 0; i < s->count; i++)
        register_events(s, &s->gpus[i]);
    return 0;
}

void hn_gpus_events_stop(struct hn_gpu_set *s)
{
    if (!s->thread_running)
        return;
    s->stop = 1;
    pthread_join(s->thread, NULL);
    s->thread_running = 0;
    s->nvml.ops.event_set_free(s->events);
    for (unsigned i = 0; i < s->count; i++)
        s->gpus[i].registered = 0;
}

/* The collector table row. */
static int col_init(const struct hn_agent_config *cfg, void **state)
{
    struct hn_gpu_set *s = xmalloc(sizeof(*s));
    hn_gpus_init(s, cfg->nvml_lib, cfg->hostname);
    hn_gpus_events_start(s);
    *state = s;
    return 0;
}

static int col_collect(void *state)
{
    return hn_gpus_collect(state);
}

static void col_render(void *state, struct hn_expo *e)
{
    hn_gpus_render(state, e);
}

static void col_fini(void *state)
{
    hn_gpus_fini(state);
    free(state);
}

const struct hn_collector hn_collector_gpu = {"gpu", col_init, col_collect, col_render, col_fini};
