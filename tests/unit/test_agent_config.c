/*
 * test_agent_config.c - `houston agent` settings (agent/agent.h, agent/config.h): defaults,
 * every flag, the --config file with the same keys, flags overriding the file whatever their
 * order, and the errors (unknown key, bad interval, stray argument). hn_agent_parse_args() may
 * be called many times in one process: it resets getopt itself.
 */
#include "testutil.h"

#include "agent/agent.h"
#include "agent/config.h"
#include "common/fsroot.h"
#include "common/log.h"

#include <fcntl.h>

static struct hn_agent_config cfg;

#define MAX_ARGS 24

/* Runs hn_agent_parse_args on a NULL-terminated list of arguments after "agent". stderr (and
 * stdout, where the usage goes) are sent to files so the test output stays readable; *out gets
 * what went to stdout when out is not NULL. */
static int parse_out(int *once, char *out, size_t outsize, ...)
{
    char *argv[MAX_ARGS + 1];
    char storage[MAX_ARGS][PATH_MAX + 16];
    int argc = 0;
    hn_strlcpy(storage[argc], "agent", sizeof(storage[0]));
    argv[argc] = storage[argc];
    argc++;
    va_list ap;
    va_start(ap, outsize);
    for (const char *a = va_arg(ap, const char *); a; a = va_arg(ap, const char *)) {
        assert_true(argc < MAX_ARGS);
        assert_true(hn_strlcpy(storage[argc], a, sizeof(storage[0])) < sizeof(storage[0]));
        argv[argc] = storage[argc];
        argc++;
    }
    va_end(ap);
    argv[argc] = NULL;

    struct tu_capture c;
    tu_capture_begin(&c);
    int rc = hn_agent_parse_args(argc, argv, &cfg, once);
    tu_capture_end(&c);
    if (out)
        assert_true(hn_read_file(c.out, out, outsize) >= 0);
    return rc;
}

#define PARSE(once, ...) parse_out((once), NULL, 0, __VA_ARGS__, (const char *)NULL)

/* The settings a test expects in cfg after a successful parse. */
struct want {
    const char *listen, *nvml_lib, *sysfs_root, *proc_root, *kmsg, *xid_catalog, *hostname;
    double interval;
};

static void expect_cfg(const struct want *w)
{
    assert_string_equal(cfg.listen, w->listen);
    assert_string_equal(cfg.nvml_lib, w->nvml_lib);
    assert_string_equal(cfg.sysfs_root, w->sysfs_root);
    assert_string_equal(cfg.proc_root, w->proc_root);
    assert_string_equal(cfg.kmsg, w->kmsg);
    assert_string_equal(cfg.xid_catalog, w->xid_catalog);
    assert_string_equal(cfg.hostname, w->hostname);
    assert_true(cfg.interval == w->interval);
}

static void test_defaults(void **unused)
{
    (void)unused;
    int once = 7;
    memset(&cfg, 'x', sizeof(cfg));
    assert_int_equal(parse_out(&once, NULL, 0, (const char *)NULL), 0);
    assert_int_equal(once, 0);
    assert_string_equal(cfg.listen, "127.0.0.1:9400");
    assert_true(cfg.interval == 10.0);
    assert_string_equal(cfg.nvml_lib, "libnvidia-ml.so.1");
    assert_string_equal(cfg.sysfs_root, "/sys");
    assert_string_equal(cfg.proc_root, "/proc");
    assert_string_equal(cfg.kmsg, "/dev/kmsg");
    assert_true(cfg.xid_catalog[0] != '\0');
    char host[256] = "";
    assert_int_equal(gethostname(host, sizeof(host)), 0);
    assert_string_equal(cfg.hostname, host);
}

