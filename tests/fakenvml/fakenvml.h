/*
 * fakenvml.h - a fake libnvidia-ml.so.1 for tests: the NVML entry points houston uses.
 *
 * The library presents a node of GPUs (8 healthy H100 SXM by default; profiles.h) and takes
 * faults from a state file named by $HN_FAKENVML_STATE (format: state.h, docs/fakenvml.md),
 * which a test may rewrite while the agent runs: every call re-checks the file's identity
 * (inode, size, mtime) at most every 50 ms and re-reads it when it changed.
 *
 * Signatures follow NVIDIA's NVML API reference with the types of src/agent/nvml_abi.h.
 * All functions are thread-safe (one mutex); nvmlEventSetWait_v2 sleeps without holding it.
 * Device handles point into static storage and stay valid for the life of the library.
 * Only these symbols (and hn_fakenvml_account) are exported; everything else is hidden.
 */
#ifndef HN_FAKENVML_H
#define HN_FAKENVML_H

#include "agent/nvml_abi.h"

#define HN_FAKE_EXPORT __attribute__((visibility("default")))

HN_FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void);
HN_FAKE_EXPORT nvmlReturn_t nvmlShutdown(void);
HN_FAKE_EXPORT const char *nvmlErrorString(nvmlReturn_t result);
HN_FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minor);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                          nvmlUtilization_t *utilization);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device,
                                                            unsigned int *utilization,
                                                            unsigned int *samplingPeriodUs);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device,
                                                            unsigned int *utilization,
                                                            unsigned int *samplingPeriodUs);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type,
                                                   unsigned int *clock);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                                unsigned long long *energy);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType,
                                                     unsigned int *temp);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                                              int thresholdType,
                                                              unsigned int *temp);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                                       nvmlMemory_v2_t *memory);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType,
                                                        int counterType,
                                                        unsigned long long *eccCounts);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause,
                                                      unsigned int *pageCount,
                                                      unsigned long long *addresses);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device,
                                                                   int *isPending);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows,
                                                      unsigned int *uncRows,
                                                      unsigned int *isPending,
                                                      unsigned int *failureOccurred);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                   unsigned long long *reasons);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                      unsigned long long *reasons);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device,
                                                           unsigned int *value);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device,
                                                                unsigned int *currLinkGen);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device,
                                                           unsigned int *currLinkWidth);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                                     int *isActive);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                                            int counter,
                                                            unsigned long long *counterValue);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, int perfPolicyType,
                                                         nvmlViolationTime_t *violTime);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                                     nvmlFieldValue_t *values);
HN_FAKE_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
HN_FAKE_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
                                                     unsigned long long eventTypes,
                                                     nvmlEventSet_t set);
HN_FAKE_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
                                                unsigned int timeoutms);
HN_FAKE_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);

/* Not NVML: for benchmarks. With HN_FAKENVML_ACCOUNT=1 in the environment at nvmlInit_v2, the
 * library counts the entry-point calls and the thread CPU time spent in them (sleeps in
 * nvmlEventSetWait_v2 excluded); this reads both totals. They are zero when accounting is off. */
HN_FAKE_EXPORT void hn_fakenvml_account(unsigned long long *calls, unsigned long long *ns);

#endif
