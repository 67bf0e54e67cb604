/*
 * fakenvml.c - the NVML entry points of the fake library; see fakenvml.h.
 *
 * Everything lives in static storage guarded by one mutex: the parsed state (state.h), the
 * run-time integrators (energy, violation time), the device handles, a small pool of event
 * sets and the record of delivered Xids. Nothing is allocated, so nvmlShutdown has nothing to
 * free and no handle can dangle. Each device call goes begin() -> body -> end(): begin locks,
 * checks init, re-reads the state file when it changed, advances the integrators and turns a
 * bad handle, a lost GPU or an injected failure into its NVML error.
 *
 * Live values are a function of the state and of the time since nvmlInit_v2: utilization sits
 * near the load level, power and temperature follow utilization, and a small deterministic
 * wobble (a hash of GPU, quantity and whole second, no random numbers) makes them move. Values
 * set in the state file are returned exactly.
 */
#include "fakenvml.h"

#include "common/rng.h"
#include "common/util.h"
#include "profiles.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS     1000000ull
#define NS_PER_S      1000000000ull
#define CHECK_NS      (50 * NS_PER_MS) /* how often the state file is stat()ed */
#define MAX_FILE      ((size_t)64 * 1024)
#define MAX_SETS      16
#define MAX_DELIVERED 4096
#define MIB           (1024ull * 1024ull)

/* Clock event reasons that mean "clocks are held down", as opposed to idle/app settings. */
#define SLOWDOWN_REASONS                                                                           \
    (nvmlClocksEventReasonSwPowerCap | nvmlClocksThrottleReasonHwSlowdown |                        \
     nvmlClocksEventReasonSwThermalSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown |          \
     nvmlClocksThrottleReasonHwPowerBrakeSlowdown)
#define POWER_REASONS                                                                              \
    (nvmlClocksEventReasonSwPowerCap | nvmlClocksThrottleReasonHwPowerBrakeSlowdown)
#define THERMAL_REASONS                                                                            \
    (nvmlClocksEventReasonSwThermalSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown)

struct nvmlDevice_st {
    unsigned index;
};

struct nvmlEventSet_st {
    int in_use;
    unsigned long long types[HN_FAKE_MAX_GPUS]; /* registered event types per GPU */
};

