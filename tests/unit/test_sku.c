/*
 * test_sku.c - the SKU table (src/common/sku.c) and the shipped data/skus.csv.
 *
 * Expected figures are the dense peaks cited in data/SOURCE.md: H100 SXM5 BF16 989.4 TFLOP/s
 * (NVIDIA H100 whitepaper), TPU v4 BF16 275 TFLOP/s (Google Cloud TPU v4 page, the figure
 * PaLM's MFU uses). Product names come from the real nvidia-smi captures: those in
 * tests/fixtures/nvidia-smi/hardware are read from the files, the A100, L40S and T4 names are
 * quoted from the other captures listed in shared/data/nvidia-smi/hardware/SOURCE.md.
 */
#include "testutil.h"

#include "common/sku.h"

#include <errno.h>
#include <math.h>

static const char *shipped(char *buf, size_t size)
{
    const char *src = getenv("HN_SOURCE_DIR");
    int n = snprintf(buf, size, "%s/data/skus.csv", src ? src : HN_DATADIR "/..");
    assert_true(n > 0 && (size_t)n < size);
    return buf;
}

static struct hn_sku_table *load_shipped(void)
{
    char path[PATH_MAX], err[300] = "";
    struct hn_sku_table *t = hn_sku_table_new(shipped(path, sizeof(path)), err, sizeof(err));
    if (!t)
        fail_msg("%s", err);
    return t;
}

/* Loads text as a SKU file; returns the table or NULL with the message in err. */
static struct hn_sku_table *load_text(const char *text, char *err, size_t errsize)
{
    char path[PATH_MAX];
    tu_write_in(path, sizeof(path), tu_tmpdir(), "skus.csv", text);
    return hn_sku_table_new(path, err, errsize);
}

static void assert_flops(const struct hn_sku *s, const char *dtype, double tflops)
{
    assert_non_null(s);
    double got = hn_sku_peak_flops(s, dtype);
    if (isnan(got) || fabs(got - tflops * 1e12) > 1e6)
        fail_msg("%s %s: got %g, want %g", s->name, dtype, got, tflops * 1e12);
}

/* ---- the shipped file ---- */

static void test_shipped_every_row(void **state)
{
    (void)state;
    struct hn_sku_table *t = load_shipped();
    assert_int_equal(hn_sku_table_size(t), 11);
    for (size_t i = 0; i < hn_sku_table_size(t); i++) {
        const struct hn_sku *s = hn_sku_table_at(t, i);
        assert_non_null(s);
        assert_true(s->name[0] != '\0');
        assert_true(s->source[0] != '\0');
        assert_true(s->n_names >= 1);
        assert_true(s->n_peaks >= 1);
        for (size_t k = 0; k < s->n_peaks; k++)
            assert_true(s->peak[k].flops > 1e12 && s->peak[k].flops < 1e17);
        assert_true(s->hbm_gib >= 16 && s->hbm_gib <= 288);
        assert_true(s->hbm_tbps >= 0.3 && s->hbm_tbps <= 8);
        assert_true(s->tdp_w >= 70 && s->tdp_w <= 1400);
        assert_true(isnan(s->nvlink_gbps) || s->nvlink_gbps >= 600);
        assert_true(isnan(s->slowdown_c) || (s->slowdown_c > 80 && s->slowdown_c < 100));
        assert_ptr_equal(hn_sku_find(t, s->name), s);
    }
    assert_null(hn_sku_table_at(t, hn_sku_table_size(t)));
    hn_sku_table_free(t);
}

