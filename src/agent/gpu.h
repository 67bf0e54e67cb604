/*
 * gpu.h - the GPU collector: every GPU through NVML, rendered as dcgm-exporter does.
 *
 * A struct hn_gpu_set owns the loaded NVML (agent/nvml.h), one struct hn_gpu per device with
 * its handle (kept open between cycles), identity labels formatted once, and the last values
 * read. hn_gpus_collect() refreshes the values without heap allocation; hn_gpus_render() writes
 * the DCGM_FI_DEV_* families (names, types and labels as dcgm-exporter: gpu, UUID, pci_bus_id,
 * device, modelName, Hostname, DCGM_FI_DRIVER_VERSION) and houston_gpu_* families for what
 * dcgm-exporter does not export by default (per-link NVLink counters, clock-event reasons,
 * recovery action, lost GPUs).
 *
 * A value NVML cannot give (NOT_SUPPORTED, function missing from an old driver) is NaN and
 * not rendered; the first time a field is unsupported the log says so once. A GPU that
 * returns GPU_IS_LOST is marked lost (houston_gpu_up 0) and retried each cycle.
 *
 * Xid events: hn_gpus_events_start() runs one thread blocked in nvmlEventSetWait_v2; it adds
 * each event to its GPU's pending count and last code under a lock, and hn_gpus_collect()
 * takes them over. A burst cannot overflow anything: counts add up, the newest code wins.
 * Everything else belongs to the collect thread.
 *
 * An NVML error other than NOT_SUPPORTED and GPU_IS_LOST is counted per GPU
 * (houston_gpu_nvml_errors_total), logged once per GPU and field, and makes the cycle report
 * an error. A GPU that was lost or unreadable at discovery is discovered again (identity,
 * NVLinks, Xid registration) once it answers.
 */
#ifndef HN_GPU_H
#define HN_GPU_H

#include "agent/collector.h"
#include "agent/nvml.h"
#include "common/fields.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define HN_MAX_GPUS 64
#define HN_XID_RING 64

struct hn_gpu {
    nvmlDevice_t dev;
    unsigned index;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    char pci_bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
    char labels[1536];  /* dcgm-exporter's label set (DCGM_FI_* series), formatted once */
    char hlabels[1536]; /* the same in snake_case (houston_gpu_* series), formatted once */
    int lost;           /* the last cycle saw NVML_ERROR_GPU_IS_LOST */
    int identified;     /* UUID, name and PCI id were read */
    int registered;     /* registered for Xid events */
    unsigned nlinks;    /* NVLinks that answered at discovery */
    double v[HN_F_COUNT];
    double link[NVML_NVLINK_MAX_LINKS][HN_L_COUNT];
    uint64_t xid_events;  /* Xid events seen through NVML */
    uint64_t nvml_errors; /* NVML calls that failed unexpectedly */
};

struct hn_gpu_set {
    struct hn_nvml nvml;
    int open;
    char lib[4096];
    char hostname[256];
    char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    unsigned count;
    struct hn_gpu gpus[HN_MAX_GPUS];
    uint64_t unsupported_logged[HN_MAX_GPUS]; /* one bit per field, says "once" */
    uint64_t error_logged[HN_MAX_GPUS];       /* one bit per field, says "once" */
    unsigned cycle_errors;                    /* unexpected NVML errors this cycle */
    uint64_t next_open_ns;                    /* retry time while NVML cannot be loaded */
    char open_error[256];
    /* Xid event thread */
    nvmlEventSet_t events;
    pthread_t thread;
    int thread_running;
    atomic_int stop;
    pthread_mutex_t lock;                     /* guards the three fields below */
    uint64_t xid_pending[HN_MAX_GPUS];        /* events not yet taken by collect */
    unsigned long long xid_last[HN_MAX_GPUS]; /* newest code among them */
    uint64_t xid_unknown_device;              /* events for a handle no GPU has */
};

/* Prepares the set; loads NVML and enumerates GPUs. A failure to load leaves the set usable
 * (count 0, open 0, reason in open_error); hn_gpus_collect() retries every 60 s. */
void hn_gpus_init(struct hn_gpu_set *s, const char *lib, const char *hostname);
void hn_gpus_fini(struct hn_gpu_set *s);
int hn_gpus_collect(struct hn_gpu_set *s);
void hn_gpus_render(struct hn_gpu_set *s, struct hn_expo *e);
/* Formats g's label sets (labels, hlabels) from its identity and s's hostname and driver.
 * Called at discovery; exported for tools that render agent-format series. */
void hn_gpus_format_labels(const struct hn_gpu_set *s, struct hn_gpu *g);
/* Starts / stops the Xid event thread (no-op when NVML is not open). */
int hn_gpus_events_start(struct hn_gpu_set *s);
void hn_gpus_events_stop(struct hn_gpu_set *s);

extern const struct hn_collector hn_collector_gpu;

#endif