struct file_id {
    int exists;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

struct gpu_rt {
    double energy_mj;
    unsigned long long viol_power_ns, viol_thermal_ns;
};

struct delivered {
    unsigned gpu;
    unsigned long long id;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned refs; /* nvmlInit_v2 minus nvmlShutdown calls */
static struct hn_fake_state state, scratch;
static char path[4096];
static char text[MAX_FILE + 1];
static struct file_id cur_id;
static uint64_t last_check_ns, t0_ns, last_advance_ns;
/* Optional accounting for benchmarks ($HN_FAKENVML_ACCOUNT at init): calls and time spent
 * inside the library's entry points, lock included. It uses the monotonic clock (a vDSO call,
 * ~20 ns) taken outside the lock, so that almost nothing of the measurement itself is billed
 * to the caller; a benchmark runs single-threaded, where that time is CPU time. */
static int account;
static unsigned long long account_calls, account_ns;
static _Thread_local uint64_t enter_ns;
static struct gpu_rt rt[HN_FAKE_MAX_GPUS];
static struct nvmlDevice_st devices[HN_FAKE_MAX_GPUS];
static struct nvmlEventSet_st sets[MAX_SETS];
/* Kept across nvmlShutdown on purpose: an Xid happens once per loaded library. */
static struct delivered delivered[MAX_DELIVERED];
static unsigned ndelivered;

/* ---- state file ---- */

/* Reads the state file into text (at most MAX_FILE bytes, cut at the last newline). */
static void read_state_file(void)
{
    size_t n = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        while (n < MAX_FILE) {
            ssize_t r = read(fd, text + n, MAX_FILE - n);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            n += (size_t)r;
        }
        char extra;
        if (n == MAX_FILE && read(fd, &extra, 1) == 1) {
            (void)fprintf(stderr, "fakenvml: %s: larger than %zu bytes, the rest is ignored\n",
                          path, MAX_FILE);
            while (n > 0 && text[n - 1] != '\n')
                n--;
        }
        close(fd);
    }
    text[n] = '\0';
}

static int same_file(const struct file_id *a, const struct file_id *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* Re-reads the state file when its identity changed (checked at most every CHECK_NS unless
 * force). A missing or unset file means the defaults. Caller holds lock. */
static void refresh(uint64_t now, int force)
{
    if (!force && now - last_check_ns < CHECK_NS)
        return;
    last_check_ns = now;

    struct file_id id;
    struct stat sb;
    memset(&id, 0, sizeof(id));
    if (path[0] && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
        id.exists = 1;
        id.dev = sb.st_dev;
        id.ino = sb.st_ino;
        id.size = sb.st_size;
        id.mtime = sb.st_mtim;
    }
    if (!force && same_file(&id, &cur_id))
        return;
    cur_id = id;
    if (id.exists) {
        read_state_file();
        hn_fake_state_parse(&scratch, text, path);
        state = scratch;
    } else {
        hn_fake_state_defaults(&state);
    }
}

/* ---- live values ---- */

/* A value in [-1, 1] that depends only on (gpu, salt, whole seconds since init): splitmix64. */
static double wobble(unsigned gpu, unsigned salt, uint64_t now)
{
    if (!state.jitter)
        return 0.0;
    uint64_t x = ((uint64_t)gpu << 40) ^ ((uint64_t)salt << 32) ^ ((now - t0_ns) / NS_PER_S);
    return (double)(hn_splitmix64(&x) >> 11) / (double)(1ull << 52) - 1.0;
}

static unsigned clampu(double v, double lo, double hi)
{
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    return (unsigned)lround(v);
}

/* Per-GPU value from one of the profile's capture arrays (wrapping past the capture). */
#define PROFILE_AT(field, i) (state.profile->field[(i) % state.profile->count])

static unsigned util_of(unsigned i, uint64_t now)
{
    const struct hn_fake_gpu *g = &state.gpu[i];
    if (g->util >= 0)
        return (unsigned)g->util;
    if (state.load == 0)
        return 0;
    return clampu(state.load + 3.0 * wobble(i, 1, now), 1, 100);
}

static unsigned mem_util_of(unsigned i, uint64_t now)
{
    unsigned u = util_of(i, now);
    if (u == 0)
        return 0;
    return clampu(u * 0.6 + (state.gpu[i].util >= 0 ? 0.0 : 2.0 * wobble(i, 2, now)), 0, 100);
}

static unsigned power_mw_of(unsigned i, uint64_t now)
{
    const struct hn_fake_gpu *g = &state.gpu[i];
    if (g->power_w >= 0)
        return (unsigned)g->power_w * 1000u;
    double idle = PROFILE_AT(power_idle_mw, i);
    double limit = state.profile->power_limit_w * 1000.0;
    double u = util_of(i, now) / 100.0;
    /* At full load a training job sits a little under the power limit. */
    double p = idle + (0.92 * limit - idle) * u;
    p += (u > 0 ? 0.01 * limit : 500.0) * wobble(i, 3, now);
    return clampu(p, 0, limit);
}

static unsigned temp_of(unsigned i, uint64_t now)
{
    const struct hn_fake_gpu *g = &state.gpu[i];
    if (g->temp >= 0)
        return (unsigned)g->temp;
    double idle = PROFILE_AT(temp_idle, i);
    double hot = state.profile->temp_gpu_max - 12.0;
    return clampu(idle + (hot - idle) * util_of(i, now) / 100.0 + wobble(i, 4, now), 0, 200);
}

static unsigned mem_temp_of(unsigned i, uint64_t now)
{
    const struct hn_fake_gpu *g = &state.gpu[i];
    if (g->mem_temp >= 0)
        return (unsigned)g->mem_temp;
    double idle = PROFILE_AT(mem_temp_idle, i);
    double hot = state.profile->temp_mem_max - 25.0;
    return clampu(idle + (hot - idle) * util_of(i, now) / 100.0 + wobble(i, 5, now), 0, 200);
}

static unsigned long long reasons_of(unsigned i, uint64_t now)
{
    const struct hn_fake_gpu *g = &state.gpu[i];
    if (g->has_throttle)
        return g->throttle;
    return util_of(i, now) == 0 ? nvmlClocksEventReasonGpuIdle : 0;
}

/* Graphics and SM clock: idle, boost, an explicit value, or 70 % of boost while held down. */
static unsigned sm_clock_of(unsigned i, uint64_t now)
{
    const struct hn_fake_gpu *g = &state.gpu[i];
    if (g->sm_clock >= 0)
        return (unsigned)g->sm_clock;
    if (reasons_of(i, now) & SLOWDOWN_REASONS)
        return state.profile->clk_max * 7 / 10 / 15 * 15;
    return util_of(i, now) == 0 ? state.profile->clk_idle : state.profile->clk_max;
}

static unsigned long long mem_used_mib_of(unsigned i, uint64_t now)
{
    const struct hn_fake_gpu *g = &state.gpu[i];
    unsigned long long usable = state.profile->mem_total_mib - state.profile->mem_reserved_mib;
    if (g->mem_used_mib >= 0)
        return (unsigned long long)g->mem_used_mib < usable ? (unsigned long long)g->mem_used_mib
                                                            : usable;
    return util_of(i, now) == 0 ? 0 : usable * 7 / 10;
}

/* Integrates energy and violation time from the last call to now. Caller holds lock. */
static void advance(uint64_t now)
{
    uint64_t dt = now - last_advance_ns;
    last_advance_ns = now;
    for (unsigned i = 0; i < state.count; i++) {
        if (state.gpu[i].lost)
            continue;
        rt[i].energy_mj += power_mw_of(i, now) * ((double)dt / NS_PER_S);
        unsigned long long r = reasons_of(i, now);
        if (r & POWER_REASONS)
            rt[i].viol_power_ns += dt;
        if (r & THERMAL_REASONS)
            rt[i].viol_thermal_ns += dt;
    }
}

static unsigned long long wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000u;
}

/* ---- call framing ---- */

/* Every entry point takes the lock through enter() and releases it through end(). */
static void enter(void)
{
    uint64_t t = account ? hn_mono_ns() : 0;
    pthread_mutex_lock(&lock);
    enter_ns = t;
}

static nvmlReturn_t end(nvmlReturn_t rc)
{
    uint64_t t0 = enter_ns;
    int acc = account;
    if (acc)
        account_calls++;
    pthread_mutex_unlock(&lock);
    if (acc)
        __atomic_fetch_add(&account_ns, hn_mono_ns() - t0, __ATOMIC_RELAXED);
    return rc;
}

struct call {
    unsigned i;
    const struct hn_fake_gpu *g;
    const struct hn_fake_profile *p;
    uint64_t now;
};

static int device_index(nvmlDevice_t dev)
{
    for (unsigned i = 0; i < HN_FAKE_MAX_GPUS; i++)
        if (dev == &devices[i])
            return (int)i;
    return -1;
}

static int set_index(nvmlEventSet_t set)
{
    for (unsigned i = 0; i < MAX_SETS; i++)
        if (set == &sets[i] && sets[i].in_use)
            return (int)i;
    return -1;
}

/* Locks (always; end() unlocks) and checks everything common to the device calls. */
static nvmlReturn_t begin(struct call *c, nvmlDevice_t dev, enum hn_fake_fn fn, int args_ok)
{
    enter();
    if (refs == 0)
        return NVML_ERROR_UNINITIALIZED;
    c->now = hn_mono_ns();
    refresh(c->now, 0);
    advance(c->now);
    int i = device_index(dev);
    if (i < 0 || !args_ok)
        return NVML_ERROR_INVALID_ARGUMENT;
    c->i = (unsigned)i;
    c->g = &state.gpu[i];
    c->p = state.profile;
    /* A handle whose GPU vanished because "count" went down behaves like a lost GPU. */
    if (c->i >= state.count || c->g->lost)
        return NVML_ERROR_GPU_IS_LOST;
    if (c->g->fail[fn])
        return c->g->fail[fn];
    return NVML_SUCCESS;
}

/* Locks and checks init for the calls that take no device. */
static nvmlReturn_t begin_global(uint64_t *now)
{
    enter();
    if (refs == 0)
        return NVML_ERROR_UNINITIALIZED;
    *now = hn_mono_ns();
    refresh(*now, 0);
    advance(*now);
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_out(char *dst, unsigned len, const char *src)
{
    if (strlen(src) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    hn_strlcpy(dst, src, len);
    return NVML_SUCCESS;
}

/* ---- library ---- */

nvmlReturn_t nvmlInit_v2(void)
{
    enter();
    uint64_t now = hn_mono_ns();
    if (refs > 0) {
        refs++;
        return end(NVML_SUCCESS);
    }
    const char *env = getenv("HN_FAKENVML_STATE");
    if (hn_strlcpy(path, env ? env : "", sizeof(path)) >= sizeof(path)) {
        (void)fprintf(stderr, "fakenvml: HN_FAKENVML_STATE is too long, using the defaults\n");
        path[0] = '\0';
    }
    const char *acc = getenv("HN_FAKENVML_ACCOUNT");
    account = acc && *acc && strcmp(acc, "0") != 0;
    if (account)
        enter_ns = hn_mono_ns(); /* enter() ran before the flag was known */
    refresh(now, 1);
    if (state.init_fail)
        return end(state.init_fail);
    t0_ns = last_advance_ns = now;
    memset(sets, 0, sizeof(sets));
    for (unsigned i = 0; i < HN_FAKE_MAX_GPUS; i++) {
        devices[i].index = i;
        memset(&rt[i], 0, sizeof(rt[i]));
        /* As if the driver had been loaded for one hour at idle power. */
        rt[i].energy_mj = PROFILE_AT(power_idle_mw, i) * 3600.0;
    }
    refs = 1;
    return end(NVML_SUCCESS);
}

nvmlReturn_t nvmlShutdown(void)
{
    enter();
    if (refs == 0)
        return end(NVML_ERROR_UNINITIALIZED);
    if (--refs == 0) {
        memset(sets, 0, sizeof(sets));
        memset(&cur_id, 0, sizeof(cur_id));
    }
    return end(NVML_SUCCESS);
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
        return "Timeout";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
        return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
        return "GPU requires reset";
    case NVML_ERROR_NO_DATA:
        return "No data";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
        return "Argument version mismatch";
    default:
        return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    uint64_t now;
    nvmlReturn_t rc = begin_global(&now);
    if (rc == NVML_SUCCESS)
        rc = version
                 ? copy_out(version, length, state.driver[0] ? state.driver : state.profile->driver)
                 : NVML_ERROR_INVALID_ARGUMENT;
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    uint64_t now;
    nvmlReturn_t rc = begin_global(&now);
    if (rc == NVML_SUCCESS && !deviceCount)
        rc = NVML_ERROR_INVALID_ARGUMENT;
    if (rc == NVML_SUCCESS)
        *deviceCount = state.count;
    return end(rc);
}

/* A lost GPU still has a handle: every call on it then answers NVML_ERROR_GPU_IS_LOST. */
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    uint64_t now;
    nvmlReturn_t rc = begin_global(&now);
    if (rc == NVML_SUCCESS && (!device || index >= state.count))
        rc = NVML_ERROR_INVALID_ARGUMENT;
    if (rc == NVML_SUCCESS)
        *device = &devices[index];
    return end(rc);
}

/* ---- identity ---- */

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_NAME, name != NULL);
    if (rc == NVML_SUCCESS)
        rc = copy_out(name, length, c.p->name);
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_UUID, uuid != NULL);
    if (rc == NVML_SUCCESS) {
        /* The captures' (scrubbed) pattern, with the node number in the fourth group. */
        char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        (void)snprintf(buf, sizeof(buf), "GPU-%08x-0000-0000-%04x-%012x", c.i, state.node, c.i);
        rc = copy_out(uuid, length, buf);
    }
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_PCI_INFO, pci != NULL);
    if (rc == NVML_SUCCESS) {
        /* GPUs past the capture get buses 0xE0.. on domain 0, clear of every capture's. */
        unsigned in_capture = c.i < c.p->count;
        unsigned domain = in_capture ? c.p->domain[c.i] : 0;
        unsigned bus = in_capture ? c.p->bus[c.i] : 0xE0 + c.i;
        unsigned slot = in_capture ? c.p->device[c.i] : 0;
        memset(pci, 0, sizeof(*pci));
        pci->domain = domain;
        pci->bus = bus;
        pci->device = slot;
        pci->pciDeviceId = c.p->pci_device_id;
        pci->pciSubSystemId = c.p->pci_subsys_id;
        (void)snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.0",
                       domain & 0xffff, bus & 0xff, slot & 0x1f);
        (void)snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.0", domain, bus & 0xff,
                       slot & 0x1f);
    }
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minor)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_MINOR, minor != NULL);
    if (rc == NVML_SUCCESS)
        *minor = c.i;
    return end(rc);
}

