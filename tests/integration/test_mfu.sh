#!/usr/bin/env bash
# `houston mfu`: the PaLM 540B figure (46.2 % MFU, Chowdhery et al. 2022, table 3) from the
# model description, the same answer from every equivalent way of giving it, the SKU table
# (shipped and --sku-file), and a clear exit-2 refusal for every missing, contradictory or bad
# flag.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
need jq

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hn-mfu-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# PaLM 540B: N 540e9, L 118, H 48, Q 256, T 2048, 238.3k tokens/s on 6144 TPU v4 chips.
palm=(--params 540B --layers 118 --heads 48 --head-dim 256 --seq 2048 --gpu tpuv4)

# mfu ARGS...: the JSON answer's mfu rounded to 4 decimals (empty when the verb fails).
mfu() {
    "$HOUSTON" mfu --json "$@" 2>/dev/null | jq -r '.mfu * 10000 | round / 10000'
}

# ---- the published figure ----
out=$("$HOUSTON" mfu "${palm[@]}" --tokens-per-sec 238.3k --gpus 6144)
check_eq "PaLM 540B: exit 0" 0 $?
check "PaLM 540B: 46.2% MFU, as in PaLM table 3" grep -Eq '^MFU +46\.2%$' <<<"$out"
check "human output names the peak's SKU row and source" \
    grep -Eq '^peak +275 TFLOP/s dense bf16 per GPU: TPU-v4, .*skus\.csv line [0-9]+ .*google-tpu-v4' <<<"$out"

json=$("$HOUSTON" mfu "${palm[@]}" --tokens-per-sec 238.3k --gpus 6144 --json)
check_eq "--json is one object" object "$(jq -r type <<<"$json")"
check_eq "json mfu is a fraction: 0.462" 0.462 "$(jq -r '.mfu * 1000 | round / 1000' <<<"$json")"
# 6 * 540e9 + 12 * 118 * 48 * 256 * 2048, worked by hand in docs/mfu.md.
check_eq "json flops_per_token" 3275634806784 "$(jq -r '.flops_per_token | floor' <<<"$json")"
check_eq "json peak_tflops" 275 "$(jq -r '.peak_tflops' <<<"$json")"
check_eq "json model_tflops_per_gpu = mfu * peak" 1 \
    "$(jq -r '((.model_tflops_per_gpu - .mfu * .peak_tflops) | fabs) < 1e-9 | if . then 1 else 0 end' <<<"$json")"
check_eq "json model_tflops_per_gpu = tokens/s * F / G" 127.05 \
    "$(jq -r '.tokens_per_sec * .flops_per_token / .gpus / 1e12 * 100 | round / 100' <<<"$json")"
check_eq "json names the SKU, dtype and file" "TPU-v4 bf16 $HN_SOURCE_DIR/data/skus.csv model" \
    "$(jq -r '"\(.gpu) \(.dtype) \(.peak_source.file) \(.flops_per_token_from)"' <<<"$json")"

# ---- equivalent inputs give the same answer ----
want=$(mfu "${palm[@]}" --tokens-per-sec 238.3k --gpus 6144)
check "the reference answers" test -n "$want"
check_eq "numbers: 540e9 and 238300" "$want" \
    "$(mfu --params 540e9 --layers 118 --heads 48 --head-dim 256 --seq 2048 --gpu tpuv4 \
        --tokens-per-sec 238300 --gpus 6.144k)"
check_eq "--tokens-per-sec-per-gpu (238300 / 6144), no --gpus" "$want" \
    "$(mfu "${palm[@]}" --tokens-per-sec-per-gpu 38.78580729166667)"
check_eq "--flops-per-token instead of the model" "$want" \
    "$(mfu --flops-per-token 3275634806784 --gpu TPU-v4 --tokens-per-sec 238.3k --gpus 6144)"
head_dim=$(mfu --params 7B --layers 32 --heads 32 --head-dim 128 --seq 4096 --gpu h100 --tokens-per-sec-per-gpu 3k)
check "a 7B model on H100 answers" test -n "$head_dim"
check_eq "--hidden D is --head-dim D/H" "$head_dim" \
    "$(mfu --params 7B --layers 32 --heads 32 --hidden 4096 --seq 4096 --gpu h100 --tokens-per-sec-per-gpu 3k)"
moe=(--layers 32 --heads 32 --head-dim 128 --seq 4096 --gpu h100 --tokens-per-sec-per-gpu 3k)
active=$(mfu --params 13B "${moe[@]}")
check "a 13B model answers" test -n "$active"
check_eq "MoE: --active-params is what counts" "$active" \
    "$(mfu --params 47B --active-params 13B "${moe[@]}")"
