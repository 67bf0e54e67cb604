/*
 * test_mfu.c - MFU arithmetic (src/jobs/mfu.c) against a published figure and its own algebra.
 *
 * The published cross-check is PaLM 540B (Chowdhery et al. 2022): N = 540e9, L = 118, H = 48,
 * Q = 256, T = 2048 (table 1 and appendix B), 238.3k tokens/s on 6144 TPU v4 chips at 275
 * TFLOP/s bf16 each, 46.2 % MFU (section 4.1, table 3). The peak comes from the shipped
 * data/skus.csv, so a wrong TPU v4 row fails here too. The other tests check relations the
 * formula implies (attention grows linearly in T, a job's rate over G GPUs equals its per-GPU
 * rate over one) rather than figures typed in from the implementation.
 */
#include "testutil.h"

#include "common/sku.h"
#include "jobs/mfu.h"
#include "verbs.h"

#include <errno.h>
#include <float.h>
#include <math.h>

/* PaLM 540B, appendix B. */
#define PALM_N    540e9
#define PALM_L    118u
#define PALM_H    48u
#define PALM_Q    256.0
#define PALM_T    2048u
#define PALM_TPS  238.3e3
#define PALM_CHIP 6144u

static struct hn_sku_table *load_shipped(void)
{
    char path[PATH_MAX], err[300] = "";
    const char *src = getenv("HN_SOURCE_DIR");
    int n = snprintf(path, sizeof(path), "%s/data/skus.csv", src ? src : HN_DATADIR "/..");
    assert_true(n > 0 && (size_t)n < sizeof(path));
    struct hn_sku_table *t = hn_sku_table_new(path, err, sizeof(err));
    if (!t)
        fail_msg("%s", err);
    return t;
}

/* ---- the published figure ---- */

static void test_palm_flops_per_token(void **state)
{
    (void)state;
    double f = hn_mfu_flops_per_token(PALM_N, PALM_L, PALM_H, PALM_Q, PALM_T);
    /* 6 * 540e9 = 3.24e12; 12 * 118 * 48 * 256 * 2048 = 35,634,806,784 (by hand: 1416 * 48 =
     * 67,968; * 256 = 17,399,808; * 2048 = 35,634,806,784). Both terms are exact in a double. */
    assert_true(f == 3240000000000.0 + 35634806784.0);
}

static void test_palm_mfu_from_sku_table(void **state)
{
    (void)state;
    struct hn_sku_table *t = load_shipped();
    double peak = 0;
    const struct hn_sku *s = NULL;
    assert_int_equal(hn_mfu_peak_get(t, "TPU-v4", "bf16", &peak, &s), 0);
    assert_non_null(s);
    assert_string_equal(s->name, "TPU-v4");
    assert_near(peak, 275e12, 1);
    double f = hn_mfu_flops_per_token(PALM_N, PALM_L, PALM_H, PALM_Q, PALM_T);
    double mfu = hn_mfu(PALM_TPS, f, PALM_CHIP, peak);
    /* The paper prints one decimal: 46.2 %. */
    assert_near(mfu, 0.462, 0.0005);
    assert_near(round(mfu * 1000) / 10, 46.2, 1e-9);
    /* And the model FLOP/s per chip, computed here from the numbers rather than from mfu:
     * 238,300 tokens/s * 3,275,634,806,784 FLOP per token / 6144 chips = 1.270481403738e14
     * (127.05 TFLOP/s, 46.2 % of 275). */
    assert_near(hn_mfu_model_flops(PALM_TPS, f, PALM_CHIP), 127048140373800.0, 1);
    hn_sku_table_free(t);
}

static void test_palm_without_attention_is_lower(void **state)
{
    (void)state;
    /* 6N alone under-counts: with the attention term PaLM's figure is reached, without it not. */
    double peak = 275e12;
    double dense_only = hn_mfu(PALM_TPS, 6 * PALM_N, PALM_CHIP, peak);
    double full = hn_mfu(PALM_TPS, hn_mfu_flops_per_token(PALM_N, PALM_L, PALM_H, PALM_Q, PALM_T),
                         PALM_CHIP, peak);
    assert_true(dense_only < full);
    assert_true(fabs(dense_only - 0.462) > 0.0005);
}