static void test_shipped_figures(void **state)
{
    (void)state;
    struct hn_sku_table *t = load_shipped();
    const struct hn_sku *h100 = hn_sku_find(t, "H100");
    assert_flops(h100, "bf16", 989.4);
    assert_flops(h100, "BF16", 989.4); /* dtype ignores case */
    assert_flops(h100, "fp16", 989.4);
    assert_flops(h100, "tf32", 494.7);
    assert_flops(h100, "fp8", 1978.9);
    assert_flops(h100, "fp64", 66.9);
    assert_true(isnan(hn_sku_peak_flops(h100, "fp4"))); /* Hopper has no FP4 */
    assert_true(isnan(hn_sku_peak_flops(h100, "int8")));
    assert_true(isnan(hn_sku_peak_flops(h100, NULL)));
    assert_true(isnan(hn_sku_peak_flops(NULL, "bf16")));
    assert_float_equal(h100->hbm_gib, 80, 0);
    assert_float_equal(h100->hbm_tbps, 3.35, 1e-9);
    assert_float_equal(h100->nvlink_gbps, 900, 0);
    assert_float_equal(h100->tdp_w, 700, 0);
    assert_true(isnan(h100->slowdown_c));

    const struct hn_sku *tpu = hn_sku_find(t, "tpu-V4"); /* names ignore case */
    assert_non_null(tpu);
    assert_string_equal(tpu->name, "TPU-v4");
    assert_string_equal(tpu->vendor, "Google");
    assert_flops(tpu, "bf16", 275);
    assert_true(isnan(hn_sku_peak_flops(tpu, "fp8")));
    assert_true(isnan(tpu->nvlink_gbps));

    assert_flops(hn_sku_find(t, "A100-80GB"), "bf16", 312);
    assert_flops(hn_sku_find(t, "H200"), "bf16", 989.5);
    assert_flops(hn_sku_find(t, "B200"), "fp4", 9000);
    assert_flops(hn_sku_find(t, "GB200"), "bf16", 2500);
    assert_flops(hn_sku_find(t, "GB300"), "fp4", 15000);
    assert_flops(hn_sku_find(t, "T4"), "fp16", 65);
    assert_float_equal(hn_sku_find(t, "T4")->slowdown_c, 93, 0);
    assert_float_equal(hn_sku_find(t, "GB300")->hbm_gib, 288, 0);

    assert_null(hn_sku_find(t, "H100-PCIe"));
    assert_null(hn_sku_find(t, ""));
    assert_null(hn_sku_find(t, NULL));
    assert_null(hn_sku_find(NULL, "H100"));
    hn_sku_table_free(t);
}

/* The first <product_name> of a capture in tests/fixtures/nvidia-smi/hardware. */
static void capture_product(const char *file, char *out, size_t size)
{
    char path[PATH_MAX];
    tu_fixture(path, sizeof(path), "nvidia-smi/hardware/%s", file);
    char *xml = tu_slurp(path, NULL);
    const char *p = strstr(xml, "<product_name>");
    assert_non_null(p);
    p += strlen("<product_name>");
    const char *e = strchr(p, '<');
    assert_non_null(e);
    assert_true((size_t)(e - p) < size);
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = '\0';
    free(xml);
}

static void test_match_captures(void **state)
{
    (void)state;
    static const struct {
        const char *file, *sku;
    } captures[] = {
        {"qx-h100.xml", "H100"},
        {"qx-b200.xml", "B200"},
        {"qx-gb200.xml", "GB200"},
        {"qx-gb300.xml", "GB300"},
    };
    struct hn_sku_table *t = load_shipped();
    for (size_t i = 0; i < HN_ARRAY_LEN(captures); i++) {
        char product[128];
        capture_product(captures[i].file, product, sizeof(product));
        const struct hn_sku *s = hn_sku_match_model(t, product);
        if (!s || strcmp(s->name, captures[i].sku) != 0)
            fail_msg("'%s' matched %s, want %s", product, s ? s->name : "nothing", captures[i].sku);
    }
    hn_sku_table_free(t);
}

