#!/usr/bin/env bash
# Installs the Debian 12 packages houston needs to build, test, benchmark and demo, and only
# those that are missing. Called by `make test` and `make demo`; safe to run again.
set -euo pipefail

packages=(
    # build
    build-essential cmake pkg-config libmicrohttpd-dev libsqlite3-dev libcurl4-openssl-dev
    libjansson-dev
    # tests and checks
    libcmocka-dev clang clang-format clang-tidy cppcheck curl jq procps bc
    # a wall clock that steps (the agent's step series under an NTP step)
    faketime
    # ss: the tests find free ports and stray daemons with it
    iproute2
    # the pure-Python step-report client (python/) and the tests that drive it; locales for
    # the step client's test in a comma-decimal locale
    python3 locales
    # real services the integration tests drive
    prometheus slurmctld slurmd slurm-client
    # the peer the agent benchmark is measured against
    prometheus-node-exporter
    # the dashboard: its npm packages (scripts/web-deps.sh) and the browser its test drives
    nodejs chromium fonts-liberation
)
# npm from Debian, unless an npm is already there (a nodejs from elsewhere brings its own, and
# Debian's npm package would conflict with it).
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "install-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The Debian prometheus and slurm packages start their daemons on install; houston's tests
# start their own instances on other ports, so the packaged services are stopped right away.
apt-get install -y -qq --no-install-recommends "${missing[@]}"
for svc in prometheus prometheus-node-exporter slurmctld slurmd; do
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
        systemctl stop "$svc" || true
    fi
done
