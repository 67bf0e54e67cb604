#!/usr/bin/env bash
# Static checks run by `make test`: clang-format (no diff allowed), cppcheck and clang-tidy.
# Any finding fails the run. Needs build/compile_commands.json (cmake --preset dev).
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || true)
if [ ${#files[@]} -eq 0 ]; then
    mapfile -t files < <(find src tests bench -name '*.[ch]' | sort)
fi

echo "lint: clang-format on ${#files[@]} files"
clang-format --dry-run -Werror "${files[@]}"

echo "lint: cppcheck"
cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
    --inline-suppr --suppress=missingIncludeSystem -I src -D__GNUC__ \
    src tests/fakenvml

echo "lint: clang-tidy"
mapfile -t tidy < <(printf '%s\n' "${files[@]}" | grep -E '^(src|tests/fakenvml)/.*\.c$')
# Sanitizer flags in the dev compile database are gcc's; clang-tidy is told to ignore them.
# Optimisation options only gcc knows (CMakeLists.txt: src/jobs/straggler.c) are taken out of a
# copy of the database, as clang's driver refuses them.
tidydb=$(mktemp -d /tmp/houston-tidy.XXXXXX)
trap 'rm -rf "$tidydb"' EXIT
sed -e 's/ -fvect-cost-model=[a-z-]*//g' -e 's/ -fno-trapping-math//g' \
    build/compile_commands.json >"$tidydb/compile_commands.json"
printf '%s\n' "${tidy[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$tidydb" --quiet \
    --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-unused-command-line-argument \
    2>/dev/null
echo "lint: clean"