/* ---- load, clocks, power, thermal ---- */

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_UTILIZATION, utilization != NULL);
    if (rc == NVML_SUCCESS) {
        utilization->gpu = util_of(c.i, c.now);
        utilization->memory = mem_util_of(c.i, c.now);
    }
    return end(rc);
}

/* Video engines are idle in a training node; the sampling period is a one-second window. */
static nvmlReturn_t codec_util(nvmlDevice_t device, enum hn_fake_fn fn, unsigned int *util,
                               unsigned int *period)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, fn, util != NULL && period != NULL);
    if (rc == NVML_SUCCESS) {
        *util = 0;
        *period = 1000000;
    }
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
    return codec_util(device, HN_FAKE_FN_ENCODER, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs)
{
    return codec_util(device, HN_FAKE_FN_DECODER, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_CLOCK, clock != NULL);
    if (rc != NVML_SUCCESS)
        return end(rc);
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
        *clock = sm_clock_of(c.i, c.now);
        break;
    case NVML_CLOCK_MEM:
        *clock = c.p->clk_mem;
        break;
    case NVML_CLOCK_VIDEO:
        *clock = util_of(c.i, c.now) ? c.p->clk_video_max : c.p->clk_video_idle;
        break;
    default:
        rc = NVML_ERROR_INVALID_ARGUMENT;
    }
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_POWER, power != NULL);
    if (rc == NVML_SUCCESS)
        *power = power_mw_of(c.i, c.now);
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_ENERGY, energy != NULL);
    if (rc == NVML_SUCCESS)
        *energy = (unsigned long long)rt[c.i].energy_mj;
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensorType, unsigned int *temp)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_TEMPERATURE,
                            temp != NULL && sensorType == NVML_TEMPERATURE_GPU);
    if (rc == NVML_SUCCESS)
        *temp = temp_of(c.i, c.now);
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, int thresholdType,
                                               unsigned int *temp)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_TEMPERATURE_THRESHOLD, temp != NULL);
    if (rc != NVML_SUCCESS)
        return end(rc);
    switch (thresholdType) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
        *temp = c.p->temp_shutdown;
        break;
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
        *temp = c.p->temp_slowdown;
        break;
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
        *temp = c.p->temp_mem_max;
        break;
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
        *temp = c.p->temp_gpu_max;
        break;
    default:
        rc = NVML_ERROR_NOT_SUPPORTED;
    }
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *reasons)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_CLOCKS_EVENT_REASONS, reasons != NULL);
    if (rc == NVML_SUCCESS)
        *reasons = reasons_of(c.i, c.now);
    return end(rc);
}

