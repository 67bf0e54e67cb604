#!/usr/bin/env bash
# Installs the dashboard's npm packages (web/package-lock.json: uPlot, which the dashboard
# serves from /ui/node_modules/uplot/dist/, and playwright-core, which drives Chromium in
# tests/integration/test_dashboard.sh) into web/node_modules with `npm ci`, and only when
# web/node_modules is missing or older than the lockfile. Called by `make test`; safe to run
# again. Fails with a clear message when node or npm is missing.
set -euo pipefail
here=${BASH_SOURCE[0]%/*}
[ "$here" != "${BASH_SOURCE[0]}" ] || here=.
web=$(cd "$here/../web" && pwd)
stamp=$web/node_modules/.houston-web-deps

for cmd in node npm; do
    if ! command -v "$cmd" >/dev/null 2>&1; then
        echo "web-deps: '$cmd' is not installed: run scripts/install-deps.sh" \
            "(Debian 12: apt-get install nodejs npm)" >&2
        exit 1
    fi
done

if [ -e "$stamp" ] && ! [ "$web/package-lock.json" -nt "$stamp" ] &&
    ! [ "$web/package.json" -nt "$stamp" ]; then
    exit 0
fi

# Two test runs starting at once must not run `npm ci` into the same folder together.
exec 9>"/tmp/houston-web-deps.$(id -u).lock"
flock 9
if [ -e "$stamp" ] && ! [ "$web/package-lock.json" -nt "$stamp" ] &&
    ! [ "$web/package.json" -nt "$stamp" ]; then
    exit 0
fi

echo "web-deps: npm ci in $web"
# --ignore-scripts: neither package needs an install script, and playwright-core never
# downloads a browser this way (the tests use Debian's chromium).
if ! (cd "$web" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    echo "web-deps: npm ci failed in $web (is the npm registry reachable?)" >&2
    exit 1
fi
touch "$stamp"
