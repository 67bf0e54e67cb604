/*
 * fuzz_sku.c - libFuzzer target for the SKU table loader (src/common/sku.c).
 *
 * Loads the input as a SKU file. When it loads, every SKU must be found by its own name, each
 * of its product-name patterns must match some SKU with a pattern at least as long, and every
 * peak must lie in the loader's TFLOP/s range. The input's first bytes are also tried as an
 * NVML product name.
 */
#include "common/sku.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_sku(const struct hn_sku_table *t, const struct hn_sku *s)
{
    if (hn_sku_find(t, s->name) != s || s->n_peaks > HN_SKU_MAX_DTYPES ||
        s->n_names > HN_SKU_MAX_NAMES || strlen(s->name) >= HN_SKU_NAME_MAX)
        abort();
    for (size_t k = 0; k < s->n_peaks; k++) {
        double f = s->peak[k].flops;
        if (!(f >= 1e12 && f <= 1e17) || hn_sku_peak_flops(s, s->peak[k].dtype) != f)
            abort();
    }
    for (size_t j = 0; j < s->n_names; j++) {
        const struct hn_sku *m = hn_sku_match_model(t, s->names[j]);
        if (!m)
            abort();
        size_t longest = 0;
        for (size_t q = 0; q < m->n_names; q++) {
            size_t len = strlen(m->names[q]);
            longest = len > longest ? len : longest;
        }
        if (longest < strlen(s->names[j]))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[300];
    struct hn_sku_table *t =
        hn_sku_table_from_buffer((const char *)data, size, "fuzz", err, sizeof(err));
    if (!t) {
        if (memchr(err, '\0', sizeof(err)) == NULL)
            abort();
        return 0;
    }
    for (size_t i = 0; i < hn_sku_table_size(t); i++)
        check_sku(t, hn_sku_table_at(t, i));

    char product[HN_SKU_MODEL_MAX + 16];
    size_t n = size < sizeof(product) - 1 ? size : sizeof(product) - 1;
    memcpy(product, data, n);
    product[n] = '\0';
    (void)hn_sku_match_model(t, product);
    (void)isnan(hn_sku_peak_flops(hn_sku_table_at(t, 0), "bf16"));
    hn_sku_table_free(t);
    return 0;
}