static void test_match_names(void **state)
{
    (void)state;
    static const struct {
        const char *product, *sku; /* sku NULL: must match nothing */
    } cases[] = {
        /* Quoted from shared/data/nvidia-smi/hardware/qx-{a100,l40s,t4}.xml. */
        {"NVIDIA A100-SXM4-40GB", "A100-40GB"},
        {"NVIDIA L40S", "L40S"},
        {"Tesla T4", "T4"},
        {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
        {"NVIDIA A100-SXM-80GB", "A100-80GB"},
        {"NVIDIA H200", "H200"},
        {"NVIDIA H200 NVL", "H200-NVL"},   /* the longer pattern wins */
        {"nvidia h100 80gb hbm3", "H100"}, /* case is ignored */
        {"  NVIDIA B200  ", "B200"},
        /* Whole words only: a pattern inside a longer word is no match. */
        {"NVIDIA GH200 480GB", NULL},
        {"NVIDIA GB200X", NULL},
        {"NVIDIA H100 PCIe", NULL},
        {"NVIDIA H100 80GB HBM3e", NULL},
        {"NVIDIA L40", NULL},
        {"", NULL},
    };
    struct hn_sku_table *t = load_shipped();
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        const struct hn_sku *s = hn_sku_match_model(t, cases[i].product);
        const char *got = s ? s->name : NULL;
        if ((got == NULL) != (cases[i].sku == NULL) || (got && strcmp(got, cases[i].sku) != 0))
            fail_msg("'%s' matched %s, want %s", cases[i].product, got ? got : "nothing",
                     cases[i].sku ? cases[i].sku : "nothing");
    }
    assert_null(hn_sku_match_model(t, NULL));
    assert_null(hn_sku_match_model(NULL, "NVIDIA B200"));

    /* Only the first HN_SKU_MODEL_MAX - 1 bytes are looked at. */
    char longname[HN_SKU_MODEL_MAX + 32];
    memset(longname, ' ', sizeof(longname));
    memcpy(longname + HN_SKU_MODEL_MAX, "B200", 4);
    longname[sizeof(longname) - 1] = '\0';
    assert_null(hn_sku_match_model(t, longname));
    memcpy(longname + 10, "B200", 4);
    assert_non_null(hn_sku_match_model(t, longname));
    hn_sku_table_free(t);
}

/* ---- bad files ---- */

static void test_bad_files(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "empty file"},
        {"sku,bf16_tflops\nX,1\n", "line 1: header lacks column 'names'"},
        {"names,bf16_tflops\nX,1\n", "line 1: header lacks column 'sku'"},
        {"sku,names,hbm_gb\nX,,80\n", "line 1: unknown column 'hbm_gb'"},
        {"sku,names,names\n", "line 1: column 'names' appears twice"},
        {"\xEF\xBB\xBFnames,sku,names\n", "line 1: column 'names' appears twice"},
        {"sku,names,BF16_tflops\n", "line 1: dtype of column 'BF16_tflops'"},
        {"sku,names,averyveryverylongdtype_tflops\n", "line 1: dtype of column"},
        {"sku,names,_tflops\n", "line 1: unknown column '_tflops'"},
        {"sku,names,bf16_tflops\nA,,1\n\nB,,2,3\n", "line 4: 4 fields, the header has 3"},
        {"sku,names,bf16_tflops\nA,,abc\n", "line 2: bf16_tflops 'abc' is not a number"},
        {"sku,names,bf16_tflops\nA,,1e999\n", "line 2: bf16_tflops '1e999' is not a number"},
        {"sku,names,bf16_tflops\nA,,inf\n", "line 2: bf16_tflops 'inf' is not a number"},
        {"sku,names,bf16_tflops\nA,,nan\n", "line 2: bf16_tflops 'nan' is not a number"},
        /* FLOP/s or PFLOP/s typed into a TFLOP/s column. */
        {"sku,names,bf16_tflops\nA,,989.4e12\n", "line 2: bf16_tflops 9.894e+14 is outside"},
        {"sku,names,bf16_tflops\nA,,0.9894\n", "line 2: bf16_tflops 0.9894 is outside"},
        {"sku,names,hbm_gib\nA,,85899345920\n", "line 2: hbm_gib 8.58993e+10 is outside"},
        {"sku,names,hbm_tbps\nA,,3350\n", "line 2: hbm_tbps 3350 is outside"},
        {"sku,names,tdp_w\nA,,0.7\n", "line 2: tdp_w 0.7 is outside"},
        {"sku,names,slowdown_c\nA,,360\n", "line 2: slowdown_c 360 is outside"},
        {"sku,names,nvlink_gbps\nA,,-900\n", "line 2: nvlink_gbps -900 is outside"},
        {"sku,names\n,x\n", "line 2: sku must be"},
        {"sku,names\nH100 SXM,x\n", "line 2: sku 'H100 SXM' may hold only"},
        {"sku,names\nA23456789012345678901234567890123,x\n", "line 2: sku must be"},
        {"sku,names\nH100,x\nh100,y\n", "line 3: SKU 'h100' is already defined on line 2"},
        {"sku,names\nA,x;;y\n", "line 2: names: each pattern must be"},
        {"sku,names\nA,-SXM\n", "line 2: names: pattern '-SXM' must start and end"},
        {"sku,names\nA,x\nB,y\nC,z;X\n",
         "line 4: names: pattern 'X' of SKU 'C' is already claimed by SKU 'A' (line 2)"},
        {"sku,names\nA,x;y;x\n", "line 2: names: pattern 'x' is listed twice"},
        {"sku,names\nA,\"x\"y\n", "line 2: text after the closing quote"},
        {"sku,names\nA,x\"y\n", "line 2: quote inside an unquoted field"},
        {"sku,names,vendor\n\nA,x,\"unterminated\n", "line 3: quoted field opened here"},
        {"sku,names\nA,1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17\n",
         "line 2: names: more than 16 patterns"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        char err[300] = "";
        struct hn_sku_table *t = load_text(cases[i].text, err, sizeof(err));
        if (t) {
            hn_sku_table_free(t);
            fail_msg("case %zu loaded, want '%s'", i, cases[i].want);
        }
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: got '%s', want '%s'", i, err, cases[i].want);
        /* Every message names the file. */
        assert_non_null(strstr(err, "skus.csv: "));
    }
}

