/*
 * test_stepmsg.c - the agent's reader of step-report datagrams (common/stepmsg.h): every key,
 * optional keys left out, unknown keys skipped, and each way a datagram can be refused.
 */
#include "common/stepmsg.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static int parse(const char *text, struct hn_step_msg *m, char *err, size_t errsize)
{
    return hn_stepmsg_parse(text, strlen(text), m, err, errsize);
}

static void every_key(void **state)
{
    (void)state;
    struct hn_step_msg m;
    char err[128];
    assert_int_equal(parse("hs1 job=4242 rank=17 lrank=1 world=512 step=1000 dur=1.25 "
                           "tokens=8192 fwd=0.4 bwd=0.7 opt=0.05 comm=0.1 ckpt=900 tflops=401.5 "
                           "gpu=3 fpt=2.4e12\n",
                           &m, err, sizeof(err)),
                     0);
    assert_string_equal(m.job, "4242");
    assert_int_equal(m.rank, 17);
    assert_int_equal(m.local_rank, 1);
    assert_int_equal(m.world, 512);
    assert_int_equal(m.gpu, 3);
    assert_int_equal((int)m.step, 1000);
    assert_int_equal(m.checkpoint, 900);
    assert_true(m.seconds == 1.25 && m.tokens == 8192 && m.forward_s == 0.4 &&
                m.backward_s == 0.7 && m.optimizer_s == 0.05 && m.comm_s == 0.1 &&
                m.tflops == 401.5 && m.flops_per_token == 2.4e12);
}

static void optional_and_unknown_keys(void **state)
{
    (void)state;
    struct hn_step_msg m;
    char err[128];
    assert_int_equal(parse("hs1 step=7 future=thing job=abc.1_x dur=0", &m, err, sizeof(err)), 0);
    assert_string_equal(m.job, "abc.1_x");
    assert_int_equal((int)m.step, 7);
    assert_true(m.seconds == 0);
    assert_int_equal(m.rank, -1);
    assert_int_equal(m.local_rank, -1);
    assert_int_equal(m.world, -1);
    assert_int_equal(m.gpu, -1);
    assert_int_equal(m.checkpoint, -1);
    assert_true(isnan(m.tokens) && isnan(m.comm_s) && isnan(m.tflops) && isnan(m.flops_per_token));
    /* Several blanks between pairs are fine. */
    assert_int_equal(parse("hs1  job=1   step=2 dur=3", &m, err, sizeof(err)), 0);
    /* A value too small for a normal double is that value (a client may print a subnormal);
     * the largest rank and GPU index the clients send are taken. */
    assert_int_equal(
        parse("hs1 job=1 step=2 dur=3 fwd=1e-310 comm=1e-330 rank=100000000 gpu=100000000", &m, err,
              sizeof(err)),
        0);
    assert_true(m.forward_s > 0 && m.forward_s < 1e-300 && m.comm_s == 0);
    assert_int_equal(m.rank, HN_STEP_COUNT_MAX);
}

static void pause_notices(void **state)
{
    (void)state;
    struct hn_step_msg m;
    char err[128];
    static const struct {
        const char *word;
        int kind;
    } words[] = {{"checkpoint", HN_PAUSE_CHECKPOINT},
                 {"eval", HN_PAUSE_EVAL},
                 {"other", HN_PAUSE_OTHER},
                 {"resharding-2", HN_PAUSE_OTHER}, /* a newer client's reason */
                 {"abcdefghijklmnop", HN_PAUSE_OTHER}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        char text[128];
        snprintf(text, sizeof(text), "hs1 job=77 rank=3 lrank=3 world=8 step=500 pause=%s gpu=3",
                 words[i].word);
        if (parse(text, &m, err, sizeof(err)) != 0)
            fail_msg("'%s': %s", text, err);
        assert_int_equal(m.pause, words[i].kind);
        assert_string_equal(m.job, "77");
        assert_int_equal((int)m.step, 500);
        assert_int_equal(m.rank, 3);
        assert_int_equal(m.gpu, 3);
        assert_true(isnan(m.seconds));
    }
    assert_int_equal(parse("hs1 job=1 step=2 dur=3", &m, err, sizeof(err)), 0);
    assert_int_equal(m.pause, HN_PAUSE_NONE);
    assert_string_equal(hn_pause_name(HN_PAUSE_EVAL), "eval");
    assert_null(hn_pause_name(HN_PAUSE_NONE));
    assert_null(hn_pause_name(4));
}

