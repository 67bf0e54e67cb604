/*
 * profiles.h - the GPU models the fake NVML can present, seeded from real nvidia-smi captures.
 *
 * One row per model ("h100", "gb200", "b200", "gb300"): identity, memory, power, clocks,
 * thermal limits, PCIe and NVLink facts read by hand from `nvidia-smi -q -x` captures of real
 * nodes (tests/fixtures/nvidia-smi/hardware/, see SOURCE.md there). Per-GPU arrays hold the
 * first HN_FAKE_PROFILE_GPUS GPUs of the capture; GPUs past the capture reuse them modulo the
 * capture's count and get synthetic bus numbers. The table is constant; any thread may read it.
 */
#ifndef HN_FAKE_PROFILES_H
#define HN_FAKE_PROFILES_H

#define HN_FAKE_PROFILE_GPUS 8

struct hn_fake_profile {
    const char *model;  /* name used in the state file */
    const char *name;   /* nvmlDeviceGetName, <product_name> */
    const char *driver; /* nvmlSystemGetDriverVersion, <driver_version> */
    unsigned count;     /* <attached_gpus> */
    unsigned mem_total_mib, mem_reserved_mib;
    unsigned power_limit_w;
    unsigned temp_shutdown, temp_slowdown, temp_gpu_max, temp_mem_max;
    unsigned clk_idle, clk_max;             /* graphics and SM clocks, MHz */
    unsigned clk_mem;                       /* memory clock, MHz */
    unsigned clk_video_idle, clk_video_max; /* video clock, MHz */
    unsigned pcie_gen, pcie_width;
    unsigned pci_device_id, pci_subsys_id;
    unsigned nvlinks;
    /* Per GPU of the capture, in index order. */
    unsigned short domain[HN_FAKE_PROFILE_GPUS];
    unsigned char bus[HN_FAKE_PROFILE_GPUS];
    unsigned char device[HN_FAKE_PROFILE_GPUS]; /* PCI device (slot): 0, except in a VM */
    unsigned char temp_idle[HN_FAKE_PROFILE_GPUS];
    unsigned char mem_temp_idle[HN_FAKE_PROFILE_GPUS];
    unsigned power_idle_mw[HN_FAKE_PROFILE_GPUS];
};

/* The profile named model (case-sensitive), or NULL. */
const struct hn_fake_profile *hn_fake_profile_find(const char *model);
/* The default profile (8x H100 SXM). */
const struct hn_fake_profile *hn_fake_profile_default(void);

#endif