static void test_bad_paths(void **state)
{
    (void)state;
    char err[300] = "";
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/missing.csv", tu_tmpdir());
    assert_null(hn_sku_table_new(path, err, sizeof(err)));
    assert_non_null(strstr(err, "missing.csv: No such file"));
    assert_null(hn_sku_table_new(tu_tmpdir(), err, sizeof(err)));
    assert_non_null(strstr(err, "not a regular file"));

    /* Too many dtype columns. */
    char text[1024] = "sku,names";
    for (int i = 0; i <= HN_SKU_MAX_DTYPES; i++) {
        char col[32];
        snprintf(col, sizeof(col), ",d%d_tflops", i);
        strncat(text, col, sizeof(text) - strlen(text) - 1);
    }
    strncat(text, "\n", sizeof(text) - strlen(text) - 1);
    assert_null(load_text(text, err, sizeof(err)));
    assert_non_null(strstr(err, "line 1: more than 12 *_tflops columns"));
}

/* ---- good files ---- */

static void test_minimal_file(void **state)
{
    (void)state;
    char err[300] = "";
    /* A byte-order mark, CRLF line ends, blank cells, quoted names with spaces, a column
     * order of its own and a dtype the shipped file lacks. */
    const char *text = "\xEF\xBB\xBFint8_tflops,names,sku\r\n"
                       "624,\" Acme X1 ; X1-SXM \",Acme-X1\r\n"
                       ",,Bare\r\n";
    struct hn_sku_table *t = load_text(text, err, sizeof(err));
    if (!t)
        fail_msg("%s", err);
    assert_int_equal(hn_sku_table_size(t), 2);
    const struct hn_sku *x1 = hn_sku_find(t, "acme-x1");
    assert_non_null(x1);
    assert_int_equal(x1->line, 2);
    assert_string_equal(x1->vendor, "");
    assert_int_equal(x1->n_names, 2);
    assert_string_equal(x1->names[0], "Acme X1");
    assert_string_equal(x1->names[1], "X1-SXM");
    assert_flops(x1, "int8", 624);
    assert_true(isnan(x1->hbm_gib) && isnan(x1->tdp_w) && isnan(x1->slowdown_c));
    assert_ptr_equal(hn_sku_match_model(t, "ACME X1-SXM rev 2"), x1);
    const struct hn_sku *bare = hn_sku_find(t, "Bare");
    assert_non_null(bare);
    assert_int_equal(bare->n_names, 0);
    assert_int_equal(bare->n_peaks, 0);
    hn_sku_table_free(t);

    /* A header alone is an empty table. */
    t = load_text("sku,names\n", err, sizeof(err));
    assert_non_null(t);
    assert_int_equal(hn_sku_table_size(t), 0);
    assert_null(hn_sku_match_model(t, "NVIDIA B200"));
    hn_sku_table_free(t);
}