static void refused(void **state)
{
    (void)state;
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"", "does not start"},
        {"hs2 job=1 step=1 dur=1", "does not start"},
        {"job=1 step=1 dur=1", "does not start"},
        {"hs1 step=1 dur=1", "no job"},
        {"hs1 job=1 dur=1", "no step"},
        {"hs1 job=1 step=1", "no dur (nor pause)"},
        {"hs1 job=1 step=1 dur=1 pause=checkpoint", "dur and pause together"},
        {"hs1 job=1 step=1 pause=", "bad value for pause"},
        {"hs1 job=1 step=1 pause=Checkpoint", "bad value for pause"},
        {"hs1 job=1 step=1 pause=a.b", "bad value for pause"},
        {"hs1 job=1 step=1 pause=abcdefghijklmnopq", "bad value for pause"},
        {"hs1 job=1 step=1 pause=eval pause=eval", "given twice"},
        {"hs1 job=1 step=1 pause=checkpoint tokens=5", "tokens in a pause notice"},
        {"hs1 job=1 step=1 ckpt=0 pause=checkpoint", "ckpt in a pause notice"},
        {"hs1 job= step=1 dur=1", "bad value for job"},
        {"hs1 job=1 step=-1 dur=1", "bad value for step"},
        {"hs1 job=1 step=1 dur=-1", "bad value for dur"},
        {"hs1 job=1 step=1 dur=nan", "bad value for dur"},
        {"hs1 job=1 step=1 dur=inf", "bad value for dur"},
        {"hs1 job=1 step=1 dur=1 rank=-2", "bad value for rank"},
        {"hs1 job=1 step=1 dur=1 rank=1e3", "bad value for rank"},
        {"hs1 job=1 step=+5 dur=1", "bad value for step"},
        {"hs1 job=1 step=5 dur=1 rank=+3", "bad value for rank"},
        {"hs1 job=1 step=5 dur=1 ckpt=+0", "bad value for ckpt"},
        {"hs1 job=1 step=5 dur=0x1p-1", "bad value for dur"},
        {"hs1 job=1 step=5 dur=+0.5", "bad value for dur"},
        {"hs1 job=1 step=5 dur=1 tflops=INF", "bad value for tflops"},
        {"hs1 job=1 step=1 dur=1 world=1000000000", "bad value for world"},
        {"hs1 job=1 step=1 dur=1 step=2", "given twice"},
        {"hs1 job=1 step=1 dur=1 oops", "not key=value"},
        {"hs1 job=1 step=1 dur=1 =3", "not key=value"},
        {"hs1 job=1 step=99999999999999999999999 dur=1", "bad value for step"},
        {"hs1 job=1\tstep=1 dur=1", "byte 0x09"},
        {"hs1 job=\xc3\xa9 step=1 dur=1", "byte 0xc3"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct hn_step_msg m;
        char err[128] = "";
        int rc = parse(bad[i].text, &m, err, sizeof(err));
        if (rc != -EBADMSG || !strstr(err, bad[i].why))
            fail_msg("'%s': rc %d, err '%s' (expected '%s')", bad[i].text, rc, err, bad[i].why);
    }
    /* A NUL inside, and a datagram longer than 512 bytes. */
    struct hn_step_msg m;
    char err[128];
    assert_int_equal(hn_stepmsg_parse("hs1 job=1\0 step=1 dur=1", 23, &m, err, sizeof(err)),
                     -EBADMSG);
    char big[700];
    int n = snprintf(big, sizeof(big), "hs1 job=1 step=1 dur=1 pad=");
    memset(big + n, 'x', sizeof(big) - (size_t)n - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(parse(big, &m, err, sizeof(err)), -EBADMSG);
    assert_non_null(strstr(err, "at most 512"));
    /* A job id of 64 bytes does not fit; 63 does. */
    char job[128];
    snprintf(job, sizeof(job), "hs1 step=1 dur=1 job=%064d", 7);
    assert_int_equal(parse(job, &m, err, sizeof(err)), -EBADMSG);
    snprintf(job, sizeof(job), "hs1 step=1 dur=1 job=%063d", 7);
    assert_int_equal(parse(job, &m, err, sizeof(err)), 0);
    assert_int_equal(strlen(m.job), 63);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_key),
        cmocka_unit_test(optional_and_unknown_keys),
        cmocka_unit_test(pause_notices),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