/* ---- the formula's algebra ---- */

static void test_flops_terms(void **state)
{
    (void)state;
    /* L, H, Q and T all differ, so that swapping any two of them changes the call. */
    const double n = 7e9, q = 128;
    const unsigned l = 48, h = 32, t = 4096;
    double f1 = hn_mfu_flops_per_token(n, l, h, q, t);
    double f2 = hn_mfu_flops_per_token(n, l, h, q, 2 * t);
    double f3 = hn_mfu_flops_per_token(2 * n, l, h, q, t);
    /* Doubling T adds one more attention term; doubling N adds 6N. */
    double attention = f2 - f1;
    assert_near(f1 - 6 * n, attention, 1);
    assert_near(f3 - f1, 6 * n, 1);
    /* The attention term is 12 L H Q T (PaLM appendix B): 12 * 48 * 32 * 128 * 4096. */
    assert_near(attention, 9663676416.0, 1);
    /* It is symmetric in L, H, Q and T: L and H swapped, Q and T swapped, both at once. */
    assert_near(hn_mfu_flops_per_token(n, h, l, q, t), f1, 1);
    assert_near(hn_mfu_flops_per_token(n, l, h, (double)t, (unsigned)q), f1, 1);
    assert_near(hn_mfu_flops_per_token(n, h, l, (double)t, (unsigned)q), f1, 1);
}

static void test_moe_counts_active_params(void **state)
{
    (void)state;
    /* A mixture of experts costs what its active parameters cost: an 8 x 7B-style model with 13B
     * active costs as a dense 13B one of the same attention shape, far less than 47B. */
    double moe = hn_mfu_flops_per_token(13e9, 32, 32, 128, 4096);
    double dense_total = hn_mfu_flops_per_token(47e9, 32, 32, 128, 4096);
    assert_near(dense_total - moe, 6 * (47e9 - 13e9), 1);
}

static void test_rate_per_job_equals_per_gpu(void **state)
{
    (void)state;
    const double f = 1.5e12, peak = 989.4e12;
    double job = hn_mfu(80e3, f, 256, peak);
    double per_gpu = hn_mfu(80e3 / 256, f, 1, peak);
    assert_near(job, per_gpu, 1e-12);
    assert_near(hn_mfu_model_flops(80e3, f, 256), 80e3 / 256 * f, 1);
    /* Twice the GPUs at the same job rate is half the utilisation. */
    assert_near(hn_mfu(80e3, f, 512, peak), job / 2, 1e-12);
}

static void test_mfu_not_clamped(void **state)
{
    (void)state;
    /* Above 100 % means the inputs are wrong; the caller must see that, not 1.0. */
    assert_true(hn_mfu(1e6, 1e12, 1, 989.4e12) > 1);
}

