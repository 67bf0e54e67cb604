/*
 * test_ib.c - the InfiniBand collector and port scan against the H100 sysfs snapshot in
 * tests/fixtures/sysfs-h100 (SOURCE.md there), plus a temporary copy that the tests edit.
 */
#include "testutil.h"

#include "agent/config.h"
#include "agent/ib.h"

#include <errno.h>
#include <fcntl.h>

#define IB (&hn_collector_ib)

static void test_parse(void **unused)
{
    (void)unused;
    int num = 0;
    char name[24];
    assert_int_equal(hn_ib_parse_state("4: ACTIVE", &num, name, sizeof(name)), 0);
    assert_int_equal(num, 4);
    assert_string_equal(name, "ACTIVE");
    assert_int_equal(hn_ib_parse_state("5: LinkUp", &num, name, sizeof(name)), 0);
    assert_int_equal(num, 5);
    assert_string_equal(name, "LinkUp");
    assert_int_equal(hn_ib_parse_state("ACTIVE", &num, name, sizeof(name)), -EINVAL);
    assert_int_equal(hn_ib_parse_state(": x", &num, name, sizeof(name)), -EINVAL);
    assert_int_equal(hn_ib_parse_state("x4: y", &num, name, sizeof(name)), -EINVAL);
    assert_int_equal(hn_ib_parse_state("99999999999999999999: y", &num, name, sizeof(name)),
                     -EINVAL);

    double g = 0;
    assert_int_equal(hn_ib_parse_rate("400 Gb/sec (4X NDR)", &g), 0);
    assert_true(g == 400);
    assert_int_equal(hn_ib_parse_rate("2.5 Gb/sec (1X SDR)", &g), 0);
    assert_true(g == 2.5);
    assert_int_equal(hn_ib_parse_rate("100 Mb/sec", &g), 0);
    assert_true(g == 0.1);
    assert_int_equal(hn_ib_parse_rate("400", &g), -EINVAL);
    assert_int_equal(hn_ib_parse_rate("fast Gb/sec", &g), -EINVAL);
    assert_int_equal(hn_ib_parse_rate("400 furlongs", &g), -EINVAL);
    assert_int_equal(hn_ib_parse_rate("-1 Gb/sec", &g), -EINVAL);
    assert_int_equal(hn_ib_parse_rate("", &g), -EINVAL);
}

static void test_scan(void **unused)
{
    (void)unused;
    char root[PATH_MAX];
    tu_fixture(root, sizeof(root), "sysfs-h100");
    struct hn_ib_port ports[HN_IB_MAX_PORTS];
    int n = hn_ib_scan(root, ports, HN_IB_MAX_PORTS);
    assert_int_equal(n, 9);

    static const char *const order[] = {"mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5",     "mlx5_6",
                                        "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_bond_0"};
    int ib = 0, eth = 0;
    for (int i = 0; i < n; i++) {
        const struct hn_ib_port *p = &ports[i];
        assert_string_equal(p->device, order[i]);
        assert_string_equal(p->port, "1");
        assert_true(hn_ib_port_active(p));
        assert_int_equal(p->state, HN_IB_STATE_ACTIVE);
        assert_string_equal(p->state_name, "ACTIVE");
        assert_int_equal(p->phys_state, HN_IB_PHYS_LINKUP);
        assert_string_equal(p->phys_state_name, "LinkUp");
        assert_true(p->link_downed_ok);
        assert_int_equal(p->link_downed, strcmp(p->device, "mlx5_1") == 0 ? 255 : 0);
        if (strcmp(p->link_layer, "InfiniBand") == 0) {
            ib++;
            assert_true(p->rate_gbps == 400);
        } else {
            eth++;
            assert_string_equal(p->link_layer, "Ethernet");
            assert_string_equal(p->device, "mlx5_bond_0");
            assert_true(p->rate_gbps == 200);
        }
    }
    assert_int_equal(ib, 8);
    assert_int_equal(eth, 1);

    /* A smaller array gets the first ports only. */
    assert_int_equal(hn_ib_scan(root, ports, 2), 2);
    assert_int_equal(hn_ib_scan("/nonexistent-houston-root", ports, HN_IB_MAX_PORTS), -ENOENT);
}