/* The name before driver 535; same answer. */
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *reasons)
{
    return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}

nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device, int perfPolicyType,
                                          nvmlViolationTime_t *violTime)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_VIOLATION, violTime != NULL);
    if (rc != NVML_SUCCESS)
        return end(rc);
    if (perfPolicyType == NVML_PERF_POLICY_POWER)
        violTime->violationTime = rt[c.i].viol_power_ns;
    else if (perfPolicyType == NVML_PERF_POLICY_THERMAL)
        violTime->violationTime = rt[c.i].viol_thermal_ns;
    else
        return end(NVML_ERROR_NOT_SUPPORTED);
    violTime->referenceTime = wall_us();
    return end(rc);
}

/* ---- memory and its errors ---- */

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_MEMORY, memory != NULL);
    if (rc == NVML_SUCCESS && memory->version != nvmlMemory_v2)
        rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (rc == NVML_SUCCESS) {
        memory->total = c.p->mem_total_mib * MIB;
        memory->reserved = c.p->mem_reserved_mib * MIB;
        memory->used = mem_used_mib_of(c.i, c.now) * MIB;
        memory->free = memory->total - memory->reserved - memory->used;
    }
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                         unsigned long long *eccCounts)
{
    struct call c;
    int ok = eccCounts != NULL && (errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ||
                                   errorType == NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
    ok = ok && (counterType == NVML_VOLATILE_ECC || counterType == NVML_AGGREGATE_ECC);
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_ECC, ok);
    if (rc == NVML_SUCCESS)
        *eccCounts = c.g->ecc[errorType][counterType];
    return end(rc);
}

