/*
 * test_host.c - the host collector and its /proc parsers, against tests/fixtures/host (real
 * file-nr/file-max from gpud, synthetic loadavg/meminfo/stat/uptime/hwmon; see SOURCE.md).
 */
#include "testutil.h"

#include "agent/config.h"
#include "agent/host.h"

#include <errno.h>
#include <math.h>

#define HOST (&hn_collector_host)

/* Points cfg (zeroed first) at the proc and sys roots. */
static void set_roots(struct hn_agent_config *cfg, const char *proc, const char *sys)
{
    memset(cfg, 0, sizeof(*cfg));
    assert_true(hn_strlcpy(cfg->proc_root, proc, sizeof(cfg->proc_root)) < sizeof(cfg->proc_root));
    assert_true(hn_strlcpy(cfg->sysfs_root, sys, sizeof(cfg->sysfs_root)) <
                sizeof(cfg->sysfs_root));
}

/* Starts the host collector on the proc and sys roots; b gets a 1 MiB cap. */
static void *open_host(const char *proc, const char *sys, struct hn_buf *b)
{
    struct hn_agent_config cfg;
    set_roots(&cfg, proc, sys);
    return tu_collector_open(HOST, &cfg, b);
}

static void test_parse_loadavg_uptime(void **unused)
{
    (void)unused;
    double l[3] = {0, 0, 0};
    assert_int_equal(hn_host_parse_loadavg("1.25 0.75 0.50 3/1234 56789\n", l), 0);
    assert_true(l[0] == 1.25 && l[1] == 0.75 && l[2] == 0.5);
    assert_int_equal(hn_host_parse_loadavg("1.25 0.75", l), -EINVAL);
    assert_int_equal(hn_host_parse_loadavg("1.25 x 0.5", l), -EINVAL);
    assert_int_equal(hn_host_parse_loadavg("-1 0 0", l), -EINVAL);
    assert_int_equal(hn_host_parse_loadavg("", l), -EINVAL);
    assert_true(l[0] == 1.25); /* untouched on failure */

    double up = 0;
    assert_int_equal(hn_host_parse_uptime("123456.78 9876543.21\n", &up), 0);
    assert_true(up == 123456.78);
    assert_int_equal(hn_host_parse_uptime("nan 1", &up), -EINVAL);
    assert_int_equal(hn_host_parse_uptime("\n", &up), -EINVAL);
}

static void test_parse_meminfo(void **unused)
{
    (void)unused;
    double total = 0, avail = 0;
    assert_int_equal(hn_host_parse_meminfo("MemTotal:  100 kB\nMemFree: 5 kB\n"
                                           "MemAvailable:   50 kB\n",
                                           &total, &avail),
                     0);
    assert_true(total == 102400 && avail == 51200);
    /* Kernels before 3.14 have no MemAvailable. */
    assert_int_equal(hn_host_parse_meminfo("MemTotal: 8 kB\nMemFree: 1 kB", &total, &avail), 0);
    assert_true(total == 8192 && isnan(avail));
    assert_int_equal(hn_host_parse_meminfo("MemFree: 1 kB\n", &total, &avail), -EINVAL);
    assert_int_equal(hn_host_parse_meminfo("MemTotal: lots kB\n", &total, &avail), -EINVAL);
    assert_int_equal(hn_host_parse_meminfo("MemTotal: 1 MB\n", &total, &avail), -EINVAL);
    assert_int_equal(hn_host_parse_meminfo("", &total, &avail), -EINVAL);
}