all=$(mfu --params 47B "${moe[@]}")
active=$(mfu --params 47B --active-params 13B "${moe[@]}")
check "MoE: counting all parameters would be higher ($all > $active)" \
    awk -v a="$all" -v b="$active" 'BEGIN { exit !(a != "" && b != "" && a + 0 > b + 0) }'

# ---- GPUs and data types ----
for g in h100 h200 b200 gb200 gb300 a100 tpuv4 H100 A100-40GB; do
    check_eq "--gpu $g has a bf16 peak" 0 \
        "$("$HOUSTON" mfu --gpu "$g" --flops-per-token 1T --tokens-per-sec-per-gpu 100 >/dev/null 2>&1; echo $?)"
done
check_eq "a100 is the A100-80GB row" A100-80GB \
    "$("$HOUSTON" mfu --gpu a100 --flops-per-token 1T --tokens-per-sec-per-gpu 100 --json | jq -r .gpu)"
bf16=$("$HOUSTON" mfu --gpu h100 --flops-per-token 1T --tokens-per-sec-per-gpu 100 --json)
fp8=$("$HOUSTON" mfu --gpu h100 --flops-per-token 1T --tokens-per-sec-per-gpu 100 --dtype fp8 --json)
check_eq "--dtype fp8 divides by the fp8 peak" 1 \
    "$(jq -rn --argjson a "$bf16" --argjson b "$fp8" \
        'if ($b.peak_tflops > $a.peak_tflops and (($b.mfu * $b.peak_tflops - $a.mfu * $a.peak_tflops) | fabs) < 1e-9) then 1 else 0 end')"
check_eq "--dtype fp4 on b200" 0 \
    "$("$HOUSTON" mfu --gpu b200 --dtype fp4 --flops-per-token 1T --tokens-per-sec-per-gpu 100 >/dev/null; echo $?)"

# ---- --sku-file ----
cat >"$tmp/skus.csv" <<'EOF'
sku,names,bf16_tflops,source
X1,Example X1,100,test row
H100,H100 80GB HBM3,500,site cap
EOF
out=$("$HOUSTON" mfu --sku-file "$tmp/skus.csv" --gpu x1 --flops-per-token 1T --tokens-per-sec-per-gpu 40 --json)
check_eq "--sku-file adds a SKU (40 * 1e12 / 100e12)" 0.4 "$(jq -r '.mfu * 1000 | round / 1000' <<<"$out")"
check_eq "--sku-file row is attributed to that file" "$tmp/skus.csv 2" \
    "$(jq -r '"\(.peak_source.file) \(.peak_source.line)"' <<<"$out")"
out=$("$HOUSTON" mfu --sku-file "$tmp/skus.csv" --gpu h100 --flops-per-token 1T --tokens-per-sec-per-gpu 100 --json)
check_eq "--sku-file replaces a shipped row" 500 "$(jq -r .peak_tflops <<<"$out")"
out=$("$HOUSTON" mfu --sku-file "$tmp/skus.csv" --gpu b200 --flops-per-token 1T --tokens-per-sec-per-gpu 100 --json)
check_eq "rows it does not name stay shipped" "$HN_SOURCE_DIR/data/skus.csv" "$(jq -r .peak_source.file <<<"$out")"

# ---- a figure above 100 % is shown, with a warning ----
"$HOUSTON" mfu --gpu h100 --flops-per-token 1T --tokens-per-sec-per-gpu 2k >"$tmp/out" 2>"$tmp/err"
check_eq "MFU above 100%: exit 0" 0 $?
check "MFU above 100%: shown" grep -Eq '^MFU +20[0-9]\.[0-9]%$' "$tmp/out"
check "MFU above 100%: warned" grep -q '^houston mfu: warning: MFU above 100%' "$tmp/err"

