#!/usr/bin/env bash
# Packs a release build of houston with the shared libraries it links against into .gpu/, for
# the device machine (bench/gpu-check.sh), which has CUDA and PyTorch but none of houston's
# Debian packages and no network to install them. .gpu/houston runs houston with the device's
# own C library when that works, else with the one packed here. Run here, then name .gpu in
# the device call's carry list.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset release >/dev/null
cmake --build build-release -j "$(nproc)" --target houston fakenvml >/dev/null
rm -rf .gpu
mkdir -p .gpu/lib .gpu/libc
cp build-release/houston .gpu/houston.bin
mkdir -p .gpu/fakenvml # gpu-check.sh compares the real GPU's metric families with the fake's
cp -L build-release/fakenvml/libnvidia-ml.so.1 .gpu/fakenvml/
ldd build-release/houston | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.*) cp -L "$lib" .gpu/libc/ ;;
    *) cp -L "$lib" .gpu/lib/ ;;
    esac
done
# A glibc older than this one's lacks symbols houston.bin needs: then the packed loader runs it
# with the packed C library (dlopen'ed NVML comes from the system either way).
for lib in /lib/x86_64-linux-gnu/{libc.so.6,libm.so.6,libpthread.so.0,libdl.so.2,librt.so.1}; do
    cp -L "$lib" .gpu/libc/
done
cp -L /lib64/ld-linux-x86-64.so.2 .gpu/libc/
cat >.gpu/houston <<'SH'
#!/bin/sh
d=$(dirname "$(readlink -f "$0")")
if [ -z "${HN_BUNDLE_LIBC:-}" ] && LD_LIBRARY_PATH="$d/lib" "$d/houston.bin" --version >/dev/null 2>&1; then
    LD_LIBRARY_PATH="$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/houston.bin" "$@"
fi
exec "$d/libc/ld-linux-x86-64.so.2" --library-path "$d/lib:$d/libc" "$d/houston.bin" "$@"
SH
chmod +x .gpu/houston
echo "$PWD" >.gpu/srcdir # HN_DATADIR is this tree's data/; gpu-check.sh links it on the device
echo "houston for the device machine: .gpu ($(du -sh .gpu | cut -f1)); data files are read from $PWD/data"
