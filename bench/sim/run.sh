#!/usr/bin/env bash
# bench/sim: the simulator's speed at the issue's two sizes, in one run: 16,384 GPUs for 54
# days (goal: under a minute on one core) and 100,000 GPUs for 30 days (goal: under 5
# minutes). Prints simulated GPU-hours per wall second and the speed-up over real time (the
# peer: a fleet living in real time simulates one second per second), and appends them to
# bench/results/sim.md with date, commit and machine. Uses the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build-release}
[ -x "$B/houston" ] || cmake --build "$B" --target houston >/dev/null
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
rows=""
for size in "16384 54" "100000 30"; do
    set -- $size
    t0=$(date +%s.%N)
    out=$("$B/houston" sim --gpus "$1" --days "$2" --json)
    wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    row=$(jq -r --arg g "$1" --arg d "$2" --argjson w "$wall" '
        "| \($g) | \($d) | \(.cpu_seconds * 100 | round / 100) s | \($w * 100 | round / 100) s | " +
        "\(.job_gpu_hours / $w | round) | " +
        "\(.simulated_days * 86400 / $w | round)x | " +
        "\(.ettr * 1000 | round / 10)% | \(.interruptions) | \(.step_reports) |"' <<<"$out")
    echo "$row"
    rows+="$row"$'\n'
done
{
    echo
    echo "## $(date -u +%Y-%m-%d) commit $commit"
    echo
    echo "Machine: $(nproc) cores, ${cpu:-unknown CPU}. One process, one core; default policy (straggler)."
    echo
    echo "| GPUs | days | CPU | wall | simulated GPU-hours per wall second | vs real time | ETTR | interruptions | step reports |"
    echo "|---|---|---|---|---|---|---|---|---|"
    printf '%s' "$rows"
} >>bench/results/sim.md
echo "bench/sim: appended to bench/results/sim.md"
