#!/usr/bin/env bash
# `make demo`: `houston demo`, the seed scenario (8 racks of GB200 NVL72, one 512-GPU job, a
# GPU throttled after 30 s, found, drained at the next checkpoint, replaced by a spare) with
# the controller's API and dashboard on http://127.0.0.1:8080/. Runs until Ctrl-C, or for
# DEMO_DURATION seconds; DEMO_LISTEN changes the address.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(--listen "${DEMO_LISTEN:-127.0.0.1:8080}")
[ -z "${DEMO_DURATION:-}" ] || args+=(--duration "$DEMO_DURATION")
exec "${HOUSTON:-build/houston}" demo "${args[@]}"
