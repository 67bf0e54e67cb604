# shellcheck shell=bash
# bench/record.sh - sourced by the benchmarks whose result is their program's output as is.
#
# record_fenced FILE TEXT: appends TEXT to FILE as a fenced block under a heading with the
# date and commit, and a line saying which machine ran it.
record_fenced() {
    local commit cpu
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
    {
        echo
        echo "## $(date -u +%Y-%m-%d) commit $commit"
        echo
        echo "Machine: $(nproc) cores, ${cpu:-unknown CPU}."
        echo
        echo '```'
        echo "$2"
        echo '```'
    } >>"$1"
}