static void test_parse_stat(void **unused)
{
    (void)unused;
    double s[HN_CPU_NFIELDS];
    assert_int_equal(hn_host_parse_stat_cpu(
                         "cpu  1000 200 300 40000 500 60 70 80 90 10\ncpu0 1 2 3 4\n", 100, s),
                     10);
    assert_true(s[HN_CPU_USER] == 10 && s[HN_CPU_NICE] == 2 && s[HN_CPU_IDLE] == 400);
    assert_true(s[HN_CPU_GUEST_NICE] == 0.1);
    /* An old kernel prints four fields; the others are unknown. */
    assert_int_equal(hn_host_parse_stat_cpu("intr 5\ncpu 4 3 2 1\n", 1, s), 4);
    assert_true(s[HN_CPU_SYSTEM] == 2 && isnan(s[HN_CPU_IOWAIT]) && isnan(s[HN_CPU_STEAL]));
    assert_int_equal(hn_host_parse_stat_cpu("cpu 1 2 3\n", 100, s), -EINVAL);
    assert_int_equal(hn_host_parse_stat_cpu("cpu 1 2 x 4\n", 100, s), -EINVAL);
    assert_int_equal(hn_host_parse_stat_cpu("cpu0 1 2 3 4\n", 100, s), -EINVAL);
    assert_int_equal(hn_host_parse_stat_cpu("cpu 1 2 3 4\n", 0, s), -EINVAL);
    assert_int_equal(hn_host_parse_stat_cpu("", 100, s), -EINVAL);
}

static void test_file_handles(void **unused)
{
    (void)unused;
    uint64_t a = 0, m = 0;
    assert_int_equal(hn_host_parse_file_nr("1002592\t0\t1000000", &a, &m), 0);
    assert_int_equal(a, 1002592);
    assert_int_equal(m, 1000000);
    assert_int_equal(hn_host_parse_file_nr("1 2", &a, &m), -EINVAL);

    char proc[PATH_MAX];
    tu_fixture(proc, sizeof(proc), "host/proc");
    a = m = 0;
    assert_int_equal(hn_host_file_handles(proc, &a, &m), 0);
    assert_int_equal(a, 1002592);
    assert_int_equal(m, 1000000);
    assert_true(a > m); /* the fixture's point: allocated past the maximum */
    assert_int_equal(hn_host_file_handles("/nonexistent-houston-root", &a, &m), -ENOENT);
}

static void test_collector(void **unused)
{
    (void)unused;
    char proc[PATH_MAX], sys[PATH_MAX];
    struct hn_buf b;
    void *st = open_host(tu_fixture(proc, sizeof(proc), "host/proc"),
                         tu_fixture(sys, sizeof(sys), "host/sys"), &b);
    assert_int_equal(tu_collector_cycle(HOST, st, &b), 0);
    const char *t = b.data;

    assert_non_null(strstr(t, "# TYPE houston_host_load1 gauge\nhouston_host_load1 1.25\n"));
    assert_non_null(strstr(t, "\nhouston_host_load5 0.75\n"));
    assert_non_null(strstr(t, "\nhouston_host_load15 0.5\n"));
    assert_non_null(strstr(t, "\nhouston_host_memory_total_bytes 2164216000512\n"));
    assert_non_null(strstr(t, "\nhouston_host_memory_available_bytes 2049264196608\n"));
    assert_non_null(strstr(t, "# TYPE houston_host_cpu_seconds_total counter\n"));
    if (sysconf(_SC_CLK_TCK) == 100) {
        assert_non_null(strstr(t, "\nhouston_host_cpu_seconds_total{mode=\"user\"} 10\n"));
        assert_non_null(strstr(t, "\nhouston_host_cpu_seconds_total{mode=\"idle\"} 400\n"));
        assert_non_null(strstr(t, "\nhouston_host_cpu_seconds_total{mode=\"steal\"} 0.8\n"));
        assert_non_null(strstr(t, "\nhouston_host_cpu_guest_seconds_total{mode=\"user\"} 0.9\n"));
        assert_non_null(strstr(t, "\nhouston_host_cpu_guest_seconds_total{mode=\"nice\"} 0.1\n"));
    }
    assert_null(strstr(t, "houston_host_cpu_seconds_total{mode=\"guest"));
    assert_non_null(strstr(t, "\nhouston_host_uptime_seconds 123456.78\n"));
    assert_non_null(strstr(t, "\nhouston_host_file_handles_allocated 1002592\n"));
    assert_non_null(strstr(t, "\nhouston_host_file_handles_max 1000000\n"));

#define TEMP "\nhouston_host_hwmon_temperature_celsius"
    assert_non_null(strstr(t, TEMP "{hwmon=\"hwmon0\",chip=\"coretemp\",sensor=\"Package id 0\"} "
                                   "45\n"));
    assert_non_null(
        strstr(t, TEMP "{hwmon=\"hwmon0\",chip=\"coretemp\",sensor=\"Core 0\"} 43.5\n"));
    assert_non_null(
        strstr(t, TEMP "{hwmon=\"hwmon1\",chip=\"nvme\",sensor=\"Composite\"} 38.85\n"));
    assert_non_null(strstr(t, TEMP "{hwmon=\"hwmon1\",chip=\"nvme\",sensor=\"temp3\"} -5\n"));
    const char *h10 = strstr(t, TEMP "{hwmon=\"hwmon10\",chip=\"nvme\",sensor=\"Composite\"} 40\n");
    assert_non_null(h10);
    assert_true(strstr(t, TEMP "{hwmon=\"hwmon1\",") < h10); /* numeric order */
    assert_null(strstr(t, "} 100\n"));                       /* temp1_crit is not an input */

#define POWER "\nhouston_host_hwmon_power_watts"
    assert_non_null(
        strstr(t, POWER "{hwmon=\"hwmon2\",chip=\"power_meter\",sensor=\"power1\"} 412.5\n"));
    assert_non_null(
        strstr(t, POWER "{hwmon=\"hwmon2\",chip=\"power_meter\",sensor=\"PSU 2\"} 350\n"));
    assert_null(strstr(t, "power1\"} 400")); /* power1_average lost to power1_input */

    tu_collector_close(HOST, st, &b);
}

