#!/usr/bin/env bash
# hashcat on the H200 device machine (issue 22; docs/clients.md "hashcat", docs/h200.md).
#   scripts/h200-hashcat.sh pack        # here: .h200/hashcat.tar.xz and .h200/hcwork/ (carry both)
#   scripts/h200-hashcat.sh run LIB M.. # device, after `eval "$(scripts/h200-env.sh)"`: for each
#                                       # mode, crack with -O and without, then -b, through LIB
#                                       # (a libvkcl.so, or libnvidia-opencl.so.1)
# The bundle is Debian bookworm's hashcat 6.2.6 with only the issue's modes (0 100 1400 1700 1000
# 500 22000 2500 3200, and 400, whose kernel hashcat opens to check its installation), its two
# libraries, and Debian's ocl-icd loader under opt/ocl with a `libOpenCL.so` name: hashcat opens
# `libOpenCL.so` itself, which on the device image is not the loader that honours
# OCL_ICD_FILENAMES (session 18: it listed only pocl), so `run` puts opt/ocl first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
modes="00000 00100 01400 01700 01000 00500 22000 02500 03200 00400"
case "${1:-}" in
pack)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && apt-get download -q hashcat hashcat-data libminizip1 libxxhash0 ocl-icd-libopencl1)
  mkdir "$work/x"
  for f in "$work"/*.deb; do dpkg -x "$f" "$work/x"; done
  cd "$work/x"
  mkdir -p opt/ocl && cp -a usr/lib/x86_64-linux-gnu/libOpenCL.so.1* opt/ocl/ && ln -s libOpenCL.so.1 opt/ocl/libOpenCL.so
  rm -f usr/lib/x86_64-linux-gnu/libOpenCL.so.1*
  keep=(usr/bin/hashcat usr/lib/x86_64-linux-gnu opt/ocl usr/share/hashcat/hashcat.hcstat2
        usr/share/hashcat/modules usr/share/hashcat/charsets usr/share/hashcat/layouts
        usr/share/hashcat/masks usr/share/hashcat/rules usr/share/hashcat/tunings)
  for m in $modes; do
    keep+=(usr/lib/hashcat/modules/module_$m.so $(ls -d usr/share/hashcat/OpenCL/m$m*))
  done
  keep+=($(ls usr/share/hashcat/OpenCL/* | grep -v '/m[0-9]'))
  mkdir -p "$root/.h200"
  tar -cJf "$root/.h200/hashcat.tar.xz" "${keep[@]}"
  python3 "$root/scripts/hashcat-hashes.py" "$root/.h200/hcwork"
  ls -la "$root/.h200/hashcat.tar.xz"
  ;;
run)
  lib=${2:?a libvkcl.so or libnvidia-opencl.so.1}; shift 2
  [ -x /usr/bin/hashcat ] || tar -xJf "$root/.h200/hashcat.tar.xz" -C /
  export LD_LIBRARY_PATH=/opt/ocl:${LD_LIBRARY_PATH:-} OCL_ICD_FILENAMES=$lib
  export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/hc/xdg}
  hc=(hashcat --backend-ignore-cuda --backend-ignore-hip --potfile-disable --force)
  cd "$root/.h200/hcwork"
  for m in "$@"; do
    hash=$m.hash; [ "$m" = 2500 ] && hash=2500.hccapx
    for o in -O ""; do
      s=$SECONDS
      "${hc[@]}" --session=s$m -m "$m" -a 0 $o --self-test-disable --deprecated-check-disable -n 1 -u 1 \
        -o "/tmp/hc-$m$o.txt" "$hash" words.txt >"/tmp/hc-crack-$m$o.log" 2>&1 || true
      echo "mode $m ${o:-default}: crack $(grep -c . "/tmp/hc-$m$o.txt" 2>/dev/null || echo 0) line(s), $((SECONDS - s)) s"
      b=-O; [ -z "$o" ] && b="-w 3"
      "${hc[@]}" --session=b$m -b -m "$m" $b 2>&1 | grep -E "^\* Device|Speed|elf-test" || true
    done
  done
  ;;
*) sed -n 2,11p "$0"; exit 2 ;;
esac
