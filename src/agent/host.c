/*
 * host.c - the host collector (see host.h).
 *
 * File formats: proc(5) for loadavg, meminfo, stat and uptime; the kernel's
 * Documentation/admin-guide/sysctl/fs.rst for file-nr and file-max; and
 * Documentation/hwmon/sysfs-interface.rst for hwmon (temp*_input in millidegrees Celsius,
 * power*_input and power*_average in microwatts, *_label an optional sensor name).
 */
#include "agent/host.h"

#include "agent/config.h"
#include "common/fsroot.h"
#include "common/log.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SENSORS_MAX   256 /* hwmon sensors tracked */
#define SENSOR_LABELS 512 /* preformatted hwmon="..",chip="..",sensor=".." */
#define NAME_MAX_LEN  64  /* chip and sensor names from *_label and name files */

/* ---- parsers ---------------------------------------------------------------------------- */

/* Copies the line starting at s (without its newline, capped at size-1 bytes) into out and
 * returns the start of the next line, or NULL at the end of the text. */
static const char *copy_line(const char *s, char *out, size_t size)
{
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    if (n >= size)
        n = size - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    return nl ? nl + 1 : NULL;
}

/* Returns the next blank-separated field of the line at *p, NUL-terminated in place, or NULL
 * when the line has no more fields. */
static char *next_field(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0')
        return NULL;
    char *start = s;
    while (*s && *s != ' ' && *s != '\t')
        s++;
    if (*s)
        *s++ = '\0';
    *p = s;
    return start;
}

int hn_host_parse_loadavg(const char *text, double load[3])
{
    char line[256];
    copy_line(text, line, sizeof(line));
    char *p = line;
    double v[3];
    for (int i = 0; i < 3; i++) {
        const char *f = next_field(&p);
        if (!f || hn_parse_double(f, &v[i]) < 0 || !(v[i] >= 0) || isinf(v[i]))
            return -EINVAL;
    }
    memcpy(load, v, sizeof(v));
    return 0;
}

/* Parses "   16318008 kB" into bytes. */
static int meminfo_value(char *p, double *bytes)
{
    const char *num = next_field(&p);
    const char *unit = next_field(&p);
    uint64_t v;
    if (!num || hn_parse_u64(num, 10, &v) < 0)
        return -EINVAL;
    if (!unit)
        *bytes = (double)v;
    else if (strcmp(unit, "kB") == 0)
        *bytes = (double)v * 1024.0;
    else
        return -EINVAL;
    return 0;
}

int hn_host_parse_meminfo(const char *text, double *total_bytes, double *available_bytes)
{
    double total = NAN, avail = NAN;
    char line[256];
    for (const char *s = text; s && *s;) {
        s = copy_line(s, line, sizeof(line));
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        if (strcmp(line, "MemTotal") == 0 && meminfo_value(colon + 1, &total) < 0)
            return -EINVAL;
        if (strcmp(line, "MemAvailable") == 0 && meminfo_value(colon + 1, &avail) < 0)
            return -EINVAL;
        if (!isnan(total) && !isnan(avail))
            break;
    }
    if (isnan(total))
        return -EINVAL;
    *total_bytes = total;
    *available_bytes = avail;
    return 0;
}

int hn_host_parse_stat_cpu(const char *text, double clk_tck, double seconds[HN_CPU_NFIELDS])
{
    if (!(clk_tck > 0))
        return -EINVAL;
    char line[512];
    for (const char *s = text; s && *s;) {
        s = copy_line(s, line, sizeof(line));
        char *p = line;
        const char *key = next_field(&p);
        if (!key || strcmp(key, "cpu") != 0)
            continue;
        double v[HN_CPU_NFIELDS];
        int n = 0;
        const char *f;
        while (n < HN_CPU_NFIELDS && (f = next_field(&p)) != NULL) {
            uint64_t ticks;
            if (hn_parse_u64(f, 10, &ticks) < 0)
                return -EINVAL;
            v[n++] = (double)ticks / clk_tck;
        }
        if (n < 4) /* user nice system idle: every kernel has them */
            return -EINVAL;
        for (int i = 0; i < HN_CPU_NFIELDS; i++)
            seconds[i] = i < n ? v[i] : NAN;
        return n;
    }
    return -EINVAL;
}

