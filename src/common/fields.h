/*
 * fields.h - the per-GPU quantities houston knows, as one enum shared by the agent (which
 * reads them from NVML and renders them, agent/gpu.c) and the agent-to-controller frames
 * (common/frame.h), where a sample is (GPU, field id, value). The numbering is part of the
 * wire protocol (docs/protocol.md): append new fields at the end, never renumber.
 */
#ifndef HN_FIELDS_H
#define HN_FIELDS_H

enum hn_gpu_field {
    HN_F_SM_CLOCK = 0,
    HN_F_MEM_CLOCK,
    HN_F_GPU_TEMP,
    HN_F_MEMORY_TEMP,
    HN_F_SLOWDOWN_TEMP,
    HN_F_SHUTDOWN_TEMP,
    HN_F_POWER,
    HN_F_ENERGY,
    HN_F_PCIE_REPLAY,
    HN_F_PCIE_GEN,
    HN_F_PCIE_WIDTH,
    HN_F_GPU_UTIL,
    HN_F_MEM_COPY_UTIL,
    HN_F_ENC_UTIL,
    HN_F_DEC_UTIL,
    HN_F_XID,
    HN_F_FB_FREE,
    HN_F_FB_USED,
    HN_F_FB_RESERVED,
    HN_F_ECC_SBE_VOL,
    HN_F_ECC_DBE_VOL,
    HN_F_ECC_SBE_AGG,
    HN_F_ECC_DBE_AGG,
    HN_F_RETIRED_SBE,
    HN_F_RETIRED_DBE,
    HN_F_RETIRED_PENDING,
    HN_F_REMAP_CORRECTABLE,
    HN_F_REMAP_UNCORRECTABLE,
    HN_F_REMAP_PENDING,
    HN_F_REMAP_FAILURE,
    HN_F_NVLINK_CRC_FLIT,
    HN_F_NVLINK_CRC_DATA,
    HN_F_NVLINK_REPLAY,
    HN_F_NVLINK_RECOVERY,
    HN_F_CLOCK_REASONS,
    HN_F_POWER_VIOLATION,
    HN_F_THERMAL_VIOLATION,
    HN_F_RECOVERY_ACTION,
    HN_F_NVLINKS_ACTIVE,
    HN_F_XID_EVENTS,
    HN_F_GPU_UP, /* 1 while NVML answers for the GPU, 0 once it is lost */
    HN_F_COUNT
};

enum hn_link_field {
    HN_L_UP,
    HN_L_REPLAY,
    HN_L_RECOVERY,
    HN_L_CRC_FLIT,
    HN_L_CRC_DATA,
    HN_L_COUNT
};

#endif