static void test_bad_inputs_are_nan(void **state)
{
    (void)state;
    assert_true(isnan(hn_mfu_flops_per_token(0, 1, 1, 1, 1)));
    assert_true(isnan(hn_mfu_flops_per_token(-1, 1, 1, 1, 1)));
    assert_true(isnan(hn_mfu_flops_per_token(NAN, 1, 1, 1, 1)));
    assert_true(isnan(hn_mfu_flops_per_token(INFINITY, 1, 1, 1, 1)));
    assert_true(isnan(hn_mfu_flops_per_token(1, 0, 1, 1, 1)));
    assert_true(isnan(hn_mfu_flops_per_token(1, 1, 0, 1, 1)));
    assert_true(isnan(hn_mfu_flops_per_token(1, 1, 1, 0, 1)));
    assert_true(isnan(hn_mfu_flops_per_token(1, 1, 1, 1, 0)));
    /* Overflow is NaN too, not infinity. */
    assert_true(isnan(hn_mfu_flops_per_token(DBL_MAX, 1, 1, 1, 1)));
    assert_true(isnan(hn_mfu_flops_per_token(1, UINT_MAX, UINT_MAX, 1e300, UINT_MAX)));
    assert_true(isnan(hn_mfu_model_flops(0, 1, 1)));
    assert_true(isnan(hn_mfu_model_flops(1, -1, 1)));
    assert_true(isnan(hn_mfu_model_flops(1, 1, 0)));
    assert_true(isnan(hn_mfu_model_flops(DBL_MAX, DBL_MAX, 1)));
    assert_true(isnan(hn_mfu(1, 1, 1, 0)));
    assert_true(isnan(hn_mfu(1, 1, 1, NAN)));
    assert_true(isnan(hn_mfu(1, 1, 1, -1)));
    assert_true(isnan(hn_mfu(0, 1, 1, 1)));
}

/* ---- the peak lookup ---- */

static void test_peak_get(void **state)
{
    (void)state;
    struct hn_sku_table *t = load_shipped();
    double peak = -1;
    const struct hn_sku *s = NULL;
    /* Names ignore case; the peak is the row's dense figure in FLOP/s. */
    assert_int_equal(hn_mfu_peak_get(t, "h100", "BF16", &peak, &s), 0);
    assert_string_equal(s->name, "H100");
    assert_near(peak, hn_sku_peak_flops(hn_sku_find(t, "H100"), "bf16"), 0);
    assert_int_equal(hn_mfu_peak_get(t, "b200", "fp4", &peak, NULL), 0);
    assert_near(peak, hn_sku_peak_flops(hn_sku_find(t, "B200"), "fp4"), 0);
    assert_true(peak > 0);
    /* No FP4 on Hopper: a missing figure is its own error and leaves the outputs alone. */
    peak = -1;
    s = NULL;
    assert_int_equal(hn_mfu_peak_get(t, "H100", "fp4", &peak, &s), -ENODATA);
    assert_int_equal(hn_mfu_peak_get(t, "H100", "int3", &peak, &s), -ENODATA);
    assert_true(peak == -1 && s == NULL);
    assert_int_equal(hn_mfu_peak_get(t, "H900", "bf16", &peak, &s), -ENOENT);
    /* The CLI's short names are not SKU names; the table does not guess. */
    assert_int_equal(hn_mfu_peak_get(t, "tpuv4", "bf16", &peak, &s), -ENOENT);
    assert_true(peak == -1 && s == NULL);
    assert_int_equal(hn_mfu_peak_get(NULL, "H100", "bf16", &peak, &s), -EINVAL);
    assert_int_equal(hn_mfu_peak_get(t, NULL, "bf16", &peak, &s), -EINVAL);
    assert_int_equal(hn_mfu_peak_get(t, "H100", NULL, &peak, &s), -EINVAL);
    assert_int_equal(hn_mfu_peak_get(t, "H100", "bf16", NULL, &s), -EINVAL);
    hn_sku_table_free(t);
}

/* ---- numbers ---- */

static void test_parse_number_accepts(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double want;
    } cases[] = {
        {"540e9", 540e9}, {"540B", 540e9},     {"540b", 540e9},     {"70B", 70e9},
        {"7.5M", 7.5e6},  {"238.3k", 238.3e3}, {"238.3K", 238.3e3}, {"6144", 6144},
        {"1.2T", 1.2e12}, {"2G", 2e9},         {"0.5", 0.5},        {".5k", 500},
        {"1e3k", 1e6},    {"2.5e+3", 2500},    {"5e-1", 0.5},       {"007", 7},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        double v = -1;
        if (hn_mfu_parse_number(cases[i].text, &v) != 0)
            fail_msg("'%s' refused", cases[i].text);
        if (fabs(v - cases[i].want) > cases[i].want * 1e-15)
            fail_msg("'%s': got %.17g, want %.17g", cases[i].text, v, cases[i].want);
    }
}

