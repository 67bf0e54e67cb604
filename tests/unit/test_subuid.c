/*
 * test_subuid.c - whose subordinate uid a uid is (common/subuid.h): ranges of subuid(5) text
 * by name or number, read as newuidmap reads them, their edges, root's ranges and overlaps
 * mapping nothing, ranges among the accounts refused, bad lines skipped and counted with the
 * first one's reason, and the cap on ranges.
 */
#include "testutil.h"

#include "common/buf.h"
#include "common/subuid.h"

#include <errno.h>
#include <pwd.h>

/* A name service with two users: alice (1000) and bob (1001); root is 0. Looking up "ldap"
 * fails as when the directory is down. */
static int resolve(const char *name, uint32_t *uid)
{
    if (strcmp(name, "ldap") == 0)
        return -EIO;
    static const struct {
        const char *name;
        uint32_t uid;
    } users[] = {{"alice", 1000}, {"bob", 1001}, {"root", 0}};
    for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
        if (strcmp(users[i].name, name) == 0) {
            *uid = users[i].uid;
            return 0;
        }
    }
    return -ENOENT;
}

static void parse_ok(const char *text, struct hn_subuid *t)
{
    char err[160] = "";
    assert_int_equal(hn_subuid_parse(text, strlen(text), resolve, t, err, sizeof(err)), 0);
}

/* The owner of uid, or -1 when nobody's range holds it. */
static long owner_of(const struct hn_subuid *t, uint32_t uid)
{
    uint32_t o = 12345;
    if (!hn_subuid_owner(t, uid, &o)) {
        assert_int_equal(o, 12345); /* untouched */
        return -1;
    }
    return (long)o;
}

static void ranges_by_name_and_number(void **state)
{
    (void)state;
    struct hn_subuid t;
    parse_ok("# podman's ranges\n"
             "alice:100000:65536\n"
             "\n"
             "1001:165536:65536\n"
             "bob:300000:10\n"
             "alice:4294967285:10\n",
             &t);
    assert_int_equal(t.n, 4);
    assert_int_equal(t.skipped, 0);
    assert_int_equal(owner_of(&t, 100000), 1000);
    assert_int_equal(owner_of(&t, 165535), 1000);
    assert_int_equal(owner_of(&t, 165536), 1001);
    assert_int_equal(owner_of(&t, 231071), 1001);
    assert_int_equal(owner_of(&t, 231072), -1);
    assert_int_equal(owner_of(&t, 99999), -1);
    assert_int_equal(owner_of(&t, 300009), 1001);
    assert_int_equal(owner_of(&t, 300010), -1);
    assert_int_equal(owner_of(&t, 4294967294u), 1000); /* the last uid there is */
    assert_int_equal(owner_of(&t, 4294967284u), -1);
    assert_int_equal(owner_of(&t, UINT32_MAX), -1);
    assert_int_equal(owner_of(&t, 0), -1);
    assert_int_equal(owner_of(&t, 1000), -1);
    hn_subuid_fini(&t);

    /* No ranges at all: nobody is anyone's. */
    parse_ok("", &t);
    assert_int_equal(owner_of(&t, 100000), -1);
    hn_subuid_fini(&t);
}

/* Root's ranges never map, and block any user's range they overlap (an LXD container under
 * root's range must not speak as alice). */
static void roots_ranges_map_nothing(void **state)
{
    (void)state;
    struct hn_subuid t;
    parse_ok("root:1000000:1000000000\n"
             "alice:1000000:65536\n"
             "0:100000:10\n"
             "bob:100000:65536\n"
             "bob:200000:65536\n",
             &t);
    assert_int_equal(t.n, 5);
    assert_int_equal(t.skipped, 0);
    assert_int_equal(owner_of(&t, 1000005), -1);
    assert_int_equal(owner_of(&t, 1999999999), -1);
    assert_int_equal(owner_of(&t, 100005), -1);
    assert_int_equal(owner_of(&t, 100010), 1001);
    assert_int_equal(owner_of(&t, 200000), 1001);
    hn_subuid_fini(&t);
}

static void overlaps(void **state)
{
    (void)state;
    struct hn_subuid t;
    /* alice's long range holds bob's short one and two of her own inside it. */
    parse_ok("alice:100000:500000\n"
             "bob:200000:10\n"
             "alice:300000:10\n"
             "alice:400000:10\n",
             &t);
    assert_int_equal(owner_of(&t, 150000), 1000);
    assert_int_equal(owner_of(&t, 200005), -1); /* both users: neither */
    assert_int_equal(owner_of(&t, 200010), 1000);
    assert_int_equal(owner_of(&t, 300005), 1000); /* alice twice: alice */
    assert_int_equal(owner_of(&t, 599999), 1000);
    assert_int_equal(owner_of(&t, 600000), -1);
    hn_subuid_fini(&t);
}

