#!/usr/bin/env bash
# clFFT and CLBlast against host answers on vkcl, pocl and rusticl, each with empty program
# caches ("cold") and then again with the caches the first run filled ("cached"); issue 22,
# docs/clients.md "clFFT and CLBlast". Needs libclfft-dev and libclblast-dev (apt), pocl-opencl-icd
# and mesa-opencl-icd for the peers, and a built target/<profile>/libvkcl.so.
# Usage: scripts/clients-fft-blas.sh [release|debug] [platforms, default "vkcl pocl rusticl"]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
profile=${1:-release}
platforms=${2:-vkcl pocl rusticl}
out="$root/target/clients"
mkdir -p "$out"
for p in fft_check:clFFT blas_check:clblast; do
  cc -O2 -Wall -o "$out/${p%%:*}" "$root/examples/clients/${p%%:*}.c" -l"${p##*:}" -lOpenCL -lm
done
"$root/layer-manifest/register.sh" --dir "$out/icd" "$root/target/$profile/libvkcl.so" >/dev/null
source "$root/scripts/vulkan-driver.sh"
uptime
for plat in $platforms; do
  caches=$(mktemp -d)
  case $plat in
    vkcl) env=(OCL_ICD_VENDORS="$out/icd" VKCL_CACHE_DIR="$caches") ;;
    pocl) env=(OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd POCL_CACHE_DIR="$caches") ;;
    rusticl) env=(OCL_ICD_VENDORS=/etc/OpenCL/vendors/rusticl.icd RUSTICL_ENABLE=llvmpipe XDG_CACHE_HOME="$caches") ;;
  esac
  for run in cold cached; do
    for prog in fft_check blas_check; do
      echo "== $plat $prog $run"
      /usr/bin/time -f "wall %e s, user %U s, max RSS %M KiB" env "${env[@]}" "$out/$prog" 2>&1 \
        | grep -v "warnings\? generated" || echo "exit status $?"
    done
  done
  rm -rf "$caches"
done
uptime