static void test_parse_number_refuses(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "0",
        "0.0",
        "-1",
        "+1",
        " 1",
        "1 ",
        "1kk",
        "k",
        "B",
        "1e",
        "1.2.3",
        "0x10",
        "inf",
        "nan",
        "1,000",
        "1_000",
        "1 k",
        "1Kb",
        "e5",
        "1e5e",
        "1P",
        "12345678901234567890123456789012345678901234567890123456789012345",
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(bad); i++) {
        double v = 42;
        if (hn_mfu_parse_number(bad[i], &v) == 0)
            fail_msg("'%s' accepted as %g", bad[i], v);
        assert_true(v == 42);
    }
    double v = 42;
    assert_int_equal(hn_mfu_parse_number("1e400", &v), -ERANGE);
    assert_int_equal(hn_mfu_parse_number("1e308T", &v), -ERANGE);
    assert_int_equal(hn_mfu_parse_number("1e-400", &v), -ERANGE); /* underflows: no 0 */
    assert_int_equal(hn_mfu_parse_number("0e5", &v), -EINVAL);    /* zero: not positive */
    assert_int_equal(hn_mfu_parse_number("0.000", &v), -EINVAL);
    assert_int_equal(hn_mfu_parse_number("-5", &v), -EINVAL);
    assert_true(v == 42);
    assert_int_equal(hn_mfu_parse_number(NULL, &v), -EINVAL);
    assert_int_equal(hn_mfu_parse_number("1", NULL), -EINVAL);
}

/* ---- the verb's output (src/jobs/mfu_cmd.c) ---- */

/* The human lines show the peak as the SKU file writes it: GB300's 15000 fp4 TFLOP/s is not
 * "1.5e+04", H100's 1978.9 fp8 not "1979". */
static void test_cmd_peak_as_written(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *dtype, *peak;
    } cases[] = {
        {"gb300", "fp4", "15000"},
        {"gb200", "fp4", "10000"},
        {"h100", "fp8", "1978.9"},
        {"tpuv4", "bf16", "275"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[] = {"mfu",
                        "--flops-per-token",
                        "1e12",
                        "--gpu",
                        (char *)cases[i].gpu,
                        "--tokens-per-sec-per-gpu",
                        "100",
                        "--dtype",
                        (char *)cases[i].dtype,
                        NULL};
        struct tu_capture c;
        tu_capture_begin(&c);
        int rc = hn_cmd_mfu(9, argv);
        tu_capture_end(&c);
        char *out = tu_slurp(c.out, NULL);
        char want[2][64];
        (void)snprintf(want[0], sizeof(want[0]), "100.0 of %s peak\n", cases[i].peak);
        (void)snprintf(want[1], sizeof(want[1]), "peak                   %s TFLOP/s dense %s",
                       cases[i].peak, cases[i].dtype);
        if (rc != 0 || !strstr(out, want[0]) || !strstr(out, want[1]))
            fail_msg("--gpu %s --dtype %s: rc %d, want '%s' and '%s' in:\n%s", cases[i].gpu,
                     cases[i].dtype, rc, want[0], want[1], out);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_palm_flops_per_token),
        cmocka_unit_test(test_palm_mfu_from_sku_table),
        cmocka_unit_test(test_palm_without_attention_is_lower),
        cmocka_unit_test(test_flops_terms),
        cmocka_unit_test(test_moe_counts_active_params),
        cmocka_unit_test(test_rate_per_job_equals_per_gpu),
        cmocka_unit_test(test_mfu_not_clamped),
        cmocka_unit_test(test_bad_inputs_are_nan),
        cmocka_unit_test(test_peak_get),
        cmocka_unit_test(test_parse_number_accepts),
        cmocka_unit_test(test_parse_number_refuses),
        cmocka_unit_test(test_cmd_peak_as_written),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