/* Page addresses are made up but stable: distinct per GPU, cause and page. */
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned int *pageCount,
                                       unsigned long long *addresses)
{
    struct call c;
    int ok =
        pageCount != NULL && (cause == NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS ||
                              cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_RETIRED_PAGES, ok);
    if (rc != NVML_SUCCESS)
        return end(rc);
    unsigned n = c.g->retired[cause];
    if (*pageCount < n) {
        *pageCount = n;
        return end(NVML_ERROR_INSUFFICIENT_SIZE);
    }
    if (n > 0 && !addresses)
        return end(NVML_ERROR_INVALID_ARGUMENT);
    for (unsigned k = 0; k < n; k++)
        addresses[k] =
            0x1000ull * (0x40000ull + c.i * 0x4000ull + (unsigned)cause * 0x2000ull + k * 3ull);
    *pageCount = n;
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, int *isPending)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_RETIRED_PENDING, isPending != NULL);
    if (rc == NVML_SUCCESS)
        *isPending = c.g->retired_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows,
                                       unsigned int *uncRows, unsigned int *isPending,
                                       unsigned int *failureOccurred)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_REMAPPED_ROWS,
                            corrRows && uncRows && isPending && failureOccurred);
    if (rc == NVML_SUCCESS) {
        *corrRows = c.g->remap_corr;
        *uncRows = c.g->remap_unc;
        *isPending = c.g->remap_pending;
        *failureOccurred = c.g->remap_failure;
    }
    return end(rc);
}