static void bad_lines_are_skipped(void **state)
{
    (void)state;
    static const struct {
        const char *line, *why;
    } bad[] = {
        /* clang-format off */
        {"alice:100000", "not USER:START:COUNT"},
        {"alice:100000:10:x", "not USER:START:COUNT"},
        {":100000:10", "not USER:START:COUNT"},
        {" alice:100000:10", "no such user ' alice'"},
        {"alice:100000:10 ", "digits only"},
        {"alice: 100000:10", "digits only"},
        {"alice:+100000:10", "digits only"},
        {"alice:x:10", "digits only"},
        {"alice:-5:10", "digits only"},
        {"alice:4294967290:10", "within the uid space"},
        {"alice:100000:0", "COUNT is 0"},
        {"carol:100000:10", "no such user 'carol'"},
        {"+1001:100000:10", "no such user '+1001'"},
        {"4294967295:100000:10", "out of range"},
        {"alice:1000:10", "below 65536"},
        {"alice:0:4294967295", "below 65536"},
        {"70000:65536:10000", "holds its owner's own uid"},
        {"ldap:100000:10", "looking up 'ldap' failed: Input/output error"},
        /* clang-format on */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256], err[160] = "";
        snprintf(text, sizeof(text), "bob:500000:10\n%s\nbob:600000:10\n", bad[i].line);
        struct hn_subuid t;
        assert_int_equal(hn_subuid_parse(text, strlen(text), resolve, &t, err, sizeof(err)), 0);
        if (t.n != 2)
            fail_msg("'%s' was taken", bad[i].line);
        assert_int_equal(t.skipped, 1);
        assert_int_equal(t.unresolved, strncmp(bad[i].line, "ldap:", 5) == 0);
        if (!strstr(err, "line 2: ") || !strstr(err, bad[i].why))
            fail_msg("'%s': '%s' does not say line 2 and '%s'", bad[i].line, err, bad[i].why);
        assert_int_equal(owner_of(&t, 600009), 1001);
        hn_subuid_fini(&t);
    }
    /* A NUL byte and an overlong line are skipped too. */
    static const char nul[] = "alice:100000:10\nbob:2\0000:10\nbob:300000:10";
    struct hn_subuid t;
    char err[160] = "";
    assert_int_equal(hn_subuid_parse(nul, sizeof(nul) - 1, resolve, &t, err, sizeof(err)), 0);
    assert_int_equal(t.n, 2);
    assert_non_null(strstr(err, "line 2: holds a NUL byte"));
    assert_int_equal(owner_of(&t, 300000), 1001); /* the last line needs no newline */
    hn_subuid_fini(&t);
    char *longline = xmalloc(700);
    memset(longline, 'a', 699);
    longline[699] = '\0';
    assert_int_equal(hn_subuid_parse(longline, 699, resolve, &t, err, sizeof(err)), 0);
    assert_int_equal(t.n, 0);
    assert_non_null(strstr(err, "line 1: longer than 511 bytes"));
    hn_subuid_fini(&t);
    free(longline);
}

static void too_many_ranges(void **state)
{
    (void)state;
    struct hn_buf b;
    hn_buf_init(&b, 4u << 20);
    for (unsigned i = 0; i <= HN_SUBUID_MAX_RANGES; i++)
        hn_buf_printf(&b, "alice:%u:1\n", 100000 + i);
    struct hn_subuid t;
    char err[160] = "";
    assert_int_equal(hn_subuid_parse(b.data, b.len, resolve, &t, err, sizeof(err)), -E2BIG);
    assert_int_equal(t.n, 0);
    assert_null(t.range);
    assert_non_null(strstr(err, "more than 65536 ranges"));
    /* One fewer fits, and every uid is found. */
    b.len -= strlen("alice:165536:1\n");
    assert_int_equal(hn_subuid_parse(b.data, b.len, resolve, &t, err, sizeof(err)), 0);
    assert_int_equal(t.n, HN_SUBUID_MAX_RANGES);
    assert_int_equal(owner_of(&t, 100000), 1000);
    assert_int_equal(owner_of(&t, 165535), 1000);
    assert_int_equal(owner_of(&t, 165536), -1);
    hn_subuid_fini(&t);
    hn_buf_fini(&b);
}

/* The system's own name service: a real user's range is kept, an unknown name is not. */
static void getpwnam_by_default(void **state)
{
    (void)state;
    struct passwd *pw = getpwnam("nobody");
    assert_non_null(pw);
    uint32_t nobody = (uint32_t)pw->pw_uid;
    struct hn_subuid t;
    char err[160] = "";
    const char *text = "root:100000:10\nnobody:200000:10\nno-such-user-here:300000:10\n";
    assert_int_equal(hn_subuid_parse(text, strlen(text), NULL, &t, err, sizeof(err)), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.skipped, 1);
    assert_int_equal(t.unresolved, 0);
    assert_non_null(strstr(err, "line 3: no such user"));
    assert_int_equal(owner_of(&t, 200003), nobody);
    assert_int_equal(owner_of(&t, 100003), -1);
    hn_subuid_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges_by_name_and_number),
        cmocka_unit_test(roots_ranges_map_nothing),
        cmocka_unit_test(overlaps),
        cmocka_unit_test(bad_lines_are_skipped),
        cmocka_unit_test(too_many_ranges),
        cmocka_unit_test(getpwnam_by_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