static void test_each_flag(void **unused)
{
    (void)unused;
    int once = 0;
    assert_int_equal(PARSE(&once, "--listen", "0.0.0.0:9500", "--nvml-lib", "/opt/lib/nvml.so",
                           "--sysfs-root", "/tmp/fake/sys", "--proc-root", "/tmp/fake/proc",
                           "--kmsg", "/tmp/fake/kmsg", "--xid-catalog", "/tmp/xid.csv",
                           "--interval", "2.5", "--hostname", "node7"),
                     0);
    const struct want flags = {
        .listen = "0.0.0.0:9500",
        .nvml_lib = "/opt/lib/nvml.so",
        .sysfs_root = "/tmp/fake/sys",
        .proc_root = "/tmp/fake/proc",
        .kmsg = "/tmp/fake/kmsg",
        .xid_catalog = "/tmp/xid.csv",
        .hostname = "node7",
        .interval = 2.5,
    };
    expect_cfg(&flags);
    assert_int_equal(once, 0);

    /* --flag=value works as well. */
    assert_int_equal(PARSE(&once, "--listen=[::1]:9401", "--interval=0.5"), 0);
    assert_string_equal(cfg.listen, "[::1]:9401");
    assert_true(cfg.interval == 0.5);
    /* A second call starts again from the defaults. */
    assert_string_not_equal(cfg.hostname, "node7");
    assert_string_equal(cfg.nvml_lib, "libnvidia-ml.so.1");

    assert_int_equal(PARSE(&once, "--log-level", "warn"), 0);
    assert_int_equal(PARSE(&once, "--log-level", "loud"), -1);
    hn_log_set_level(HN_LOG_INFO);

    /* Subordinate uids: /etc/subuid unless set; an absolute path, or off. */
    assert_int_equal(parse_out(&once, NULL, 0, (const char *)NULL), 0);
    assert_string_equal(cfg.step_subuid_file, "/etc/subuid");
    assert_int_equal(PARSE(&once, "--step-subuid-file", "/srv/subuid"), 0);
    assert_string_equal(cfg.step_subuid_file, "/srv/subuid");
    assert_int_equal(PARSE(&once, "--step-subuid-file", "off"), 0);
    assert_string_equal(cfg.step_subuid_file, "");
    assert_int_equal(PARSE(&once, "--step-subuid-file", "subuid"), -1);
}

static void test_once(void **unused)
{
    (void)unused;
    int once = 0;
    assert_int_equal(PARSE(&once, "--once"), 0);
    assert_int_equal(once, 1);
    assert_int_equal(PARSE(&once, "--interval", "3"), 0);
    assert_int_equal(once, 0);
    assert_true(cfg.interval == 3.0);
}

static void test_config_file(void **unused)
{
    (void)unused;
    char path[PATH_MAX], arg[PATH_MAX + 16];
    tu_write_in(path, sizeof(path), tu_tmpdir(), "agent.conf",
                "# houston agent\n"
                "listen = 127.0.0.1:9555\n"
                "nvml-lib = /opt/fake/libnvidia-ml.so.1\n"
                "sysfs-root = /srv/sys\n"
                "proc-root = /srv/proc\n"
                "kmsg = /srv/kmsg\n"
                "xid-catalog = /srv/xid.csv\n"
                "interval = 5\n"
                "hostname = \"gpu node 1\"\n"
                "log-level = info\n");
    int once = 0;
    assert_int_equal(PARSE(&once, "--config", path), 0);
    const struct want file = {
        .listen = "127.0.0.1:9555",
        .nvml_lib = "/opt/fake/libnvidia-ml.so.1",
        .sysfs_root = "/srv/sys",
        .proc_root = "/srv/proc",
        .kmsg = "/srv/kmsg",
        .xid_catalog = "/srv/xid.csv",
        .hostname = "gpu node 1",
        .interval = 5.0,
    };
    expect_cfg(&file);

    (void)snprintf(arg, sizeof(arg), "--config=%s", path);
    assert_int_equal(PARSE(&once, arg), 0);
    expect_cfg(&file);
}

static void test_flags_override_file(void **unused)
{
    (void)unused;
    char path[PATH_MAX];
    tu_write_in(path, sizeof(path), tu_tmpdir(), "override.conf",
                "listen = 10.0.0.1:1\ninterval = 5\n");
    int once = 0;
    /* Flag before --config. */
    assert_int_equal(PARSE(&once, "--listen", "10.0.0.2:2", "--config", path), 0);
    assert_string_equal(cfg.listen, "10.0.0.2:2");
    assert_true(cfg.interval == 5.0);
    /* Flag after --config. */
    assert_int_equal(PARSE(&once, "--config", path, "--interval", "7"), 0);
    assert_string_equal(cfg.listen, "10.0.0.1:1");
    assert_true(cfg.interval == 7.0);
}

static void test_config_errors(void **unused)
{
    (void)unused;
    char path[PATH_MAX], missing[PATH_MAX];
    int once = 0;
    tu_write_in(path, sizeof(path), tu_tmpdir(), "unknown.conf",
                "listen = 127.0.0.1:1\ncolour = blue\n");
    assert_int_equal(PARSE(&once, "--config", path), -1);
    tu_write_in(path, sizeof(path), tu_tmpdir(), "badint.conf", "interval = 0\n");
    assert_int_equal(PARSE(&once, "--config", path), -1);
    tu_write_in(path, sizeof(path), tu_tmpdir(), "badline.conf", "listen\n");
    assert_int_equal(PARSE(&once, "--config", path), -1);
    (void)snprintf(missing, sizeof(missing), "%s/missing.conf", tu_tmpdir());
    assert_int_equal(PARSE(&once, "--config", missing), -1);
    assert_int_equal(PARSE(&once, "--config"), -1);
}