static void test_overlay(void **state)
{
    (void)state;
    char err[300] = "", path[PATH_MAX];
    struct hn_sku_table *t = load_shipped();
    size_t n = hn_sku_table_size(t);

    /* Replace H100 (a site capping power at 500 W) and add a SKU. */
    tu_write_in(path, sizeof(path), tu_tmpdir(), "site.csv",
                "sku,names,bf16_tflops,tdp_w\n"
                "h100,H100 80GB HBM3;H100 SXM5 80GB,989.4,500\n"
                "H100-PCIe,H100 PCIe,756,350\n");
    assert_int_equal(hn_sku_table_overlay(t, path, err, sizeof(err)), 0);
    assert_int_equal(hn_sku_table_size(t), n + 1);
    const struct hn_sku *h100 = hn_sku_find(t, "H100");
    assert_non_null(h100);
    assert_string_equal(h100->name, "h100"); /* the whole row is the overlay's */
    assert_float_equal(h100->tdp_w, 500, 0);
    assert_true(isnan(h100->hbm_gib));
    assert_true(isnan(hn_sku_peak_flops(h100, "fp8")));
    assert_ptr_equal(hn_sku_match_model(t, "NVIDIA H100 SXM5 80GB"), h100);
    assert_ptr_equal(hn_sku_table_at(t, n), hn_sku_find(t, "H100-PCIe"));
    assert_string_equal(hn_sku_match_model(t, "NVIDIA H100 PCIe")->name, "H100-PCIe");

    /* A failed overlay (a pattern B200 already owns) leaves the table as it was. */
    tu_write_in(path, sizeof(path), tu_tmpdir(), "bad.csv",
                "sku,names,bf16_tflops\nNew,b200,1\nH100,x,2\n");
    assert_int_equal(hn_sku_table_overlay(t, path, err, sizeof(err)), -EEXIST);
    assert_non_null(strstr(err, "bad.csv: line 2: names: pattern 'b200' of SKU 'New'"));
    assert_int_equal(hn_sku_table_size(t), n + 1);
    assert_ptr_equal(hn_sku_find(t, "H100"), h100);
    assert_null(hn_sku_find(t, "New"));
    assert_float_equal(h100->tdp_w, 500, 0);

    /* A pattern may move to another SKU when the overlay replaces its old owner too. */
    tu_write_in(path, sizeof(path), tu_tmpdir(), "move.csv",
                "sku,names\nB200,NVIDIA B200 rev1\nB200-Site,B200\n");
    assert_int_equal(hn_sku_table_overlay(t, path, err, sizeof(err)), 0);
    assert_string_equal(hn_sku_match_model(t, "NVIDIA B200")->name, "B200-Site");
    assert_string_equal(hn_sku_match_model(t, "NVIDIA B200 rev1")->name, "B200");

    snprintf(path, sizeof(path), "%s/none.csv", tu_tmpdir());
    assert_int_equal(hn_sku_table_overlay(t, path, err, sizeof(err)), -ENOENT);
    hn_sku_table_free(t);
}

static void test_from_buffer_and_default(void **state)
{
    (void)state;
    char err[300] = "";
    const char text[] = "sku,names,bf16_tflops\nA,x,2\n";
    struct hn_sku_table *t =
        hn_sku_table_from_buffer(text, sizeof(text) - 1, "mem", err, sizeof(err));
    assert_non_null(t);
    assert_flops(hn_sku_find(t, "A"), "bf16", 2);
    hn_sku_table_free(t);
    hn_sku_table_free(NULL);
    assert_int_equal(hn_sku_table_size(NULL), 0);
    assert_null(hn_sku_table_at(NULL, 0));

    const char nul[] = "sku,names\nA,x\0y\n";
    assert_null(hn_sku_table_from_buffer(nul, sizeof(nul) - 1, "mem", err, sizeof(err)));
    assert_non_null(strstr(err, "mem: line 2: NUL byte"));

    const char *def = hn_sku_default_path();
    size_t len = strlen(def);
    assert_true(len > 9 && strcmp(def + len - 9, "/skus.csv") == 0);
    t = hn_sku_table_new(def, err, sizeof(err));
    if (!t)
        fail_msg("%s", err);
    hn_sku_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_every_row),
        cmocka_unit_test(test_shipped_figures),
        cmocka_unit_test(test_match_captures),
        cmocka_unit_test(test_match_names),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_minimal_file),
        cmocka_unit_test(test_overlay),
        cmocka_unit_test(test_from_buffer_and_default),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
