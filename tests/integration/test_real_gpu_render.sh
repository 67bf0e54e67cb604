#!/usr/bin/env bash
# The fake NVML against a real GPU: tests/fixtures/real-gpu/h200-agent-once.prom is what
# `houston agent --once` rendered with the real libnvidia-ml of an NVIDIA H200
# (bench/gpu-check.sh). The fake's `h200` model (made from the same run's nvidia-smi capture),
# with retired pages not supported as on that GPU, must give the same GPU families, types, help
# texts and label names, no more and no fewer, so that tests on the fake cover what a real node
# serves; and the real render must pass the same promtool rules as the fake's
# (test_prometheus.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need promtool awk sort comm

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
real=$HN_FIXTURES/real-gpu/h200-agent-once.prom
work=$(mktemp -d /tmp/houston-real-gpu.XXXXXX)
trap 'hn_cleanup; rm -rf "$work"' EXIT

: >"$work/kmsg"
printf '%s\n' 'model h200' 'gpu all not_supported retired_pages' \
    'gpu all not_supported retired_pending' >"$work/state"
HN_FAKENVML_STATE=$work/state "$HOUSTON" agent --once --nvml-lib "$HN_FAKENVML" \
    --sysfs-root "$HN_FIXTURES/sysfs-h100" --proc-root "$HN_FIXTURES/host/proc" \
    --kmsg "$work/kmsg" --step-socket off >"$work/fake.prom" 2>"$work/fake.log"
check "the fake renders its h200" grep -q '^DCGM_FI_DEV_SM_CLOCK{.*modelName="NVIDIA H200"' "$work/fake.prom"
check "the fixture is a real H200's render" grep -q 'modelName="NVIDIA H200"' "$real"

# gpu_families FILE: "NAME TYPE" of each GPU family (DCGM_* and houston_gpu_*).
gpu_families() { awk '$1 == "#" && $2 == "TYPE" && $3 ~ /^(DCGM_|houston_gpu_)/ {print $3, $4}' "$1" | sort; }
# helps FILE: the HELP lines of the GPU families.
helps() { grep -E '^# HELP (DCGM_|houston_gpu_)' "$1" | sort; }
# labels FILE: "NAME label,label,..." of each GPU series, label names sorted, values (which may
# hold spaces: modelName="NVIDIA H200") dropped.
labels() {
    grep -E '^(DCGM_|houston_gpu_)' "$1" | awk '{
        name = $0; sub(/\{.*/, "", name)
        set = $0; sub(/\}[^}]*$/, "", set); sub(/^[^{]*\{/, "", set)
        n = split(set, kv, /",/); out = ""
        for (i = 1; i <= n; i++) { k = kv[i]; sub(/=.*/, "", k); keys[i] = k }
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (keys[j] < keys[i]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
        for (i = 1; i <= n; i++) out = out (i > 1 ? "," : "") keys[i]
        print name, out }' | sort -u
}
gpu_families "$real" >"$work/real.fam"
gpu_families "$work/fake.prom" >"$work/fake.fam"
check "the real render has GPU families" test "$(wc -l <"$work/real.fam")" -ge 30
check_eq "every real GPU family is served by the fake, with the same type" "" \
    "$(comm -23 "$work/real.fam" "$work/fake.fam")"
check_eq "and the fake serves no other" "" "$(comm -13 "$work/real.fam" "$work/fake.fam")"
helps "$real" >"$work/real.help"
helps "$work/fake.prom" >"$work/fake.help"
check "help lines read from the real render" test "$(wc -l <"$work/real.help")" -ge 30
check_eq "same help text" "" "$(comm -23 "$work/real.help" "$work/fake.help")"
labels "$real" >"$work/real.lab"
labels "$work/fake.prom" >"$work/fake.lab"
check "label names read from the real render" grep -q '^DCGM_FI_DEV_GPU_TEMP .*modelName' "$work/real.lab"
check_eq "same label names on every real series" "" "$(comm -23 "$work/real.lab" "$work/fake.lab")"
check_eq "and on every fake one" "" "$(comm -13 "$work/real.lab" "$work/fake.lab")"

# promtool: the same rules as test_prometheus.sh, on the real render.
promtool check metrics <"$real" >"$work/lint" 2>&1
check_eq "promtool: no finding on houston_* series" "" "$(grep -v '^DCGM_FI_' "$work/lint" | grep -v '^$')"
{ cat "$HN_FIXTURES/dcgm-exporter/metrics-t4.txt"; echo; } | promtool check metrics 2>&1 |
    sed -E 's/^[A-Za-z0-9_]+ //' | sort -u >"$work/lint.t4"
check_eq "promtool: DCGM_* findings are all ones dcgm-exporter gets" "" \
    "$(grep '^DCGM_FI_' "$work/lint" | sed -E 's/^[A-Z0-9_]+ //' | sort -u | grep -vxF -f "$work/lint.t4")"
finish