int hn_host_parse_uptime(const char *text, double *seconds)
{
    char line[128];
    copy_line(text, line, sizeof(line));
    char *p = line;
    const char *f = next_field(&p);
    double v;
    if (!f || hn_parse_double(f, &v) < 0 || !(v >= 0) || isinf(v))
        return -EINVAL;
    *seconds = v;
    return 0;
}

int hn_host_parse_file_nr(const char *text, uint64_t *allocated, uint64_t *max)
{
    char line[128];
    copy_line(text, line, sizeof(line));
    char *p = line;
    uint64_t v[3];
    for (int i = 0; i < 3; i++) {
        const char *f = next_field(&p);
        if (!f || hn_parse_u64(f, 10, &v[i]) < 0)
            return -EINVAL;
    }
    *allocated = v[0];
    *max = v[2];
    return 0;
}

int hn_host_file_handles(const char *proc_root, uint64_t *allocated, uint64_t *max)
{
    char path[PATH_MAX], buf[128];
    int rc = hn_path(path, sizeof(path), proc_root, "/sys/fs/file-nr");
    if (rc < 0)
        return rc;
    long n = hn_read_file(path, buf, sizeof(buf));
    if (n < 0)
        return (int)n;
    uint64_t a, m;
    rc = hn_host_parse_file_nr(buf, &a, &m);
    if (rc < 0)
        return rc;
    /* file-max is the tunable itself; file-nr's third field mirrors it. */
    uint64_t fm;
    if (hn_path(path, sizeof(path), proc_root, "/sys/fs/file-max") == 0 &&
        hn_read_u64(path, &fm) == 0)
        m = fm;
    *allocated = a;
    *max = m;
    return 0;
}

/* ---- hwmon sensors ---------------------------------------------------------------------- */

enum sensor_kind { SENSOR_TEMP, SENSOR_POWER };

struct sensor {
    char dir[32];  /* hwmonN */
    char file[32]; /* temp1_input, power1_average, ... */
    unsigned hwmon, index;
    enum sensor_kind kind;
    char labels[SENSOR_LABELS];
    double val; /* degrees Celsius or watts; NaN when unread */
};

/* Matches PREFIX<digits>SUFFIX (e.g. temp12_input) and returns the number in *idx. */
static int match_attr(const char *name, const char *prefix, const char *suffix, unsigned *idx)
{
    size_t pl = strlen(prefix);
    if (strncmp(name, prefix, pl) != 0)
        return 0;
    const char *d = name + pl;
    unsigned v = 0;
    int digits = 0;
    while (*d >= '0' && *d <= '9' && digits < 6) {
        v = v * 10 + (unsigned)(*d - '0');
        d++;
        digits++;
    }
    if (!digits || strcmp(d, suffix) != 0)
        return 0;
    *idx = v;
    return 1;
}

