/*
 * host.h - the host collector: load, memory, CPU time, uptime and file handles from /proc, and
 * temperature and power sensors from /sys/class/hwmon.
 *
 * hn_collector_host (collector.h) lists the hwmon sensors once at init and reads every source
 * each cycle into a fixed snapshot, rendered as houston_host_* families (docs/metrics.md). A
 * source that cannot be read renders nothing that cycle and is complained about once.
 *
 * The parsers below take the text of one /proc file (NUL-terminated, any length) and never
 * read past it; they are public so that `houston check` and the fuzz targets can use them. They
 * keep no state and may be called from any thread. Paths go through the configured roots
 * (proc_root stands for /proc, sysfs_root for /sys), so tests point them at a fixture tree.
 */
#ifndef HN_HOST_H
#define HN_HOST_H

#include "agent/collector.h"

#include <stdint.h>

/* Fields of the aggregate "cpu" line of /proc/stat, in the kernel's order (proc(5)). */
enum hn_host_cpu_field {
    HN_CPU_USER,
    HN_CPU_NICE,
    HN_CPU_SYSTEM,
    HN_CPU_IDLE,
    HN_CPU_IOWAIT,
    HN_CPU_IRQ,
    HN_CPU_SOFTIRQ,
    HN_CPU_STEAL,
    HN_CPU_GUEST,      /* already included in USER */
    HN_CPU_GUEST_NICE, /* already included in NICE */
    HN_CPU_NFIELDS
};

/* /proc/loadavg: the 1, 5 and 15 minute load averages. 0 or -EINVAL. */
int hn_host_parse_loadavg(const char *text, double load[3]);

/* /proc/meminfo: MemTotal and MemAvailable in bytes (the file says kB, meaning KiB). A key
 * that is absent (MemAvailable before Linux 3.14) is set to NaN. 0, or -EINVAL without
 * MemTotal. */
int hn_host_parse_meminfo(const char *text, double *total_bytes, double *available_bytes);

/* /proc/stat: the aggregate "cpu" line, converted from clock ticks to seconds with clk_tck
 * (sysconf(_SC_CLK_TCK)). Fields the kernel does not print are NaN. Returns the number of
 * fields read (at least 4), or -EINVAL. */
int hn_host_parse_stat_cpu(const char *text, double clk_tck, double seconds[HN_CPU_NFIELDS]);

/* /proc/uptime: the first field, seconds since boot. 0 or -EINVAL. */
int hn_host_parse_uptime(const char *text, double *seconds);

/* /proc/sys/fs/file-nr: "allocated free max". 0 or -EINVAL. */
int hn_host_parse_file_nr(const char *text, uint64_t *allocated, uint64_t *max);

/* Reads <proc_root>/sys/fs/file-nr and file-max (file-max wins when both give a maximum).
 * Returns 0 or a negative errno. Allocated can exceed max: the kernel lets root go past it. */
int hn_host_file_handles(const char *proc_root, uint64_t *allocated, uint64_t *max);

extern const struct hn_collector hn_collector_host;

#endif
