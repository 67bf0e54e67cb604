/*
 * mfu_cmd.c - `houston mfu`: model FLOPs utilisation of a training job from a model description
 * (or FLOPs per token) and a token rate, against the dense peak in the SKU table.
 *
 * The arithmetic is in mfu.c; this file parses flags, checks that they describe one job without
 * contradiction, finds the peak (data/skus.csv, optionally overlaid by --sku-file as the
 * controller's `sku-file` key is) and prints the result for people or as one JSON object.
 * Every refusal is one `houston mfu: ...` line on stderr and exit 2.
 */
#include "verbs.h"

#include "common/opts.h"
#include "common/sku.h"
#include "common/util.h"
#include "jobs/mfu.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Short names the issue asks for whose SKU rows are named differently. Both A100 rows carry the
 * same dense peaks (data/SOURCE.md, nvidia-a100), so `a100` may stand for either. A row in the
 * table with the short name itself (a site's --sku-file) is found first and wins. */
static const struct {
    const char *alias;
    const char *sku;
} gpu_aliases[] = {
    {"a100", "A100-80GB"},
    {"tpuv4", "TPU-v4"},
};

struct mfu_opts {
    double params;        /* --params; 0 when not given (as for every number below) */
    double active_params; /* --active-params */
    unsigned layers, heads, seq;
    unsigned head_dim; /* --head-dim */
    unsigned hidden;   /* --hidden */
    double flops_per_token;
    double tokens_per_s;         /* --tokens-per-sec, the whole job */
    double tokens_per_s_per_gpu; /* --tokens-per-sec-per-gpu */
    unsigned gpus;
    const char *gpu;   /* --gpu, as typed */
    const char *dtype; /* --dtype, default bf16 */
    const char *sku_file;
    int json;
};

/* What the flags describe once checked: one job. */
struct mfu_job {
    double active;   /* parameters in the 6N term */
    double head_dim; /* Q */
    double flops_per_token;
    int from_model; /* flops_per_token came from the model description */
    double tokens_per_s_per_gpu;
    double tokens_per_s; /* the whole job's; 0 when --gpus is unknown */
};

void hn_usage_mfu(FILE *out)
{
    fprintf(
        out,
        "usage: houston mfu --gpu GPU (--tokens-per-sec X --gpus G | --tokens-per-sec-per-gpu X)\n"
        "                   (--params N --layers L --heads H (--head-dim Q | --hidden D) --seq T\n"
        "                    | --flops-per-token F) [--dtype bf16|fp8|fp4] [--json]\n\n"
        "Model FLOPs utilisation (MFU) of a training job: the FLOP/s the model needs at the\n"
        "observed token rate, as a fraction of the GPUs' dense peak (PaLM, Chowdhery et al.\n"
        "2022, section 4.1 and appendix B). Rematerialisation and communication do not count.\n\n"
        "  FLOPs per token  F = 6*N + 12*L*H*Q*T   (forward + backward, PaLM appendix B)\n"
        "  model FLOP/s per GPU = tokens/s of the job * F / G\n"
        "  MFU = model FLOP/s per GPU / dense peak FLOP/s of one GPU for --dtype\n\n"
        "model (or --flops-per-token):\n"
        "  --params N            parameters N in 6N (dense models; for MoE see next)\n"
        "  --active-params N     parameters active per token (MoE): used in 6N instead of\n"
        "                        --params, which is then the total and only reported\n"
        "  --layers L            transformer layers\n"
        "  --heads H             attention heads (query heads)\n"
        "  --head-dim Q          dimension of one attention head\n"
        "  --hidden D            model width instead of --head-dim: Q = D/H (true for most\n"
        "                        models, not all: PaLM 540B has D 18432, H 48, Q 256)\n"
        "  --seq T               sequence length in tokens (write 8192, not 8k)\n"
        "  --flops-per-token F   FLOPs per token, given directly (instead of the model)\n"
        "rate:\n"
        "  --tokens-per-sec X    tokens per second of the whole job (needs --gpus)\n"
        "  --tokens-per-sec-per-gpu X\n"
        "                        tokens per second of one GPU (--gpus then optional)\n"
        "  --gpus G              GPUs (or TPU chips) the job runs on\n"
        "peak:\n"
        "  --gpu GPU             h100, h200, b200, gb200, gb300, a100 (A100-80GB), tpuv4\n"
        "                        (TPU-v4), or any sku of the SKU file, ignoring case\n"
        "  --dtype DTYPE         data type of the peak: bf16 (default), fp8, fp4, or any\n"
        "                        <dtype>_tflops column of the SKU file\n"
        "  --sku-file FILE       SKU rows laid over the shipped data/skus.csv (docs/skus.md)\n"
        "output:\n"
        "  --json                one JSON object: mfu (fraction 0-1), model_tflops_per_gpu,\n"
        "                        flops_per_token, peak_tflops, ... (docs/mfu.md)\n"
        "  -h, --help            show this help\n\n"
        "Numbers take a decimal suffix: k 10^3, M 10^6, B or G 10^9, T 10^12, or an\n"
        "exponent: 540B = 540e9, 238.3k = 238300, 7.5M = 7500000. Every number must be\n"
        "above zero; counts (L, H, Q, D, T, G) whole.\n\n"
        "Example (PaLM 540B on 6144 TPU v4 chips, 46.2%% MFU in the paper):\n"
        "  houston mfu --params 540B --layers 118 --heads 48 --head-dim 256 --seq 2048 \\\n"
        "      --tokens-per-sec 238.3k --gpus 6144 --gpu tpuv4\n");
}

/* ---- flags ---- */

enum {
    OPT_PARAMS = 256,
    OPT_ACTIVE,
    OPT_LAYERS,
    OPT_HEADS,
    OPT_HEAD_DIM,
    OPT_HIDDEN,
    OPT_SEQ,
    OPT_FPT,
    OPT_TPS,
    OPT_TPS_GPU,
    OPT_GPUS,
    OPT_GPU,
    OPT_DTYPE,
    OPT_SKU_FILE,
    OPT_JSON,
};

static const struct option long_opts[] = {
    {"params", required_argument, NULL, OPT_PARAMS},
    {"active-params", required_argument, NULL, OPT_ACTIVE},
    {"layers", required_argument, NULL, OPT_LAYERS},
    {"heads", required_argument, NULL, OPT_HEADS},
    {"head-dim", required_argument, NULL, OPT_HEAD_DIM},
    {"hidden", required_argument, NULL, OPT_HIDDEN},
    {"seq", required_argument, NULL, OPT_SEQ},
    {"flops-per-token", required_argument, NULL, OPT_FPT},
    {"tokens-per-sec", required_argument, NULL, OPT_TPS},
    {"tokens-per-sec-per-gpu", required_argument, NULL, OPT_TPS_GPU},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"sku-file", required_argument, NULL, OPT_SKU_FILE},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Reads a positive number with an optional suffix; -1 after saying why. */
static int take_number(const char *flag, const char *arg, double *out)
{
    int rc = hn_mfu_parse_number(arg, out);
    if (rc == 0)
        return 0;
    if (rc == -ERANGE)
        fprintf(stderr, "houston mfu: %s: '%s' is out of range\n", flag, arg);
    else
        fprintf(stderr,
                "houston mfu: %s: '%s' is not a positive number (like 540e9, 70B, 238.3k)\n", flag,
                arg);
    return -1;
}

/* Reads a positive whole count that fits an unsigned; -1 after saying why. */
static int take_count(const char *flag, const char *arg, unsigned *out)
{
    double v;
    if (take_number(flag, arg, &v) != 0)
        return -1;
    if (v != floor(v) || v > UINT_MAX) {
        fprintf(stderr, "houston mfu: %s: '%s' is not a whole number from 1 to %u\n", flag, arg,
                UINT_MAX);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

/* A dtype is a SKU-file column stem: letters and digits, shorter than HN_SKU_DTYPE_MAX. */
static int take_dtype(const char *arg)
{
    size_t n = strlen(arg);
    int ok = n > 0 && n < HN_SKU_DTYPE_MAX;
    for (size_t i = 0; ok && i < n; i++) {
        char c = arg[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }
    if (ok)
        return 0;
    fprintf(stderr, "houston mfu: --dtype: '%s' is not a data type like bf16, fp8, fp4\n", arg);
    return -1;
}

/* Handles one parsed option; 0, or -1 after printing why. */
static int take_opt(struct mfu_opts *o, int ch, const char *arg)
{
    switch (ch) {
    case OPT_PARAMS:
        return take_number("--params", arg, &o->params);
    case OPT_ACTIVE:
        return take_number("--active-params", arg, &o->active_params);
    case OPT_LAYERS:
        return take_count("--layers", arg, &o->layers);
    case OPT_HEADS:
        return take_count("--heads", arg, &o->heads);
    case OPT_HEAD_DIM:
        return take_count("--head-dim", arg, &o->head_dim);
    case OPT_HIDDEN:
        return take_count("--hidden", arg, &o->hidden);
    case OPT_SEQ:
        /* "8k" would read 8000; a context of "8K" nearly always means 8192. */
        if (arg[0] != '\0' && !(arg[strlen(arg) - 1] >= '0' && arg[strlen(arg) - 1] <= '9')) {
            fprintf(stderr,
                    "houston mfu: --seq: '%s': write the length in tokens (8k would be 8000, "
                    "not 8192)\n",
                    arg);
            return -1;
        }
        return take_count("--seq", arg, &o->seq);
    case OPT_FPT:
        return take_number("--flops-per-token", arg, &o->flops_per_token);
    case OPT_TPS:
        return take_number("--tokens-per-sec", arg, &o->tokens_per_s);
    case OPT_TPS_GPU:
        return take_number("--tokens-per-sec-per-gpu", arg, &o->tokens_per_s_per_gpu);
    case OPT_GPUS:
        return take_count("--gpus", arg, &o->gpus);
    case OPT_GPU:
        o->gpu = arg;
        return 0;
    case OPT_DTYPE:
        o->dtype = arg;
        return take_dtype(arg);
    case OPT_SKU_FILE:
        o->sku_file = arg;
        return 0;
    case OPT_JSON:
        o->json = 1;
        return 0;
    default:
        return -1;
    }
}

/* Parses argv. Returns 0 to run, 1 after printing help, -1 after a usage error. */
static int parse(int argc, char **argv, struct mfu_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->dtype = "bf16";
    int ret = 0, ch;
    struct hn_opts g;
    hn_opts_begin(&g, "mfu", long_opts, stderr);
    while (ret == 0 && (ch = hn_opts_next(&g, argc, argv)) != -1) {
        if (ch == 'h') {
            hn_usage_mfu(stdout);
            ret = 1;
        } else if (ch == '?' || take_opt(o, ch, optarg) != 0) {
            ret = -1;
        }
    }
    hn_opts_end(&g);
    if (ret == 0 && optind < argc) {
        fprintf(stderr, "houston mfu: unexpected argument '%s'\n", argv[optind]);
        ret = -1;
    }
    return ret;
}

/* ---- one job from the flags ---- */

/* FLOPs per token from the model flags or --flops-per-token; -1 after saying what is missing or
 * contradictory. */
static int job_flops(const struct mfu_opts *o, struct mfu_job *j)
{
    int any_model = o->params > 0 || o->active_params > 0 || o->layers || o->heads || o->head_dim ||
                    o->hidden || o->seq;
    if (o->flops_per_token > 0) {
        if (any_model) {
            fprintf(stderr, "houston mfu: give --flops-per-token or the model (--params, "
                            "--layers, ...), not both\n");
            return -1;
        }
        j->flops_per_token = o->flops_per_token;
        return 0;
    }
    if (!any_model) {
        fprintf(stderr, "houston mfu: describe the model (--params N --layers L --heads H "
                        "--head-dim Q --seq T) or give --flops-per-token F\n");
        return -1;
    }
    const char *missing = !(o->params > 0 || o->active_params > 0) ? "--params"
                          : !o->layers                             ? "--layers"
                          : !o->heads                              ? "--heads"
                          : !(o->head_dim || o->hidden)            ? "--head-dim (or --hidden)"
                          : !o->seq                                ? "--seq"
                                                                   : NULL;
    if (missing) {
        fprintf(stderr, "houston mfu: the model needs %s too (or give --flops-per-token)\n",
                missing);
        return -1;
    }
    if (o->head_dim && o->hidden) {
        fprintf(stderr, "houston mfu: give --head-dim or --hidden, not both\n");
        return -1;
    }
    if (o->hidden && o->hidden % o->heads != 0) {
        fprintf(stderr, "houston mfu: --hidden %u is not a multiple of --heads %u\n", o->hidden,
                o->heads);
        return -1;
    }
    if (o->params > 0 && o->active_params > o->params) {
        fprintf(stderr, "houston mfu: --active-params is more than --params (the total)\n");
        return -1;
    }
    j->active = o->active_params > 0 ? o->active_params : o->params;
    j->head_dim = o->head_dim ? (double)o->head_dim : (double)o->hidden / o->heads;
    j->flops_per_token =
        hn_mfu_flops_per_token(j->active, o->layers, o->heads, j->head_dim, o->seq);
    j->from_model = 1;
    if (isnan(j->flops_per_token)) {
        fprintf(stderr, "houston mfu: the model's FLOPs per token overflow\n");
        return -1;
    }
    return 0;
}

/* The token rate per GPU (and of the job when --gpus is known); -1 after saying why not. */
static int job_rate(const struct mfu_opts *o, struct mfu_job *j)
{
    if (o->tokens_per_s > 0 && o->tokens_per_s_per_gpu > 0) {
        fprintf(stderr,
                "houston mfu: give --tokens-per-sec or --tokens-per-sec-per-gpu, not both\n");
        return -1;
    }
    if (o->tokens_per_s > 0) {
        if (!o->gpus) {
            fprintf(stderr, "houston mfu: --tokens-per-sec is the whole job's rate: give --gpus "
                            "too (or use --tokens-per-sec-per-gpu)\n");
            return -1;
        }
        j->tokens_per_s = o->tokens_per_s;
        j->tokens_per_s_per_gpu = o->tokens_per_s / o->gpus;
        return 0;
    }
    if (o->tokens_per_s_per_gpu > 0) {
        j->tokens_per_s_per_gpu = o->tokens_per_s_per_gpu;
        j->tokens_per_s = o->gpus ? o->tokens_per_s_per_gpu * o->gpus : 0;
        return 0;
    }
    fprintf(stderr, "houston mfu: give the token rate: --tokens-per-sec X --gpus G, or "
                    "--tokens-per-sec-per-gpu X\n");
    return -1;
}

/* ---- the peak ---- */

struct mfu_peak {
    struct hn_sku_table *table;
    const struct hn_sku *sku; /* borrowed from table */
    double flops;
    const char *file; /* the file the SKU's row came from */
};

/* Prints the SKU names of t, comma-separated, for an "unknown GPU" message. */
static void list_skus(const struct hn_sku_table *t)
{
    for (size_t i = 0; i < hn_sku_table_size(t); i++)
        fprintf(stderr, "%s%s", i ? ", " : "", hn_sku_table_at(t, i)->name);
}

/* Loads the SKU table (shipped, with --sku-file over it) and finds the peak for --gpu and
 * --dtype. On success the caller frees p->table; -1 after saying why (nothing to free). */
static int find_peak(const struct mfu_opts *o, struct mfu_peak *p)
{
    char err[512] = "";
    memset(p, 0, sizeof(*p));
    p->table = hn_sku_table_new(hn_sku_default_path(), err, sizeof(err));
    if (!p->table) {
        fprintf(stderr, "houston mfu: %s\n", err);
        return -1;
    }
    /* The overlay alone tells which file a row came from: a row it has replaced the shipped
     * one whole (docs/skus.md). */
    struct hn_sku_table *overlay = NULL;
    if (o->sku_file) {
        overlay = hn_sku_table_new(o->sku_file, err, sizeof(err));
        if (!overlay || hn_sku_table_overlay(p->table, o->sku_file, err, sizeof(err)) != 0) {
            fprintf(stderr, "houston mfu: --sku-file: %s\n", err);
            goto out_free;
        }
    }
    const char *name = o->gpu;
    int rc = hn_mfu_peak_get(p->table, name, o->dtype, &p->flops, &p->sku);
    for (size_t i = 0; rc == -ENOENT && i < HN_ARRAY_LEN(gpu_aliases); i++) {
        if (strcasecmp(o->gpu, gpu_aliases[i].alias) == 0) {
            name = gpu_aliases[i].sku;
            rc = hn_mfu_peak_get(p->table, name, o->dtype, &p->flops, &p->sku);
        }
    }
    if (rc == -ENOENT) {
        fprintf(stderr, "houston mfu: --gpu: unknown GPU '%s' (known: ", o->gpu);
        list_skus(p->table);
        fprintf(stderr, "; also");
        for (size_t i = 0; i < HN_ARRAY_LEN(gpu_aliases); i++)
            fprintf(stderr, " %s", gpu_aliases[i].alias);
        fprintf(stderr, ")\n");
        goto out_free;
    }
    if (rc != 0) {
        const struct hn_sku *s = hn_sku_find(p->table, name);
        fprintf(stderr, "houston mfu: %s has no dense %s peak in the SKU table (it has:",
                s ? s->name : name, o->dtype);
        for (size_t i = 0; s && i < s->n_peaks; i++)
            fprintf(stderr, " %s", s->peak[i].dtype);
        fprintf(stderr, ")\n");
        goto out_free;
    }
    p->file = overlay && hn_sku_find(overlay, p->sku->name) ? o->sku_file : hn_sku_default_path();
    hn_sku_table_free(overlay);
    return 0;

out_free:
    hn_sku_table_free(overlay);
    hn_sku_table_free(p->table);
    p->table = NULL;
    return -1;
}

/* ---- output ---- */

/* Writes v with the largest decimal suffix that keeps it at 1 or more (540e9 as "540B"), in
 * four significant digits: the syntax the flags take. */
static const char *si(char *buf, size_t size, double v)
{
    static const struct {
        double scale;
        const char *suffix;
    } units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}};
    for (size_t i = 0; i < HN_ARRAY_LEN(units); i++) {
        if (v >= units[i].scale) {
            snprintf(buf, size, "%.4g%s", v / units[i].scale, units[i].suffix);
            return buf;
        }
    }
    snprintf(buf, size, "%.4g", v);
    return buf;
}

static void print_human(const struct mfu_opts *o, const struct mfu_job *j, const struct mfu_peak *p,
                        double mfu, double model_flops)
{
    char a[32], b[32], c[32];
    printf("MFU                    %.1f%%\n", mfu * 100);
    /* The peak in up to six digits (%g): the SKU file's figures as written (1978.9, 362.05,
     * 15000), where four would round 1978.9 to 1979 and print 15000 as 1.5e+04. */
    printf("model TFLOP/s per GPU  %.1f of %.6g peak\n", model_flops / 1e12, p->flops / 1e12);
    printf("FLOPs per token        %s", si(a, sizeof(a), j->flops_per_token));
    if (j->from_model) {
        printf(" = 6 x %s", si(b, sizeof(b), j->active));
        if (o->active_params > 0 && o->params > 0)
            printf(" active (of %s)", si(c, sizeof(c), o->params));
        else if (o->active_params > 0)
            printf(" active");
        printf(" + 12 x %u x %u x %.0f x %u  (PaLM appendix B)\n", o->layers, o->heads, j->head_dim,
               o->seq);
    } else {
        printf(" (given)\n");
    }
    printf("tokens/s               ");
    if (j->tokens_per_s > 0)
        printf("%s for the job on %u GPUs, ", si(a, sizeof(a), j->tokens_per_s), o->gpus);
    printf("%s per GPU\n", si(b, sizeof(b), j->tokens_per_s_per_gpu));
    printf("peak                   %.6g TFLOP/s dense %s per GPU: %s, %s line %u", p->flops / 1e12,
           o->dtype, p->sku->name, p->file, p->sku->line);
    if (p->sku->source[0])
        printf(" (cited in data/SOURCE.md: %s)", p->sku->source);
    printf("\n");
}

/* A JSON number, or null for a figure that is not known (0). */
static json_t *num_or_null(double v)
{
    return v > 0 ? json_real(v) : json_null();
}

static int print_json(const struct mfu_opts *o, const struct mfu_job *j, const struct mfu_peak *p,
                      double mfu, double model_flops)
{
    json_t *model = json_null();
    if (j->from_model)
        model = json_pack("{s:o, s:f, s:I, s:I, s:f, s:I}", "params", num_or_null(o->params),
                          "active_params", j->active, "layers", (json_int_t)o->layers, "heads",
                          (json_int_t)o->heads, "head_dim", j->head_dim, "seq", (json_int_t)o->seq);
    json_t *root =
        json_pack("{s:f, s:f, s:f, s:s, s:f, s:s, s:s, s:{s:s, s:I, s:s}, s:o, s:o, s:f, s:o}",
                  "mfu", mfu, "model_tflops_per_gpu", model_flops / 1e12, "flops_per_token",
                  j->flops_per_token, "flops_per_token_from", j->from_model ? "model" : "given",
                  "peak_tflops", p->flops / 1e12, "gpu", p->sku->name, "dtype", o->dtype,
                  "peak_source", "file", p->file, "line", (json_int_t)p->sku->line, "source",
                  p->sku->source, "gpus", o->gpus ? json_integer(o->gpus) : json_null(),
                  "tokens_per_sec", num_or_null(j->tokens_per_s), "tokens_per_sec_per_gpu",
                  j->tokens_per_s_per_gpu, "model", model);
    char *s = root ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(root);
    if (!s) {
        fprintf(stderr, "houston mfu: cannot build the JSON answer\n");
        return -1;
    }
    printf("%s\n", s);
    free(s);
    return 0;
}

int hn_cmd_mfu(int argc, char **argv)
{
    struct mfu_opts o;
    int pr = parse(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    if (!o.gpu) {
        fprintf(stderr, "houston mfu: which accelerator? give --gpu (h100, h200, b200, gb200, "
                        "gb300, a100, tpuv4, ...)\n");
        return 2;
    }
    struct mfu_job j = {0};
    if (job_flops(&o, &j) != 0 || job_rate(&o, &j) != 0)
        return 2;
    struct mfu_peak p;
    if (find_peak(&o, &p) != 0)
        return 2;
    /* Without --gpus only the per-GPU rate is known: that is the job's rate on one GPU. */
    double rate = j.tokens_per_s > 0 ? j.tokens_per_s : j.tokens_per_s_per_gpu;
    unsigned gpus = j.tokens_per_s > 0 ? o.gpus : 1;
    double mfu = hn_mfu(rate, j.flops_per_token, gpus, p.flops);
    double model_flops = hn_mfu_model_flops(rate, j.flops_per_token, gpus);
    int rc = 0;
    if (!isfinite(mfu) || !isfinite(model_flops)) {
        fprintf(stderr, "houston mfu: the figures overflow\n");
        rc = 2;
    } else {
        if (mfu > 1)
            fprintf(stderr, "houston mfu: warning: MFU above 100%% is impossible: check the token "
                            "rate, --gpus and --dtype\n");
        if (o.json)
            rc = print_json(&o, &j, &p, mfu, model_flops) == 0 ? 0 : 2;
        else
            print_human(&o, &j, &p, mfu, model_flops);
    }
    hn_sku_table_free(p.table);
    return rc;
}
