/*
 * state.h - the fault-injection state of the fake NVML and the parser of its state file.
 *
 * The state file (docs/fakenvml.md) is a complete description: each read starts from the
 * defaults (8 healthy H100s) and applies the file's lines in order, so deleting a line undoes
 * it. The parser only fills a caller-owned struct; reading the file, locking and the NVML
 * entry points live in fakenvml.c. Not thread-safe by itself (the caller holds its mutex).
 */
#ifndef HN_FAKE_STATE_H
#define HN_FAKE_STATE_H

#include "agent/nvml_abi.h"
#include "profiles.h"

#define HN_FAKE_MAX_GPUS  16
#define HN_FAKE_MAX_LINKS NVML_NVLINK_MAX_LINKS
#define HN_FAKE_MAX_XIDS  256
#define HN_FAKE_MAX_PAGES 1024 /* retired pages per cause */

/* Functions (and field ids) an injected error can target: "fail FN CODE" / "not_supported FN". */
enum hn_fake_fn {
    HN_FAKE_FN_NAME,
    HN_FAKE_FN_UUID,
    HN_FAKE_FN_PCI_INFO,
    HN_FAKE_FN_MINOR,
    HN_FAKE_FN_UTILIZATION,
    HN_FAKE_FN_ENCODER,
    HN_FAKE_FN_DECODER,
    HN_FAKE_FN_CLOCK,
    HN_FAKE_FN_POWER,
    HN_FAKE_FN_ENERGY,
    HN_FAKE_FN_TEMPERATURE,
    HN_FAKE_FN_TEMPERATURE_THRESHOLD,
    HN_FAKE_FN_MEMORY,
    HN_FAKE_FN_ECC,
    HN_FAKE_FN_RETIRED_PAGES,
    HN_FAKE_FN_RETIRED_PENDING,
    HN_FAKE_FN_REMAPPED_ROWS,
    HN_FAKE_FN_CLOCKS_EVENT_REASONS,
    HN_FAKE_FN_PCIE_REPLAY,
    HN_FAKE_FN_PCIE_GEN,
    HN_FAKE_FN_PCIE_WIDTH,
    HN_FAKE_FN_NVLINK_STATE,
    HN_FAKE_FN_NVLINK_ERRORS,
    HN_FAKE_FN_VIOLATION,
    HN_FAKE_FN_FIELD_VALUES,
    HN_FAKE_FN_REGISTER_EVENTS,
    HN_FAKE_FN_FIELD_MEMORY_TEMP,     /* NVML_FI_DEV_MEMORY_TEMP inside nvmlDeviceGetFieldValues */
    HN_FAKE_FN_FIELD_RECOVERY_ACTION, /* NVML_FI_DEV_GET_GPU_RECOVERY_ACTION */
    HN_FAKE_FN_COUNT
};

/* One injected Xid: delivered once per (gpu, id) for the life of the loaded library. */
struct hn_fake_xid {
    unsigned gpu;
    unsigned code;
    unsigned long long id;
};

/* Knobs of one GPU; -1 in a signed field means "derive from the profile and load". */
struct hn_fake_gpu {
    int lost;
    int util;     /* percent */
    int power_w;  /* watts */
    int temp;     /* C */
    int mem_temp; /* C */
    int sm_clock; /* MHz, graphics and SM */
    int pcie_gen;
    int pcie_width;
    long long mem_used_mib;
    int has_throttle;
    unsigned long long throttle;  /* clock event reason bits */
    unsigned long long ecc[2][2]; /* [NVML_MEMORY_ERROR_TYPE_*][NVML_*_ECC] */
    unsigned remap_corr, remap_unc, remap_pending, remap_failure;
    unsigned retired[2]; /* [NVML_PAGE_RETIREMENT_CAUSE_*] */
    int retired_pending;
    unsigned recovery_action;
    unsigned pcie_replay;
    unsigned nvlink_down;                                /* bit per link */
    unsigned long long nvlink_err[HN_FAKE_MAX_LINKS][4]; /* [link][NVML_NVLINK_ERROR_DL_*] */
    nvmlReturn_t fail[HN_FAKE_FN_COUNT];                 /* 0 or the error to return */
};

struct hn_fake_state {
    const struct hn_fake_profile *profile;
    unsigned count;
    nvmlReturn_t init_fail; /* nvmlInit_v2 returns this when non-zero */
    unsigned load;          /* default utilization, percent */
    int jitter;             /* 1: derived values vary over time */
    unsigned node;          /* 4th UUID group, to tell fake nodes apart */
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE]; /* "" = the profile's */
    struct hn_fake_gpu gpu[HN_FAKE_MAX_GPUS];
    unsigned nxid;
    struct hn_fake_xid xid[HN_FAKE_MAX_XIDS];
};

/* Fills st with the defaults: 8 healthy H100 at 85 % load, jitter on. */
void hn_fake_state_defaults(struct hn_fake_state *st);

/* Resets st to the defaults and applies every line of text (NUL-terminated; modified in
 * place). A line it cannot use is ignored with one message on stderr naming origin and line
 * number. Returns the number of lines ignored. */
int hn_fake_state_parse(struct hn_fake_state *st, char *text, const char *origin);

/* The short name of fn as written in the state file ("power", "memory_temp", ...). */
const char *hn_fake_fn_name(enum hn_fake_fn fn);

#endif