# ---- refusals: exit 2 and one `houston mfu:` line ----
# refuse DESCRIPTION PATTERN ARGS...: houston mfu ARGS exits 2, stderr matches PATTERN.
refuse() {
    local what=$1 pattern=$2
    shift 2
    "$HOUSTON" mfu "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -eq 2 ] && grep -Eq "^houston mfu: .*$pattern" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        pass "refused: $what"
    else
        fail "refused: $what: exit $rc, stderr: $(cat "$tmp/err")"
    fi
}
rate=(--tokens-per-sec-per-gpu 100)
refuse "no --gpu" "--gpu" --flops-per-token 1T "${rate[@]}"
refuse "unknown GPU" "unknown GPU 'h900'" --gpu h900 --flops-per-token 1T "${rate[@]}"
refuse "fp4 on H100" "H100 has no dense fp4 peak" --gpu h100 --dtype fp4 --flops-per-token 1T "${rate[@]}"
refuse "fp8 on TPU v4" "TPU-v4 has no dense fp8 peak" --gpu tpuv4 --dtype fp8 --flops-per-token 1T "${rate[@]}"
refuse "bad dtype" "--dtype" --gpu h100 --dtype 'bf-16' --flops-per-token 1T "${rate[@]}"
refuse "no rate" "token rate" --gpu h100 --flops-per-token 1T
refuse "no FLOPs" "describe the model" --gpu h100 "${rate[@]}"
refuse "job rate without --gpus" "--gpus" --gpu h100 --flops-per-token 1T --tokens-per-sec 1k
refuse "both rates" "not both" --gpu h100 --flops-per-token 1T --tokens-per-sec 1k --gpus 8 "${rate[@]}"
refuse "--flops-per-token and a model" "not both" --gpu h100 --flops-per-token 1T --params 7B "${rate[@]}"
refuse "--head-dim and --hidden" "not both" --gpu h100 --params 7B --layers 32 --heads 32 \
    --head-dim 128 --hidden 4096 --seq 4096 "${rate[@]}"
refuse "model without --seq" "--seq" --gpu h100 --params 7B --layers 32 --heads 32 --head-dim 128 "${rate[@]}"
refuse "model without --layers" "--layers" --gpu h100 --params 7B --heads 32 --head-dim 128 --seq 1 "${rate[@]}"
refuse "model without --params" "--params" --gpu h100 --layers 32 --heads 32 --head-dim 128 --seq 1 "${rate[@]}"
refuse "--hidden not a multiple of --heads" "not a multiple" --gpu h100 --params 7B --layers 32 \
    --heads 48 --hidden 4096 --seq 4096 "${rate[@]}"
refuse "more active than total parameters" "--active-params" --gpu h100 --params 7B \
    --active-params 8B --layers 32 --heads 32 --head-dim 128 --seq 4096 "${rate[@]}"
refuse "--seq 8k" "--seq: '8k'" --gpu h100 --params 7B --layers 32 --heads 32 --head-dim 128 --seq 8k "${rate[@]}"
refuse "--gpus 0" "--gpus: '0' is not a positive number" --gpu h100 --flops-per-token 1T --tokens-per-sec 1k --gpus 0
refuse "--gpus 1.5" "--gpus: '1.5' is not a whole number" --gpu h100 --flops-per-token 1T --tokens-per-sec 1k --gpus 1.5
refuse "negative --params" "--params: '-7B'" --gpu h100 --params -7B
refuse "--tokens-per-sec 0" "--tokens-per-sec: '0'" --gpu h100 --flops-per-token 1T --tokens-per-sec 0 --gpus 8
refuse "--flops-per-token junk" "--flops-per-token: 'lots'" --gpu h100 --flops-per-token lots "${rate[@]}"
refuse "a value too large" "out of range" --gpu h100 --flops-per-token 1e400 "${rate[@]}"
refuse "missing value" "--gpu needs a value" --flops-per-token 1T "${rate[@]}" --gpu
refuse "unknown option" "unknown option '--frobnicate'" --frobnicate
refuse "a value given twice" "--gpus given twice \('8', then '16'\)" --gpu h100 --flops-per-token 1T \
    --tokens-per-sec 1k --gpus 8 --gpus=16
refuse "an ambiguous prefix" "ambiguous option '--head' \(--heads, --head-dim\)" --head 8
refuse "stray argument" "unexpected argument 'extra'" --gpu h100 --flops-per-token 1T "${rate[@]}" extra
refuse "missing --sku-file" "--sku-file: " --sku-file "$tmp/none.csv" --gpu h100 --flops-per-token 1T "${rate[@]}"
printf 'sku,names,bf16_tflops\nX2,Example X2,989.4e12\n' >"$tmp/bad.csv"
refuse "--sku-file with a bad row" "--sku-file: .*bad.csv" --sku-file "$tmp/bad.csv" --gpu h100 \
    --flops-per-token 1T "${rate[@]}"

# ---- help ----
help=$("$HOUSTON" mfu --help)
check_eq "--help exits 0" 0 $?
for flag in --params --active-params --layers --heads --head-dim --hidden --seq --flops-per-token \
    --tokens-per-sec --tokens-per-sec-per-gpu --gpus --gpu --dtype --sku-file --json --help; do
    check "--help describes $flag" grep -Eq "^  (-h, )?$flag " <<<"$help"
done
check "--help gives the formula" grep -Fq '6*N + 12*L*H*Q*T' <<<"$help"
check "--help documents the suffixes" grep -Eq 'k 10\^3, M 10\^6, B or G 10\^9, T 10\^12' <<<"$help"
check "houston help mfu is --help" test "$help" = "$("$HOUSTON" help mfu)"

finish