static void test_collector(void **unused)
{
    (void)unused;
    struct hn_agent_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    tu_fixture(cfg.sysfs_root, sizeof(cfg.sysfs_root), "sysfs-h100");
    struct hn_buf b;
    void *st = tu_collector_open(IB, &cfg, &b);
    assert_int_equal(tu_collector_cycle(IB, st, &b), 0);
    const char *t = b.data;

#define L_IB(dev) "{device=\"" dev "\",port=\"1\",link_layer=\"InfiniBand\"}"
#define L_ETH     "{device=\"mlx5_bond_0\",port=\"1\",link_layer=\"Ethernet\"}"
    assert_non_null(strstr(t, "# TYPE houston_ib_port_up gauge\n"));
    assert_non_null(strstr(t, "houston_ib_port_up" L_IB("mlx5_0") " 1\n"));
    assert_non_null(strstr(t, "houston_ib_port_up" L_ETH " 1\n"));
    assert_int_equal(tu_count(t, "\nhouston_ib_port_up{"), 9);
    assert_non_null(strstr(t, "houston_ib_port_state" L_IB("mlx5_9") " 4\n"));
    assert_non_null(strstr(t, "houston_ib_port_phys_state" L_IB("mlx5_4") " 5\n"));
    assert_non_null(
        strstr(t, "houston_ib_port_rate_bytes_per_second" L_IB("mlx5_0") " 50000000000\n"));
    assert_non_null(strstr(t, "houston_ib_port_rate_bytes_per_second" L_ETH " 25000000000\n"));
    assert_non_null(strstr(t, "# TYPE houston_ib_link_downed_total counter\n"));
    assert_non_null(strstr(t, "houston_ib_link_downed_total" L_IB("mlx5_1") " 255\n"));
    assert_non_null(strstr(t, "houston_ib_link_downed_total" L_IB("mlx5_0") " 0\n"));
    assert_non_null(strstr(t, "houston_ib_port_rcv_errors_total" L_ETH " 14\n"));
    assert_non_null(
        strstr(t, "houston_ib_port_xmit_bytes_total" L_IB("mlx5_0") " 921770677727356\n"));
    assert_non_null(
        strstr(t, "houston_ib_port_rcv_bytes_total" L_IB("mlx5_0") " 922159499729932\n"));
    assert_non_null(strstr(t, "houston_ib_vl15_dropped_total" L_IB("mlx5_0") " "));
    assert_non_null(strstr(t, "houston_ib_hw_events_total{device=\"mlx5_0\",port=\"1\","
                              "link_layer=\"InfiniBand\",counter=\"out_of_sequence\"} 0\n"));
    assert_non_null(strstr(t, "counter=\"roce_adp_retrans\"}"));
    assert_null(strstr(t, "lifespan"));
    assert_int_equal(tu_count(t, "\nhouston_ib_hw_events_total{"), 9 * 25);
    assert_non_null(strstr(t, "houston_ib_device_info{device=\"mlx5_bond_0\",hca_type=\"MT41692\","
                              "fw_ver=\"32.38.3056\",board_id=\"MT_0000000884\"} 1\n"));
    assert_int_equal(tu_count(t, "\nhouston_ib_device_info{"), 9);
    assert_non_null(strstr(t, "houston_ib_port_read_errors_total" L_IB("mlx5_1") " 0\n"));

    /* A second cycle renders the same text: no state leaks between cycles. */
    char *first = xstrdup(t);
    assert_int_equal(tu_collector_cycle(IB, st, &b), 0);
    assert_string_equal(first, b.data);
    free(first);

    tu_collector_close(IB, st, &b);
}

/* ---- a writable copy of the fixture ----------------------------------------------------- */

static char copy_src[PATH_MAX], copy_dst[PATH_MAX];

static int copy_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)ftw;
    char out[PATH_MAX * 2];
    snprintf(out, sizeof(out), "%s%s", copy_dst, path + strlen(copy_src));
    if (flag == FTW_D)
        return mkdir(out, 0755) == 0 || errno == EEXIST ? 0 : -1;
    if (flag != FTW_F)
        return -1;
    int in = open(path, O_RDONLY);
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char buf[4096];
    ssize_t n;
    int rc = in < 0 || fd < 0 ? -1 : 0;
    while (rc == 0 && (n = read(in, buf, sizeof(buf))) > 0)
        rc = write(fd, buf, (size_t)n) == n ? 0 : -1;
    if (in >= 0)
        close(in);
    if (fd >= 0)
        close(fd);
    (void)sb;
    return rc;
}

/* Writes text to root/class/infiniband/rel. */
static void write_ib(const char *root, const char *rel, const char *text)
{
    char dir[PATH_MAX];
    (void)snprintf(dir, sizeof(dir), "%s/class/infiniband", root);
    tu_write_in(NULL, 0, dir, rel, text);
}