/* ---- PCIe and NVLink ---- */

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int *value)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_PCIE_REPLAY, value != NULL);
    if (rc == NVML_SUCCESS)
        *value = c.g->pcie_replay;
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_PCIE_GEN, currLinkGen != NULL);
    if (rc == NVML_SUCCESS)
        *currLinkGen = c.g->pcie_gen >= 0 ? (unsigned)c.g->pcie_gen : c.p->pcie_gen;
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_PCIE_WIDTH, currLinkWidth != NULL);
    if (rc == NVML_SUCCESS)
        *currLinkWidth = c.g->pcie_width >= 0 ? (unsigned)c.g->pcie_width : c.p->pcie_width;
    return end(rc);
}

/* Links past NVML's maximum are a bad argument; links the model lacks are not supported. */
static nvmlReturn_t check_link(const struct call *c, unsigned link)
{
    if (link >= NVML_NVLINK_MAX_LINKS)
        return NVML_ERROR_INVALID_ARGUMENT;
    return link < c->p->nvlinks ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int *isActive)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_NVLINK_STATE, isActive != NULL);
    if (rc == NVML_SUCCESS)
        rc = check_link(&c, link);
    if (rc == NVML_SUCCESS)
        *isActive = (c.g->nvlink_down >> link) & 1u ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
    return end(rc);
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link, int counter,
                                             unsigned long long *counterValue)
{
    struct call c;
    int ok = counterValue != NULL && counter >= NVML_NVLINK_ERROR_DL_REPLAY &&
             counter <= NVML_NVLINK_ERROR_DL_CRC_DATA;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_NVLINK_ERRORS, ok);
    if (rc == NVML_SUCCESS)
        rc = check_link(&c, link);
    if (rc == NVML_SUCCESS)
        *counterValue = c.g->nvlink_err[link][counter];
    return end(rc);
}

/* ---- field values ---- */

static void field_value(const struct call *c, nvmlFieldValue_t *v, unsigned long long ts)
{
    v->timestamp = (long long)ts;
    v->latencyUsec = 0;
    v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    memset(&v->value, 0, sizeof(v->value));
    switch (v->fieldId) {
    case NVML_FI_DEV_MEMORY_TEMP:
        v->nvmlReturn = c->g->fail[HN_FAKE_FN_FIELD_MEMORY_TEMP];
        v->value.uiVal = mem_temp_of(c->i, c->now);
        break;
    case NVML_FI_DEV_GET_GPU_RECOVERY_ACTION:
        v->nvmlReturn = c->g->fail[HN_FAKE_FN_FIELD_RECOVERY_ACTION];
        v->value.uiVal = c->g->recovery_action;
        break;
    default:
        v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
    if (v->nvmlReturn != NVML_SUCCESS)
        memset(&v->value, 0, sizeof(v->value));
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                      nvmlFieldValue_t *values)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_FIELD_VALUES, values != NULL && valuesCount > 0);
    if (rc == NVML_SUCCESS) {
        unsigned long long ts = wall_us();
        for (int k = 0; k < valuesCount; k++)
            field_value(&c, &values[k], ts);
    }
    return end(rc);
}

