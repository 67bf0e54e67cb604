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

/* A name service with two users: alice (1000) and bob (1001); root is 0; anyone else: no such
 * user (1). Looking up "ldap" fails as when the directory is down. */
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
    return 1;
}

/* Parses text into *t, which must give n ranges and skip no line. */
static void parse_ok(const char *text, size_t n, struct hn_subuid *t)
{
    char err[160] = "";
    assert_int_equal(hn_subuid_parse(text, strlen(text), resolve, t, err, sizeof(err)), 0);
    if (t->n != n || t->skipped)
        fail_msg("%zu ranges, %u lines skipped (%s); want %zu and none", t->n, t->skipped, err, n);
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

struct want {
    uint32_t uid;
    long owner; /* -1: nobody's */
};

static void expect_owners(const struct hn_subuid *t, const struct want *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        long got = owner_of(t, w[i].uid);
        if (got != w[i].owner)
            fail_msg("uid %u: owner %ld, want %ld", w[i].uid, got, w[i].owner);
    }
}

#define EXPECT_OWNERS(t, ...)                                                                      \
    do {                                                                                           \
        static const struct want w_[] = {__VA_ARGS__};                                             \
        expect_owners((t), w_, sizeof(w_) / sizeof(w_[0]));                                        \
    } while (0)

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
             4, &t);
    EXPECT_OWNERS(&t, {100000, 1000}, {165535, 1000}, {165536, 1001}, {231071, 1001}, {231072, -1},
                  {99999, -1}, {300009, 1001}, {300010, -1}, {4294967294u, 1000}, {4294967284u, -1},
                  {UINT32_MAX, -1}, {0, -1}, {1000, -1});
    hn_subuid_fini(&t);

    /* No ranges at all: nobody is anyone's. */
    parse_ok("", 0, &t);
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
             5, &t);
    EXPECT_OWNERS(&t, {1000005, -1}, {1999999999, -1}, {100005, -1}, {100010, 1001},
                  {200000, 1001});
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
             4, &t);
    EXPECT_OWNERS(&t, {150000, 1000}, {200005, -1}, {200010, 1000}, {300005, 1000}, {599999, 1000},
                  {600000, -1});
    hn_subuid_fini(&t);
}

/* A line left out is reported with its number and reason. One that is still a range (all but
 * the malformed) stays as a range of nobody's: no uid it holds maps, not even through another
 * user's range overlapping it (here bob's 100005-100014). */
static void bad_lines_are_skipped(void **state)
{
    (void)state;
    static const struct {
        const char *line, *why;
        uint32_t blocks; /* a uid the line's range still holds; 0: the line is no range */
    } bad[] = {
        /* clang-format off */
        {"alice:100000", "not USER:START:COUNT", 0},
        {"alice:100000:10:x", "not USER:START:COUNT", 0},
        {":100000:10", "not USER:START:COUNT", 0},
        {"alice:100000:10 ", "digits only", 0},
        {"alice: 100000:10", "digits only", 0},
        {"alice:+100000:10", "digits only", 0},
        {"alice:x:10", "digits only", 0},
        {"alice:-5:10", "digits only", 0},
        {"alice:4294967290:10", "within the uid space", 0},
        {"alice:100000:0", "COUNT is 0", 0},
        {"4294967295:100000:10", "out of range", 0},
        {" alice:100000:10", "no such user ' alice'", 100005},
        {"carol:100000:10", "no such user 'carol'", 100005},
        {"+1001:100000:10", "no such user '+1001'", 100005},
        {"alice:1000:10", "below 65536", 1005},
        {"alice:0:65536", "below 65536", 1000},
        {"70000:65536:40000", "holds its owner's own uid", 100005},
        {"ldap:100000:10", "looking up 'ldap' failed: Input/output error", 100005},
        /* clang-format on */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[256], err[160] = "";
        snprintf(text, sizeof(text), "bob:100005:10\n%s\nbob:600000:10\n", bad[i].line);
        struct hn_subuid t;
        assert_int_equal(hn_subuid_parse(text, strlen(text), resolve, &t, err, sizeof(err)), 0);
        if (t.n != 2 + (bad[i].blocks != 0))
            fail_msg("'%s': %zu ranges", bad[i].line, t.n);
        assert_int_equal(t.skipped, 1);
        assert_int_equal(t.unresolved, strncmp(bad[i].line, "ldap:", 5) == 0);
        if (!strstr(err, "line 2: ") || !strstr(err, bad[i].why))
            fail_msg("'%s': '%s' does not say line 2 and '%s'", bad[i].line, err, bad[i].why);
        assert_int_equal(owner_of(&t, 600009), 1001);
        if (bad[i].blocks) {
            assert_int_equal(owner_of(&t, bad[i].blocks), -1);
        } else {
            assert_int_equal(owner_of(&t, 100005), 1001);
        }
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
    EXPECT_OWNERS(&t, {100000, 1000}, {165535, 1000}, {165536, -1});
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
    assert_int_equal(t.n, 3); /* the unknown user's range stays, mapping nothing */
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
