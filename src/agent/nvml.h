/*
 * nvml.h - NVML loaded at run time: an ops table of function pointers filled by dlsym() from
 * the versioned symbol names in one list (Slurm's plugin syms[]).
 *
 * houston never links libnvidia-ml. hn_nvml_open() dlopens the library named by --nvml-lib
 * (default libnvidia-ml.so.1), resolves every symbol of HN_NVML_FUNCS, and calls nvmlInit_v2.
 * A symbol the library lacks leaves its pointer NULL; callers go through hn_nvml_call-style
 * checks (the HN_NVML() macro) that turn a NULL pointer into NVML_ERROR_FUNCTION_NOT_FOUND, so
 * an old driver costs a metric, never the agent. Only init, shutdown, device count and handle
 * lookup are required.
 *
 * NVML itself is thread-safe; the struct is filled once and then only read, so the collect
 * thread and the Xid event thread may share it.
 */
#ifndef HN_NVML_H
#define HN_NVML_H

#include "agent/nvml_abi.h"

#include <stddef.h>

/* X(field, symbol, alternative symbol or NULL, return type, parameter list) */
#define HN_NVML_FUNCS(X)                                                                           \
    X(init, "nvmlInit_v2", NULL, nvmlReturn_t, (void))                                             \
    X(shutdown, "nvmlShutdown", NULL, nvmlReturn_t, (void))                                        \
    X(error_string, "nvmlErrorString", NULL, const char *, (nvmlReturn_t))                         \
    X(system_get_driver_version, "nvmlSystemGetDriverVersion", NULL, nvmlReturn_t,                 \
      (char *, unsigned int))                                                                      \
    X(device_get_count, "nvmlDeviceGetCount_v2", NULL, nvmlReturn_t, (unsigned int *))             \
    X(device_get_handle_by_index, "nvmlDeviceGetHandleByIndex_v2", NULL, nvmlReturn_t,             \
      (unsigned int, nvmlDevice_t *))                                                              \
    X(device_get_name, "nvmlDeviceGetName", NULL, nvmlReturn_t,                                    \
      (nvmlDevice_t, char *, unsigned int))                                                        \
    X(device_get_uuid, "nvmlDeviceGetUUID", NULL, nvmlReturn_t,                                    \
      (nvmlDevice_t, char *, unsigned int))                                                        \
    X(device_get_pci_info, "nvmlDeviceGetPciInfo_v3", NULL, nvmlReturn_t,                          \
      (nvmlDevice_t, nvmlPciInfo_t *))                                                             \
    X(device_get_minor_number, "nvmlDeviceGetMinorNumber", NULL, nvmlReturn_t,                     \
      (nvmlDevice_t, unsigned int *))                                                              \
    X(device_get_utilization_rates, "nvmlDeviceGetUtilizationRates", NULL, nvmlReturn_t,           \
      (nvmlDevice_t, nvmlUtilization_t *))                                                         \
    X(device_get_encoder_utilization, "nvmlDeviceGetEncoderUtilization", NULL, nvmlReturn_t,       \
      (nvmlDevice_t, unsigned int *, unsigned int *))                                              \
    X(device_get_decoder_utilization, "nvmlDeviceGetDecoderUtilization", NULL, nvmlReturn_t,       \
      (nvmlDevice_t, unsigned int *, unsigned int *))                                              \
    X(device_get_clock_info, "nvmlDeviceGetClockInfo", NULL, nvmlReturn_t,                         \
      (nvmlDevice_t, int, unsigned int *))                                                         \
    X(device_get_power_usage, "nvmlDeviceGetPowerUsage", NULL, nvmlReturn_t,                       \
      (nvmlDevice_t, unsigned int *))                                                              \
    X(device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption", NULL,            \
      nvmlReturn_t, (nvmlDevice_t, unsigned long long *))                                          \
    X(device_get_temperature, "nvmlDeviceGetTemperature", NULL, nvmlReturn_t,                      \
      (nvmlDevice_t, int, unsigned int *))                                                         \
    X(device_get_temperature_threshold, "nvmlDeviceGetTemperatureThreshold", NULL, nvmlReturn_t,   \
      (nvmlDevice_t, int, unsigned int *))                                                         \
    X(device_get_memory_info_v2, "nvmlDeviceGetMemoryInfo_v2", NULL, nvmlReturn_t,                 \
      (nvmlDevice_t, nvmlMemory_v2_t *))                                                           \
    X(device_get_total_ecc_errors, "nvmlDeviceGetTotalEccErrors", NULL, nvmlReturn_t,              \
      (nvmlDevice_t, int, int, unsigned long long *))                                              \
    X(device_get_retired_pages, "nvmlDeviceGetRetiredPages", NULL, nvmlReturn_t,                   \
      (nvmlDevice_t, int, unsigned int *, unsigned long long *))                                   \
    X(device_get_retired_pages_pending_status, "nvmlDeviceGetRetiredPagesPendingStatus", NULL,     \
      nvmlReturn_t, (nvmlDevice_t, int *))                                                         \
    X(device_get_remapped_rows, "nvmlDeviceGetRemappedRows", NULL, nvmlReturn_t,                   \
      (nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *, unsigned int *))              \
    X(device_get_clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons",                   \
      "nvmlDeviceGetCurrentClocksThrottleReasons", nvmlReturn_t,                                   \
      (nvmlDevice_t, unsigned long long *))                                                        \
    X(device_get_pcie_replay_counter, "nvmlDeviceGetPcieReplayCounter", NULL, nvmlReturn_t,        \
      (nvmlDevice_t, unsigned int *))                                                              \
    X(device_get_curr_pcie_link_generation, "nvmlDeviceGetCurrPcieLinkGeneration", NULL,           \
      nvmlReturn_t, (nvmlDevice_t, unsigned int *))                                                \
    X(device_get_curr_pcie_link_width, "nvmlDeviceGetCurrPcieLinkWidth", NULL, nvmlReturn_t,       \
      (nvmlDevice_t, unsigned int *))                                                              \
    X(device_get_nvlink_state, "nvmlDeviceGetNvLinkState", NULL, nvmlReturn_t,                     \
      (nvmlDevice_t, unsigned int, int *))                                                         \
    X(device_get_nvlink_error_counter, "nvmlDeviceGetNvLinkErrorCounter", NULL, nvmlReturn_t,      \
      (nvmlDevice_t, unsigned int, int, unsigned long long *))                                     \
    X(device_get_violation_status, "nvmlDeviceGetViolationStatus", NULL, nvmlReturn_t,             \
      (nvmlDevice_t, int, nvmlViolationTime_t *))                                                  \
    X(device_get_field_values, "nvmlDeviceGetFieldValues", NULL, nvmlReturn_t,                     \
      (nvmlDevice_t, int, nvmlFieldValue_t *))                                                     \
    X(event_set_create, "nvmlEventSetCreate", NULL, nvmlReturn_t, (nvmlEventSet_t *))              \
    X(device_register_events, "nvmlDeviceRegisterEvents", NULL, nvmlReturn_t,                      \
      (nvmlDevice_t, unsigned long long, nvmlEventSet_t))                                          \
    X(event_set_wait, "nvmlEventSetWait_v2", NULL, nvmlReturn_t,                                   \
      (nvmlEventSet_t, nvmlEventData_t *, unsigned int))                                           \
    X(event_set_free, "nvmlEventSetFree", NULL, nvmlReturn_t, (nvmlEventSet_t))

/* Types cannot be parenthesised, hence the NOLINT. */
#define HN_NVML_FIELD(field, sym, alt, ret, args)                                                  \
    ret(*field) args; /* NOLINT(bugprone-macro-parentheses) */
struct hn_nvml_ops {
    HN_NVML_FUNCS(HN_NVML_FIELD)
};
#undef HN_NVML_FIELD

struct hn_nvml {
    void *dl;
    struct hn_nvml_ops ops;
    unsigned missing; /* optional symbols the library lacks */
};

/* dlopens lib (or "libnvidia-ml.so.1" when NULL/empty) and initialises NVML. Returns 0, or a
 * negative errno with a one-line reason in err (library missing, symbol missing, init failed). */
int hn_nvml_open(struct hn_nvml *n, const char *lib, char *err, size_t errsize);
void hn_nvml_close(struct hn_nvml *n);
/* NVML's text for an error code, or a number when nvmlErrorString is missing. */
const char *hn_nvml_strerror(const struct hn_nvml *n, nvmlReturn_t rc);

/* Calls an optional NVML function: NVML_ERROR_FUNCTION_NOT_FOUND when the library lacks it. */
#define HN_NVML(n, fn, ...) ((n)->ops.fn ? (n)->ops.fn(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

#endif