static void test_bad_interval(void **unused)
{
    (void)unused;
    static const char *const bad[] = {"0", "-1", "abc", "5000", "", "10s", "nan"};
    int once = 0;
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        if (PARSE(&once, "--interval", bad[i]) != -1)
            fail_msg("--interval '%s' was accepted", bad[i]);
    }
    assert_int_equal(PARSE(&once, "--interval", "3600"), 0);
    assert_true(cfg.interval == 3600.0);
    assert_int_equal(PARSE(&once, "--interval", "0.05"), 0);
    assert_true(cfg.interval == 0.05);
}

/* What a refused setting says (agent/config.c's table): the key, the value, what it wants. */
static void test_messages(void **unused)
{
    (void)unused;
    static const struct {
        const char *key, *value, *want;
    } bad[] = {
        {"interval", "0", "interval: '0' is not a number of seconds in [0.05, 3600]"},
        {"push-queue", "1.5", "push-queue: '1.5' is not a number of frames in [1, 100000]"},
        {"push-queue", "0", "push-queue: '0' is not a number of frames in [1, 100000]"},
        {"step-socket", "run/x", "step-socket: 'run/x' is not an absolute path (or \"off\")"},
        {"controller", "ftp://x",
         "controller: 'ftp://x' is not a URL like http://HOST:PORT (http or https, a host, no "
         "query)"},
        {"colour", "blue", "unknown setting 'colour'"},
    };
    struct hn_agent_config c;
    hn_agent_config_defaults(&c);
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        char err[512] = "";
        assert_int_equal(hn_agent_config_set(&c, bad[i].key, bad[i].value, err, sizeof(err)), -1);
        assert_string_equal(err, bad[i].want);
    }
    char err[256], host[300];
    memset(host, 'h', sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    assert_int_equal(hn_agent_config_set(&c, "hostname", host, err, sizeof(err)), -1);
    assert_string_equal(err, "hostname: value longer than 255 bytes");
    assert_int_equal(hn_agent_config_set(&c, "step-socket", "off", err, sizeof(err)), 0);
    assert_string_equal(c.step_socket, "");
    assert_int_equal(hn_agent_config_set(&c, "controller", "https://ctl:8080//", err, sizeof(err)),
                     0);
    assert_string_equal(c.controller, "https://ctl:8080");
    assert_int_equal(hn_agent_config_set(&c, "push-queue", "100000", err, sizeof(err)), 0);
    assert_int_equal(c.push_queue, 100000);
}

static void test_help(void **unused)
{
    (void)unused;
    char out[8192] = "";
    int once = 0;
    assert_int_equal(parse_out(&once, out, sizeof(out), "--help", (const char *)NULL), 1);
    assert_non_null(strstr(out, "usage: houston agent"));
    assert_non_null(strstr(out, "--listen"));
    out[0] = '\0';
    assert_int_equal(
        parse_out(&once, out, sizeof(out), "--listen", "1.2.3.4:5", "-h", (const char *)NULL), 1);
    assert_non_null(strstr(out, "usage: houston agent"));
}

static void test_unexpected(void **unused)
{
    (void)unused;
    int once = 0;
    assert_int_equal(PARSE(&once, "extra"), -1);
    assert_int_equal(PARSE(&once, "--once", "extra"), -1);
    assert_int_equal(PARSE(&once, "--bogus"), -1);
    assert_int_equal(PARSE(&once, "--listen"), -1);
    /* And a good call afterwards still works. */
    assert_int_equal(PARSE(&once, "--listen", "127.0.0.1:1"), 0);
    assert_string_equal(cfg.listen, "127.0.0.1:1");
}

/* A parse that stopped inside a cluster of short options ("-hh") must not leak getopt state
 * into the next call. */
static void test_reparse_after_cluster(void **unused)
{
    (void)unused;
    int once = 0;
    assert_int_equal(PARSE(&once, "-hh"), 1);
    assert_int_equal(PARSE(&once, "--listen", "127.0.0.1:2"), 0);
    assert_string_equal(cfg.listen, "127.0.0.1:2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_each_flag),
        cmocka_unit_test(test_once),
        cmocka_unit_test(test_config_file),
        cmocka_unit_test(test_flags_override_file),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_bad_interval),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_unexpected),
        cmocka_unit_test(test_reparse_after_cluster),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
