/*
 * nvml_abi.h - the part of NVML's C ABI that houston uses, declared from NVIDIA's public
 * NVML API reference (docs.nvidia.com/deploy/nvml-api), not copied from nvml.h.
 *
 * houston never links libnvidia-ml: src/agent/nvml.c dlopens it and fills an ops table from
 * the versioned symbol names listed there. The fake library in tests/fakenvml implements the
 * same functions against this header, so both sides agree on every struct layout and constant.
 * Only enum values and struct layouts that houston reads are declared.
 */
#ifndef HN_NVML_ABI_H
#define HN_NVML_ABI_H

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

/* Return codes (nvmlReturn_t). */
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999,
};

/* Buffer sizes from the API reference. */
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE        96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE        96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE     32
#define NVML_NVLINK_MAX_LINKS                  18

typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

/* nvmlMemory_v2_t: version must be nvmlMemory_v2 (struct size | 2 << 24). */
typedef struct nvmlMemory_v2_st {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

typedef struct nvmlViolationTime_st {
    unsigned long long referenceTime;
    unsigned long long violationTime; /* ns */
} nvmlViolationTime_t;

enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum {
    NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
    NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
    NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
};
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
enum {
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
    NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
};
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
enum { NVML_PERF_POLICY_POWER = 0, NVML_PERF_POLICY_THERMAL = 1 };
enum {
    NVML_NVLINK_ERROR_DL_REPLAY = 0,
    NVML_NVLINK_ERROR_DL_RECOVERY = 1,
    NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
    NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
};

/* Clock event (throttle) reason bits, nvmlDeviceGetCurrentClocksEventReasons. */
#define nvmlClocksEventReasonGpuIdle                   0x1ull
#define nvmlClocksEventReasonApplicationsClocksSetting 0x2ull
#define nvmlClocksEventReasonSwPowerCap                0x4ull
#define nvmlClocksThrottleReasonHwSlowdown             0x8ull
#define nvmlClocksEventReasonSyncBoost                 0x10ull
#define nvmlClocksEventReasonSwThermalSlowdown         0x20ull
#define nvmlClocksThrottleReasonHwThermalSlowdown      0x40ull
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown   0x80ull

/* Field values (nvmlDeviceGetFieldValues). */
enum {
    NVML_VALUE_TYPE_DOUBLE = 0,
    NVML_VALUE_TYPE_UNSIGNED_INT = 1,
    NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
    NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
    NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
    NVML_VALUE_TYPE_SIGNED_INT = 5,
};
typedef union nvmlValue_st {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    int siVal;
    unsigned short usVal;
} nvmlValue_t;
typedef struct nvmlFieldValue_st {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    int valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;
#define NVML_FI_DEV_MEMORY_TEMP             82
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230
enum {
    NVML_GPU_RECOVERY_ACTION_NONE = 0,
    NVML_GPU_RECOVERY_ACTION_GPU_RESET = 1,
    NVML_GPU_RECOVERY_ACTION_NODE_REBOOT = 2,
    NVML_GPU_RECOVERY_ACTION_DRAIN_P2P = 3,
    NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET = 4,
};

/* Events. */
#define nvmlEventTypeXidCriticalError 0x8ull
typedef struct nvmlEventData_st {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData; /* the Xid code for XidCriticalError */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

#endif