static void test_changes_between_cycles(void **unused)
{
    (void)unused;
    tu_fixture(copy_src, sizeof(copy_src), "sysfs-h100");
    tu_mkdtemp(copy_dst, sizeof(copy_dst), "ib");
    assert_int_equal(nftw(copy_src, copy_one, 16, FTW_PHYS), 0);

    struct hn_agent_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    hn_strlcpy(cfg.sysfs_root, copy_dst, sizeof(cfg.sysfs_root));
    struct hn_buf b;
    void *st = tu_collector_open(IB, &cfg, &b);
    assert_int_equal(tu_collector_cycle(IB, st, &b), 0);
    assert_non_null(strstr(b.data, "houston_ib_link_downed_total" L_IB("mlx5_0") " 0\n"));

    /* A link flap and a port going down show up in the next cycle. */
    write_ib(copy_dst, "mlx5_0/ports/1/counters/link_downed", "3\n");
    write_ib(copy_dst, "mlx5_4/ports/1/state", "1: DOWN\n");
    write_ib(copy_dst, "mlx5_4/ports/1/phys_state", "3: Disabled\n");
    write_ib(copy_dst, "mlx5_0/ports/1/hw_counters/out_of_sequence", "17");
    assert_int_equal(tu_collector_cycle(IB, st, &b), 0);
    const char *t = b.data;
    assert_non_null(strstr(t, "houston_ib_link_downed_total" L_IB("mlx5_0") " 3\n"));
    assert_non_null(strstr(t, "houston_ib_port_up" L_IB("mlx5_4") " 0\n"));
    assert_non_null(strstr(t, "houston_ib_port_state" L_IB("mlx5_4") " 1\n"));
    assert_non_null(strstr(t, "houston_ib_port_phys_state" L_IB("mlx5_4") " 3\n"));
    assert_non_null(strstr(t, "counter=\"out_of_sequence\"} 17\n"));

    struct hn_ib_port ports[HN_IB_MAX_PORTS];
    assert_int_equal(hn_ib_scan(copy_dst, ports, HN_IB_MAX_PORTS), 9);
    assert_false(hn_ib_port_active(&ports[2]));
    assert_string_equal(ports[2].state_name, "DOWN");
    assert_int_equal(ports[0].link_downed, 3);

    /* An unreadable counter and a vanished port: the rest keeps being served. */
    write_ib(copy_dst, "mlx5_6/ports/1/counters/symbol_error", "garbage\n");
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s/class/infiniband/mlx5_5", copy_dst);
    tu_remove_tree(dir);
    assert_true(tu_collector_cycle(IB, st, &b) < 0);
    t = b.data;
    assert_null(strstr(t, "houston_ib_symbol_error_total" L_IB("mlx5_6")));
    assert_non_null(strstr(t, "houston_ib_symbol_error_total" L_IB("mlx5_7") " 0\n"));
    assert_null(strstr(t, "houston_ib_port_up" L_IB("mlx5_5")));
    assert_null(strstr(t, "houston_ib_link_downed_total" L_IB("mlx5_5")));
    assert_null(strstr(t, "houston_ib_hw_events_total"
                          "{device=\"mlx5_5\""));
    assert_non_null(strstr(t, "houston_ib_port_read_errors_total" L_IB("mlx5_5") " 1\n"));
    assert_non_null(strstr(t, "houston_ib_port_read_errors_total" L_IB("mlx5_6") " 1\n"));
    assert_non_null(strstr(t, "houston_ib_port_read_errors_total" L_IB("mlx5_7") " 0\n"));
    assert_non_null(strstr(t, "houston_ib_link_downed_total" L_IB("mlx5_1") " 255\n"));

    /* The counter recovers. */
    write_ib(copy_dst, "mlx5_6/ports/1/counters/symbol_error", "42\n");
    assert_true(tu_collector_cycle(IB, st, &b) < 0); /* mlx5_5 is still gone */
    assert_non_null(strstr(b.data, "houston_ib_symbol_error_total" L_IB("mlx5_6") " 42\n"));

    tu_collector_close(IB, st, &b);
    tu_remove_tree(copy_dst);
}

static void test_no_infiniband(void **unused)
{
    (void)unused;
    struct hn_agent_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    hn_strlcpy(cfg.sysfs_root, "/nonexistent-houston-root", sizeof(cfg.sysfs_root));
    void *st = NULL;
    assert_int_equal(IB->init(&cfg, &st), -ENOENT);
    assert_null(st);
    IB->fini(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),         cmocka_unit_test(test_scan),
        cmocka_unit_test(test_collector),     cmocka_unit_test(test_changes_between_cycles),
        cmocka_unit_test(test_no_infiniband),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