static int sensor_cmp(const void *a, const void *b)
{
    const struct sensor *x = a, *y = b;
    if (x->hwmon != y->hwmon)
        return x->hwmon < y->hwmon ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Reads a short name file (chip name, sensor label) into out; "" when absent. */
static void read_name(const char *root, const char *dir, const char *file, char *out, size_t size)
{
    char path[PATH_MAX];
    out[0] = '\0';
    if (hn_path(path, sizeof(path), root, "/class/hwmon/%s/%s", dir, file) < 0 ||
        hn_read_file(path, out, size) < 0) {
        out[0] = '\0';
        return;
    }
    hn_trim(out);
}

static int attr_exists(const char *root, const char *dir, const char *file)
{
    char path[PATH_MAX];
    return hn_path(path, sizeof(path), root, "/class/hwmon/%s/%s", dir, file) == 0 &&
           access(path, F_OK) == 0;
}

/* Adds the temperature and power inputs of one hwmon directory to s[*n..max). */
static void scan_hwmon(const char *root, const char *dir, unsigned num, struct sensor *s, int *n,
                       int max)
{
    char path[PATH_MAX], chip[NAME_MAX_LEN];
    if (hn_path(path, sizeof(path), root, "/class/hwmon/%s", dir) < 0)
        return;
    DIR *d = opendir(path);
    if (!d)
        return;
    read_name(root, dir, "name", chip, sizeof(chip));
    struct dirent *de;
    while (*n < max && (de = readdir(d)) != NULL) {
        unsigned idx;
        enum sensor_kind kind;
        const char *prefix;
        char other[48];
        if (match_attr(de->d_name, "temp", "_input", &idx)) {
            kind = SENSOR_TEMP;
            prefix = "temp";
        } else if (match_attr(de->d_name, "power", "_input", &idx)) {
            kind = SENSOR_POWER;
            prefix = "power";
        } else if (match_attr(de->d_name, "power", "_average", &idx)) {
            /* The instantaneous reading wins when a chip has both. */
            (void)snprintf(other, sizeof(other), "power%u_input", idx);
            if (attr_exists(root, dir, other))
                continue;
            kind = SENSOR_POWER;
            prefix = "power";
        } else {
            continue;
        }
        struct sensor *x = &s[*n];
        memset(x, 0, sizeof(*x));
        hn_strlcpy(x->dir, dir, sizeof(x->dir));
        hn_strlcpy(x->file, de->d_name, sizeof(x->file));
        x->hwmon = num;
        x->index = idx;
        x->kind = kind;
        x->val = NAN;

        /* Indexes have at most 6 digits (match_attr), so these names always fit. */
        char sensor[NAME_MAX_LEN];
        (void)snprintf(other, sizeof(other), "%s%u_label", prefix, idx);
        read_name(root, dir, other, sensor, sizeof(sensor));
        if (!sensor[0])
            (void)snprintf(sensor, sizeof(sensor), "%s%u", prefix, idx);
        size_t len = 0;
        /* Two sensors must never render the same label set (Prometheus would refuse the
         * whole scrape), so a sensor whose labels do not fit is left out, not cut. */
        if (hn_expo_label(x->labels, sizeof(x->labels), &len, "hwmon", dir) ||
            hn_expo_label(x->labels, sizeof(x->labels), &len, "chip", chip) ||
            hn_expo_label(x->labels, sizeof(x->labels), &len, "sensor", sensor)) {
            hn_warn("host: hwmon %s sensor %s: names too long for labels; not exported", dir,
                    sensor);
            continue;
        }
        (*n)++;
    }
    closedir(d);
}

/* Lists the sensors under <sysfs_root>/class/hwmon, sorted; returns how many. */
static int scan_sensors(const char *root, struct sensor *s, int max)
{
    char path[PATH_MAX];
    if (hn_path(path, sizeof(path), root, "/class/hwmon") < 0)
        return 0;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while (n < max && (de = readdir(d)) != NULL) {
        unsigned num;
        if (strlen(de->d_name) >= sizeof(s->dir) || !match_attr(de->d_name, "hwmon", "", &num))
            continue;
        scan_hwmon(root, de->d_name, num, s, &n, max);
    }
    closedir(d);
    qsort(s, (size_t)n, sizeof(*s), sensor_cmp);
    return n;
}

/* ---- the collector ---------------------------------------------------------------------- */

struct host_state {
    char proc[PATH_MAX];
    char sys[PATH_MAX];
    double clk_tck;

    double load[3];
    double mem_total, mem_available;
    double cpu[HN_CPU_NFIELDS];
    double uptime;
    double files_allocated, files_max;
    int nsensors;
    struct sensor *sensors;

    struct hn_complain c_loadavg, c_meminfo, c_stat, c_uptime, c_files, c_hwmon;
};

static void host_fini(void *state)
{
    struct host_state *st = state;
    if (!st)
        return;
    free(st->sensors);
    free(st);
}

static void snapshot_clear(struct host_state *st)
{
    st->load[0] = st->load[1] = st->load[2] = NAN;
    st->mem_total = st->mem_available = NAN;
    for (int i = 0; i < HN_CPU_NFIELDS; i++)
        st->cpu[i] = NAN;
    st->uptime = NAN;
    st->files_allocated = st->files_max = NAN;
}

static int host_init(const struct hn_agent_config *cfg, void **state)
{
    char path[PATH_MAX];
    /* Without a readable loadavg the proc root is wrong: say so once, at start. */
    int rc = hn_path(path, sizeof(path), cfg->proc_root, "/loadavg");
    if (rc < 0)
        return rc;
    if (access(path, R_OK) != 0)
        return -errno;

    struct host_state *st = xcalloc(1, sizeof(*st));
    hn_strlcpy(st->proc, cfg->proc_root, sizeof(st->proc));
    hn_strlcpy(st->sys, cfg->sysfs_root, sizeof(st->sys));
    long tck = sysconf(_SC_CLK_TCK);
    st->clk_tck = tck > 0 ? (double)tck : 100.0;
    snapshot_clear(st);
    st->sensors = xcalloc(SENSORS_MAX, sizeof(*st->sensors));
    st->nsensors = scan_sensors(st->sys, st->sensors, SENSORS_MAX);
    hn_info("host: %d hwmon sensor(s)", st->nsensors);
    *state = st;
    return 0;
}

/* Reads <proc>/<file> into buf and hands it to parse; complains on failure. Returns 0 or a
 * negative errno. */
static int read_proc(struct host_state *st, const char *file, char *buf, size_t size,
                     struct hn_complain *c)
{
    char path[PATH_MAX];
    int rc = hn_path(path, sizeof(path), st->proc, "/%s", file);
    long n = rc < 0 ? rc : hn_read_file(path, buf, size);
    if (n < 0) {
        hn_complain(c, "host: cannot read %s: %s", path, strerror((int)-n));
        return (int)n;
    }
    return 0;
}

static int parsed(int rc, struct host_state *st, const char *file, struct hn_complain *c)
{
    if (rc < 0)
        hn_complain(c, "host: cannot parse %s/%s", st->proc, file);
    else
        hn_complain_clear(c, "host: %s/%s readable again", st->proc, file);
    return rc < 0 ? rc : 0;
}

static int collect_proc(struct host_state *st)
{
    char buf[8192];
    int first, rc;

    rc = read_proc(st, "loadavg", buf, sizeof(buf), &st->c_loadavg);
    if (rc == 0)
        rc = parsed(hn_host_parse_loadavg(buf, st->load), st, "loadavg", &st->c_loadavg);
    first = rc;

    rc = read_proc(st, "meminfo", buf, sizeof(buf), &st->c_meminfo);
    if (rc == 0)
        rc = parsed(hn_host_parse_meminfo(buf, &st->mem_total, &st->mem_available), st, "meminfo",
                    &st->c_meminfo);
    first = first ? first : rc;

    /* Only the first line of /proc/stat is used; 8 KiB always holds it. */
    rc = read_proc(st, "stat", buf, sizeof(buf), &st->c_stat);
    if (rc == 0)
        rc = parsed(hn_host_parse_stat_cpu(buf, st->clk_tck, st->cpu), st, "stat", &st->c_stat);
    first = first ? first : rc;

    rc = read_proc(st, "uptime", buf, sizeof(buf), &st->c_uptime);
    if (rc == 0)
        rc = parsed(hn_host_parse_uptime(buf, &st->uptime), st, "uptime", &st->c_uptime);
    first = first ? first : rc;

    uint64_t alloc, max;
    rc = hn_host_file_handles(st->proc, &alloc, &max);
    if (rc == 0) {
        st->files_allocated = (double)alloc;
        st->files_max = (double)max;
        hn_complain_clear(&st->c_files, "host: %s/sys/fs/file-nr readable again", st->proc);
    } else {
        hn_complain(&st->c_files, "host: cannot read %s/sys/fs/file-nr: %s", st->proc,
                    strerror(-rc));
    }
    return first ? first : rc;
}

static int collect_sensors(struct host_state *st)
{
    int first = 0;
    const struct sensor *bad = NULL;
    for (int i = 0; i < st->nsensors; i++) {
        struct sensor *s = &st->sensors[i];
        char path[PATH_MAX], buf[64];
        int rc = hn_path(path, sizeof(path), st->sys, "/class/hwmon/%s/%s", s->dir, s->file);
        long n = rc < 0 ? rc : hn_read_file(path, buf, sizeof(buf));
        int64_t v = 0;
        if (n >= 0)
            n = hn_parse_i64(buf, 10, &v);
        if (n < 0) {
            s->val = NAN;
            if (!first) {
                first = (int)n;
                bad = s;
            }
            continue;
        }
        s->val = s->kind == SENSOR_TEMP ? (double)v / 1e3 : (double)v / 1e6;
    }
    /* Sensors of sleeping devices (NVMe, GPUs) can fail with EIO or ENODATA now and then. */
    if (bad)
        hn_complain(&st->c_hwmon, "host: cannot read hwmon %s/%s: %s", bad->dir, bad->file,
                    strerror(-first));
    else
        hn_complain_clear(&st->c_hwmon, "host: hwmon sensors readable again");
    return first;
}

static int host_collect(void *state)
{
    struct host_state *st = state;
    snapshot_clear(st);
    int rc = collect_proc(st);
    int rs = collect_sensors(st);
    return rc ? rc : rs;
}

static void render_sensors(struct host_state *st, struct hn_expo *e, enum sensor_kind kind,
                           const char *name, const char *help)
{
    int any = 0;
    for (int i = 0; i < st->nsensors && !any; i++)
        any = st->sensors[i].kind == kind;
    if (!any)
        return;
    hn_expo_family(e, name, help, HN_GAUGE);
    for (int i = 0; i < st->nsensors; i++) {
        const struct sensor *s = &st->sensors[i];
        if (s->kind == kind)
            hn_expo_sample(e, name, s->labels, s->val);
    }
}

static void host_render(void *state, struct hn_expo *e)
{
    static const char *const mode_labels[] = {
        "mode=\"user\"",   "mode=\"nice\"", "mode=\"system\"",  "mode=\"idle\"",
        "mode=\"iowait\"", "mode=\"irq\"",  "mode=\"softirq\"", "mode=\"steal\""};
    _Static_assert(HN_ARRAY_LEN(mode_labels) == HN_CPU_GUEST, "one label per non-guest field");
    struct host_state *st = state;

    hn_expo_one(e, "houston_host_load1", "1-minute load average (/proc/loadavg).", HN_GAUGE,
                st->load[0]);
    hn_expo_one(e, "houston_host_load5", "5-minute load average (/proc/loadavg).", HN_GAUGE,
                st->load[1]);
    hn_expo_one(e, "houston_host_load15", "15-minute load average (/proc/loadavg).", HN_GAUGE,
                st->load[2]);
    hn_expo_one(e, "houston_host_memory_total_bytes", "MemTotal from /proc/meminfo, in bytes.",
                HN_GAUGE, st->mem_total);
    hn_expo_one(e, "houston_host_memory_available_bytes",
                "MemAvailable from /proc/meminfo (memory available without swapping), in bytes.",
                HN_GAUGE, st->mem_available);

    hn_expo_family(e, "houston_host_cpu_seconds_total",
                   "CPU time of all CPUs by mode, from the cpu line of /proc/stat, in seconds "
                   "(guest time is included in user and nice).",
                   HN_COUNTER);
    for (int i = 0; i < HN_CPU_GUEST; i++)
        hn_expo_sample(e, "houston_host_cpu_seconds_total", mode_labels[i], st->cpu[i]);
    hn_expo_family(e, "houston_host_cpu_guest_seconds_total",
                   "CPU time spent running guests, from /proc/stat, in seconds (also counted in "
                   "houston_host_cpu_seconds_total user and nice).",
                   HN_COUNTER);
    hn_expo_sample(e, "houston_host_cpu_guest_seconds_total", mode_labels[HN_CPU_USER],
                   st->cpu[HN_CPU_GUEST]);
    hn_expo_sample(e, "houston_host_cpu_guest_seconds_total", mode_labels[HN_CPU_NICE],
                   st->cpu[HN_CPU_GUEST_NICE]);

    hn_expo_one(e, "houston_host_uptime_seconds", "Seconds since boot (/proc/uptime).", HN_GAUGE,
                st->uptime);
    hn_expo_one(e, "houston_host_file_handles_allocated",
                "File handles allocated by the kernel (first field of /proc/sys/fs/file-nr).",
                HN_GAUGE, st->files_allocated);
    hn_expo_one(e, "houston_host_file_handles_max",
                "Maximum number of file handles (/proc/sys/fs/file-max).", HN_GAUGE, st->files_max);

    render_sensors(st, e, SENSOR_TEMP, "houston_host_hwmon_temperature_celsius",
                   "Temperature sensor reading from hwmon temp*_input, in degrees Celsius.");
    render_sensors(st, e, SENSOR_POWER, "houston_host_hwmon_power_watts",
                   "Power sensor reading from hwmon power*_input (or power*_average), in watts.");
}

const struct hn_collector hn_collector_host = {
    .name = "host",
    .init = host_init,
    .collect = host_collect,
    .render = host_render,
    .fini = host_fini,
};
