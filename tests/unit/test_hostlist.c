/* test_hostlist.c - Slurm hostlist expansion, including real NodeList forms from squeue. */
#include "sched/hostlist.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

struct acc {
    char text[4096];
    size_t len;
    int count;
};

static int add(void *ctx, const char *name)
{
    struct acc *a = ctx;
    int n = snprintf(a->text + a->len, sizeof(a->text) - a->len, "%s%s", a->count ? " " : "", name);
    if (n < 0 || (size_t)n >= sizeof(a->text) - a->len)
        return -ENOSPC;
    a->len += (size_t)n;
    a->count++;
    return 0;
}

static const char *expand(const char *expr, int *rc)
{
    static struct acc a;
    memset(&a, 0, sizeof(a));
    *rc = hn_hostlist_expand(expr, add, &a);
    return a.text;
}

static void test_forms(void **unused)
{
    (void)unused;
    int rc;
    assert_string_equal(expand("n1", &rc), "n1");
    assert_int_equal(rc, 0);
    assert_string_equal(expand("n[1-4]", &rc), "n1 n2 n3 n4");
    assert_string_equal(expand("n[1-2,7],login1", &rc), "n1 n2 n7 login1");
    assert_string_equal(expand("gpu[001-003]x", &rc), "gpu001x gpu002x gpu003x");
    assert_string_equal(expand("node[1281-1283,1301-1302]", &rc),
                        "node1281 node1282 node1283 node1301 node1302");
    assert_string_equal(expand("", &rc), "");
    assert_int_equal(rc, 0);
}

static void test_malformed(void **unused)
{
    (void)unused;
    static const char *const bad[] = {"n[1-",   "n[4-1]",      "n[a-b]", "n]1", "n[1-2][3]",
                                      "n[[1]]", "n[1-200000]", "n[]",    ",",   "n[1--2]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc;
        expand(bad[i], &rc);
        if (rc != -EINVAL)
            fail_msg("'%s' gave %d, want -EINVAL", bad[i], rc);
    }
}

static void test_contains(void **unused)
{
    (void)unused;
    assert_int_equal(hn_hostlist_contains("n[1-4,7]", "n3"), 1);
    assert_int_equal(hn_hostlist_contains("n[1-4,7]", "n5"), 0);
    assert_int_equal(hn_hostlist_contains("n1,n2", "n2"), 1);
    assert_int_equal(hn_hostlist_contains("n[", "n1"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_contains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
