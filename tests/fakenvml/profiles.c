/*
 * profiles.c - model table for the fake NVML; see profiles.h.
 *
 * Every number below was read from the capture named in the row's comment. Newer drivers print
 * GPU temperature limits relative to a "T.Limit" reference instead of absolute values:
 * <gpu_temp> + <gpu_temp_tlimit> gives the reference (the max operating temperature, whose
 * relative threshold is 0 C), and an event with relative threshold -k C fires at reference + k.
 * So shutdown = reference - <gpu_temp_max_tlimit_threshold> and slowdown = reference -
 * <gpu_temp_slow_tlimit_threshold>. The captures give the memory limit only as a relative 0 C;
 * the absolute 95 C used for temp_mem_max is the <gpu_temp_max_mem_threshold> of the A100 capture
 * in the same folder (qx-a100.xml), the only one that prints it.
 */
#include "profiles.h"

#include <string.h>

static const struct hn_fake_profile profiles[] = {
    /* hardware/qx-h100.xml: 8x "NVIDIA H100 80GB HBM3", driver 580.105.08. T.Limit reference
     * 29 + 58 = 87 C, shutdown -8 C, slowdown -2 C. Clocks: <clocks> at idle 345 MHz, <mem_clock>
     * 2619, <video_clock> 765; <max_clocks> 1980 / video 1545. fb total 81559 MiB, reserved 480.
     * The capture's PCIe replay counters (106..174) are not copied: the default is a healthy,
     * freshly booted node; set "pcie_replay" to reproduce them. */
    {
        .model = "h100",
        .name = "NVIDIA H100 80GB HBM3",
        .driver = "580.105.08",
        .count = 8,
        .mem_total_mib = 81559,
        .mem_reserved_mib = 480,
        .power_limit_w = 700,
        .temp_shutdown = 95,
        .temp_slowdown = 89,
        .temp_gpu_max = 87,
        .temp_mem_max = 95,
        .clk_idle = 345,
        .clk_max = 1980,
        .clk_mem = 2619,
        .clk_video_idle = 765,
        .clk_video_max = 1545,
        .pcie_gen = 5,
        .pcie_width = 16,
        .pci_device_id = 0x233010DE,
        .pci_subsys_id = 0x16C110DE,
        .nvlinks = 18, /* NVLink4, 18 links per H100 SXM (mocknvml-configs/...-h100.yaml) */
        .domain = {0, 0, 0, 0, 0, 0, 0, 0},
        .bus = {0x53, 0x64, 0x75, 0x86, 0x97, 0xA8, 0xB9, 0xCA},
        .temp_idle = {29, 30, 29, 32, 32, 29, 31, 29},
        .mem_temp_idle = {37, 39, 38, 39, 37, 37, 37, 38},
        .power_idle_mw = {68570, 67010, 67450, 71370, 66660, 68110, 69800, 68070},
    },
    /* hardware/qx-gb200.xml: 4x "NVIDIA GB200", driver 580.173.02. Reference 27 + 60 = 87 C,
     * shutdown -5 C, slowdown -2 C. Idle clocks 120 MHz, memory 3996, video 600; max 2062,
     * video 1890. fb 189471 MiB, reserved 742. GPU power limit 1200 W (not the module's 2500). */
    {
        .model = "gb200",
        .name = "NVIDIA GB200",
        .driver = "580.173.02",
        .count = 4,
        .mem_total_mib = 189471,
        .mem_reserved_mib = 742,
        .power_limit_w = 1200,
        .temp_shutdown = 92,
        .temp_slowdown = 89,
        .temp_gpu_max = 87,
        .temp_mem_max = 95,
        .clk_idle = 120,
        .clk_max = 2062,
        .clk_mem = 3996,
        .clk_video_idle = 600,
        .clk_video_max = 1890,
        .pcie_gen = 5,
        .pcie_width = 16,
        .pci_device_id = 0x294110DE,
        .pci_subsys_id = 0x204610DE,
        .nvlinks = 18, /* NVLink5 (mocknvml-configs/...-gb200.yaml) */
        .domain = {0, 0, 0, 0},
        .bus = {0x29, 0x3F, 0x9C, 0xB2},
        .temp_idle = {27, 28, 27, 26},
        .mem_temp_idle = {27, 27, 28, 27},
        .power_idle_mw = {165930, 168570, 156480, 171990},
    },
    /* hardware/qx-b200.xml: 8x "NVIDIA B200", driver 580.105.08. Reference 39 + 49 = 88 C,
     * shutdown -5 C, slowdown -3 C. Idle clocks 120 MHz, memory 3996, video 600; max 1965,
     * video 1965. fb 183359 MiB, reserved 728. Power limit 1000 W. */
    {
        .model = "b200",
        .name = "NVIDIA B200",
        .driver = "580.105.08",
        .count = 8,
        .mem_total_mib = 183359,
        .mem_reserved_mib = 728,
        .power_limit_w = 1000,
        .temp_shutdown = 93,
        .temp_slowdown = 91,
        .temp_gpu_max = 88,
        .temp_mem_max = 95,
        .clk_idle = 120,
        .clk_max = 1965,
        .clk_mem = 3996,
        .clk_video_idle = 600,
        .clk_video_max = 1965,
        .pcie_gen = 5,
        .pcie_width = 16,
        .pci_device_id = 0x290110DE,
        .pci_subsys_id = 0x199910DE,
        .nvlinks = 18, /* NVLink5 (mocknvml-configs/...-b200.yaml) */
        .domain = {0, 0, 0, 0, 0, 0, 0, 0},
        .bus = {0x8F, 0x90, 0x96, 0x97, 0xC4, 0xC5, 0xCB, 0xCC},
        .temp_idle = {39, 53, 38, 52, 38, 51, 37, 51},
        .mem_temp_idle = {39, 51, 38, 51, 37, 50, 37, 49},
        .power_idle_mw = {195680, 206000, 194610, 204120, 194320, 202140, 194550, 205210},
    },
    /* hardware/qx-gb300.xml: 4x "NVIDIA GB300", driver 580.173.02, PCIe gen 6. Reference
     * 38 + 49 = 87 C, shutdown -5 C, slowdown -2 C. Idle clocks 120 MHz, memory 3996, video 600;
     * max 2070, video 1912. fb 284208 MiB, reserved 947. GPU power limit 1400 W. Bus ids use PCI
     * domains 0008, 0009, 0018, 0019 on bus 06. */
    {
        .model = "gb300",
        .name = "NVIDIA GB300",
        .driver = "580.173.02",
        .count = 4,
        .mem_total_mib = 284208,
        .mem_reserved_mib = 947,
        .power_limit_w = 1400,
        .temp_shutdown = 92,
        .temp_slowdown = 89,
        .temp_gpu_max = 87,
        .temp_mem_max = 95,
        .clk_idle = 120,
        .clk_max = 2070,
        .clk_mem = 3996,
        .clk_video_idle = 600,
        .clk_video_max = 1912,
        .pcie_gen = 6,
        .pcie_width = 16,
        .pci_device_id = 0x31C210DE,
        .pci_subsys_id = 0x21F110DE,
        .nvlinks = 18, /* NVLink5 (mocknvml-configs/...-gb300.yaml) */
        .domain = {0x8, 0x9, 0x18, 0x19},
        .bus = {0x06, 0x06, 0x06, 0x06},
        .temp_idle = {38, 39, 39, 39},
        .mem_temp_idle = {38, 38, 39, 39},
        .power_idle_mw = {180360, 176260, 175920, 180050},
    },
    /* hardware/qx-h200.xml: 1x "NVIDIA H200", driver 580.159.04, a VM with one GPU (taken by
     * bench/gpu-check.sh, tests/fixtures/real-gpu; uuid and serial scrubbed like the others).
     * Reference 35 + 52 = 87 C, shutdown -8 C, slowdown -2 C. Idle clocks 345 MHz, memory
     * 3201, video 765; max 1980, video 1545. fb 143771 MiB, reserved 616. Power limit 700 W,
     * idle draw 79.10 W (instant). Bus 00000000:00:06.0 (the VM's slot 6). NVML in the VM
     * reports no NVLink. */
    {
        .model = "h200",
        .name = "NVIDIA H200",
        .driver = "580.159.04",
        .count = 1,
        .mem_total_mib = 143771,
        .mem_reserved_mib = 616,
        .power_limit_w = 700,
        .temp_shutdown = 95,
        .temp_slowdown = 89,
        .temp_gpu_max = 87,
        .temp_mem_max = 95,
        .clk_idle = 345,
        .clk_max = 1980,
        .clk_mem = 3201,
        .clk_video_idle = 765,
        .clk_video_max = 1545,
        .pcie_gen = 5,
        .pcie_width = 16,
        .pci_device_id = 0x233510DE,
        .pci_subsys_id = 0x18BF10DE,
        .nvlinks = 0,
        .domain = {0},
        .bus = {0x00},
        .device = {0x06},
        .temp_idle = {35},
        .mem_temp_idle = {33},
        .power_idle_mw = {79100},
    },
};

const struct hn_fake_profile *hn_fake_profile_find(const char *model)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
        if (strcmp(profiles[i].model, model) == 0)
            return &profiles[i];
    return NULL;
}

const struct hn_fake_profile *hn_fake_profile_default(void)
{
    return &profiles[0];
}
