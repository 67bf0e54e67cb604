/*
 * mfu.h - model FLOPs utilisation (MFU) arithmetic: FLOPs per token of a transformer, the model
 * FLOP/s a job achieves, that rate as a fraction of the accelerators' dense peak, and the number
 * syntax (540B, 238.3k) the `houston mfu` verb reads.
 *
 * MFU is defined as in the PaLM paper (Chowdhery et al. 2022, "PaLM: Scaling Language Modeling
 * with Pathways", section 4.1 and appendix B): the FLOP/s the model's own arithmetic needs at the
 * observed token rate, divided by the peak FLOP/s of the accelerators. Work the system does on
 * top of that (activation rematerialisation, padding, communication) does not count, so MFU can
 * be compared across systems and parallelism layouts.
 *
 * Every function here is pure: no I/O, no globals, no allocation; safe from any thread. The
 * arithmetic functions take and return doubles and answer NaN for an input that is not a finite
 * positive number (as hn_sku_peak_flops() answers NaN for a missing figure), so that one bad
 * input shows as NaN in a ledger rather than as a plausible figure. The functions that look
 * things up or parse text return 0 or a negative errno, results through out-parameters.
 */
#ifndef HN_MFU_H
#define HN_MFU_H

#include "common/sku.h"

/*
 * Training FLOPs per token of a decoder-only transformer, forward and backward pass together,
 * from PaLM appendix B:
 *
 *     6 * N  +  12 * L * H * Q * T
 *
 * N parameters (for a mixture-of-experts model the parameters active for one token), L layers,
 * H attention heads, Q head dimension, T sequence length in tokens. 6N counts the matmuls with
 * the weights (2 FLOPs per multiply-add, times 3 for the forward pass and the two backward
 * matmuls); 12LHQT the attention score and value matmuls over the full T x T matrix (no saving
 * for a causal mask, as in the paper). NaN unless every input is positive and finite.
 */
double hn_mfu_flops_per_token(double params, unsigned layers, unsigned heads, double head_dim,
                              unsigned seq);

/* Model FLOP/s per accelerator: tokens_per_s (the whole job's rate over gpus accelerators) times
 * flops_per_token, divided by gpus. NaN unless every input is positive and finite. */
double hn_mfu_model_flops(double tokens_per_s, double flops_per_token, unsigned gpus);

/* MFU as a fraction (0.462 for 46.2 %): hn_mfu_model_flops() divided by peak_flops_per_gpu, the
 * dense peak FLOP/s of one accelerator for the data type the job computes in. It is not clamped:
 * a figure above 1 means the inputs disagree (a token rate or a GPU count that is wrong). NaN
 * unless every input is positive and finite. */
double hn_mfu(double tokens_per_s, double flops_per_token, unsigned gpus,
              double peak_flops_per_gpu);

/*
 * Dense peak FLOP/s of the SKU named sku_name (hn_sku_find: the `sku` column, ignoring case) for
 * dtype ("bf16", "fp8", ...). On success stores the peak in *peak_flops and, when sku is not NULL,
 * the row (borrowed from t) in *sku, and returns 0. Returns -ENOENT when t has no such SKU,
 * -ENODATA when the SKU has no figure for dtype (fp4 on an H100), -EINVAL for a NULL argument.
 */
int hn_mfu_peak_get(const struct hn_sku_table *t, const char *sku_name, const char *dtype,
                    double *peak_flops, const struct hn_sku **sku);

/*
 * Parses a positive count or rate: a decimal number, optionally with an exponent (540e9), and
 * optionally one suffix letter, either case: k (10^3), M (10^6), B or G (10^9), T (10^12). So
 * "540B", "7.5M" and "238.3k" read 540e9, 7.5e6 and 238300. The suffixes are decimal (k is 1000,
 * not 1024). Nothing else is accepted: no blanks, signs other than in the exponent, hex, inf or
 * nan. Returns 0 with the value in *out, -EINVAL for bad text or a value that is not above zero,
 * -ERANGE when it overflows or underflows a double; *out is untouched on error.
 */
int hn_mfu_parse_number(const char *s, double *out);

#endif
