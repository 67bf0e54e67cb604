/* mfu.c - model FLOPs utilisation arithmetic (see mfu.h). */
#include "jobs/mfu.h"

#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static int positive(double v)
{
    return isfinite(v) && v > 0;
}

double hn_mfu_flops_per_token(double params, unsigned layers, unsigned heads, double head_dim,
                              unsigned seq)
{
    if (!positive(params) || layers == 0 || heads == 0 || !positive(head_dim) || seq == 0)
        return NAN;
    /* PaLM appendix B. The attention term is formed in doubles: L*H*Q*T overflows 32 bits
     * already for PaLM 540B (118 * 48 * 256 * 2048 = 2.97e9). */
    double attention = 12.0 * layers * heads * head_dim * seq;
    double v = 6.0 * params + attention;
    return isfinite(v) ? v : NAN;
}

double hn_mfu_model_flops(double tokens_per_s, double flops_per_token, unsigned gpus)
{
    if (!positive(tokens_per_s) || !positive(flops_per_token) || gpus == 0)
        return NAN;
    double v = tokens_per_s * flops_per_token / gpus;
    return isfinite(v) ? v : NAN;
}

double hn_mfu(double tokens_per_s, double flops_per_token, unsigned gpus, double peak_flops_per_gpu)
{
    if (!positive(peak_flops_per_gpu))
        return NAN;
    /* NaN from hn_mfu_model_flops() carries through the division. */
    return hn_mfu_model_flops(tokens_per_s, flops_per_token, gpus) / peak_flops_per_gpu;
}

int hn_mfu_peak_get(const struct hn_sku_table *t, const char *sku_name, const char *dtype,
                    double *peak_flops, const struct hn_sku **sku)
{
    if (!t || !sku_name || !dtype || !peak_flops)
        return -EINVAL;
    const struct hn_sku *s = hn_sku_find(t, sku_name);
    if (!s)
        return -ENOENT;
    double peak = hn_sku_peak_flops(s, dtype);
    if (!positive(peak))
        return -ENODATA;
    *peak_flops = peak;
    if (sku)
        *sku = s;
    return 0;
}

/* The multiplier of a suffix letter; 0 when c is not one. */
static double suffix_scale(char c)
{
    switch (c) {
    case 'k':
    case 'K':
        return 1e3;
    case 'm':
    case 'M':
        return 1e6;
    case 'b':
    case 'B':
    case 'g':
    case 'G':
        return 1e9;
    case 't':
    case 'T':
        return 1e12;
    default:
        return 0;
    }
}

int hn_mfu_parse_number(const char *s, double *out)
{
    char num[64];
    if (!s || !out)
        return -EINVAL;
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof(num))
        return -EINVAL;
    double scale = suffix_scale(s[n - 1]);
    if (scale > 0)
        n--;
    else
        scale = 1;
    /* Only digits, one decimal point and an exponent reach strtod, so that hex, inf, nan,
     * blanks and a leading sign are refused here rather than half-accepted there. */
    if (n == 0 || (!(s[0] >= '0' && s[0] <= '9') && s[0] != '.'))
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' ||
                 ((c == '+' || c == '-') && i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E'));
        if (!ok)
            return -EINVAL;
    }
    memcpy(num, s, n);
    num[n] = '\0';
    double v;
    int rc = hn_parse_double(num, &v);
    if (rc != 0)
        return rc;
    v *= scale;
    if (!isfinite(v))
        return -ERANGE;
    /* 0 from digits that are not all zeros: too small for a double (1e-400), not "not
     * positive". */
    if (v == 0 && strcspn(num, "123456789") < strcspn(num, "eE"))
        return -ERANGE;
    if (!(v > 0))
        return -EINVAL;
    *out = v;
    return 0;
}