/* ---- events ---- */

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    uint64_t now;
    nvmlReturn_t rc = begin_global(&now);
    if (rc == NVML_SUCCESS && !set)
        rc = NVML_ERROR_INVALID_ARGUMENT;
    if (rc != NVML_SUCCESS)
        return end(rc);
    for (unsigned i = 0; i < MAX_SETS; i++)
        if (!sets[i].in_use) {
            memset(&sets[i], 0, sizeof(sets[i]));
            sets[i].in_use = 1;
            *set = &sets[i];
            return end(NVML_SUCCESS);
        }
    (void)fprintf(stderr, "fakenvml: more than %d event sets\n", MAX_SETS);
    return end(NVML_ERROR_UNKNOWN);
}

/* Any event type is accepted; only nvmlEventTypeXidCriticalError is ever delivered. */
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set)
{
    struct call c;
    nvmlReturn_t rc = begin(&c, device, HN_FAKE_FN_REGISTER_EVENTS, 1);
    if (rc == NVML_SUCCESS && set_index(set) < 0)
        rc = NVML_ERROR_INVALID_ARGUMENT;
    if (rc == NVML_SUCCESS)
        set->types[c.i] |= eventTypes;
    return end(rc);
}

static int was_delivered(unsigned gpu, unsigned long long id)
{
    for (unsigned k = 0; k < ndelivered; k++)
        if (delivered[k].gpu == gpu && delivered[k].id == id)
            return 1;
    return 0;
}

/* Takes the first Xid of the state that set listens for and nobody has received yet. */
static int next_xid(nvmlEventSet_t set, nvmlEventData_t *data)
{
    for (unsigned k = 0; k < state.nxid; k++) {
        const struct hn_fake_xid *x = &state.xid[k];
        if (x->gpu >= state.count || !(set->types[x->gpu] & nvmlEventTypeXidCriticalError) ||
            was_delivered(x->gpu, x->id))
            continue;
        if (ndelivered == MAX_DELIVERED) {
            static int warned;
            if (!warned++)
                (void)fprintf(stderr, "fakenvml: more than %d Xids delivered, dropping the rest\n",
                              MAX_DELIVERED);
            return 0;
        }
        delivered[ndelivered++] = (struct delivered){.gpu = x->gpu, .id = x->id};
        memset(data, 0, sizeof(*data));
        data->device = &devices[x->gpu];
        data->eventType = nvmlEventTypeXidCriticalError;
        data->eventData = x->code;
        data->gpuInstanceId = 0xFFFFFFFFu; /* not a MIG instance */
        data->computeInstanceId = 0xFFFFFFFFu;
        return 1;
    }
    return 0;
}

/* Polls the state every 50 ms until an Xid is due or timeoutms passed; sleeps unlocked. */
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
    uint64_t deadline = hn_mono_ns() + (uint64_t)timeoutms * NS_PER_MS;
    for (;;) {
        uint64_t now;
        nvmlReturn_t rc = begin_global(&now);
        if (rc == NVML_SUCCESS && (set_index(set) < 0 || !data))
            rc = NVML_ERROR_INVALID_ARGUMENT;
        if (rc != NVML_SUCCESS)
            return end(rc);
        if (next_xid(set, data))
            return end(NVML_SUCCESS);
        end(NVML_SUCCESS);

        now = hn_mono_ns();
        if (now >= deadline)
            return NVML_ERROR_TIMEOUT;
        uint64_t nap = deadline - now < CHECK_NS ? deadline - now : CHECK_NS;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)nap};
        nanosleep(&ts, NULL);
    }
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    enter();
    if (refs == 0)
        return end(NVML_ERROR_UNINITIALIZED);
    int i = set_index(set);
    if (i < 0)
        return end(NVML_ERROR_INVALID_ARGUMENT);
    sets[i].in_use = 0;
    return end(NVML_SUCCESS);
}

void hn_fakenvml_account(unsigned long long *calls, unsigned long long *ns)
{
    pthread_mutex_lock(&lock);
    *calls = account_calls;
    *ns = __atomic_load_n(&account_ns, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
}