/* A proc root where only a broken loadavg exists and no hwmon: every sample is skipped, every
 * family still has its HELP/TYPE, and a fixed file is picked up in the next cycle. */
static void test_unreadable_sources(void **unused)
{
    (void)unused;
    char tmp_root[PATH_MAX];
    tu_mkdtemp(tmp_root, sizeof(tmp_root), "host");
    tu_write_in(NULL, 0, tmp_root, "loadavg", "not a number\n");

    struct hn_buf b;
    void *st = open_host(tmp_root, "/nonexistent-houston-root", &b);
    assert_true(tu_collector_cycle(HOST, st, &b) < 0);
    const char *t = b.data;
    assert_non_null(strstr(t, "# TYPE houston_host_load1 gauge\n"));
    assert_null(strstr(t, "\nhouston_host_load1 "));
    assert_null(strstr(t, "\nhouston_host_memory_total_bytes "));
    assert_null(strstr(t, "\nhouston_host_cpu_seconds_total{"));
    assert_null(strstr(t, "\nhouston_host_file_handles_max "));
    assert_null(strstr(t, "hwmon"));

    tu_write_in(NULL, 0, tmp_root, "loadavg", "0.01 0.02 0.03 1/2 3\n");
    assert_true(tu_collector_cycle(HOST, st, &b) < 0); /* meminfo and the rest are still missing */
    assert_non_null(strstr(b.data, "\nhouston_host_load15 0.03\n"));

    tu_collector_close(HOST, st, &b);
    tu_remove_tree(tmp_root);

    /* Without a readable loadavg the proc root is wrong: init refuses. */
    struct hn_agent_config cfg;
    set_roots(&cfg, "/nonexistent-houston-root", "/nonexistent-houston-root");
    st = NULL;
    assert_int_equal(HOST->init(&cfg, &st), -ENOENT);
    assert_null(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_loadavg_uptime),
        cmocka_unit_test(test_parse_meminfo),
        cmocka_unit_test(test_parse_stat),
        cmocka_unit_test(test_file_handles),
        cmocka_unit_test(test_collector),
        cmocka_unit_test(test_unreadable_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
