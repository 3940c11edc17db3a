#!/usr/bin/env bash
# Registers vkcl with the OpenCL ICD loader.
#   layer-manifest/register.sh --dir DIR [LIB]  writes DIR/vkcl.icd naming LIB (absolute path);
#                                               then run programs with OCL_ICD_VENDORS=DIR
#                                               (only vkcl is seen) or OCL_ICD_VENDORS=DIR/vkcl.icd
#   layer-manifest/register.sh --system [LIB]   installs LIB as /usr/local/lib/libvkcl.so and
#                                               /etc/OpenCL/vendors/vkcl.icd (needs root)
# LIB defaults to target/release/libvkcl.so, else target/debug/libvkcl.so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}
case "$mode" in
  --dir) dir=${2:?usage: register.sh --dir DIR [LIB]}; lib=${3:-} ;;
  --system) lib=${2:-} ;;
  *) sed -n '2,9p' "$0"; exit 2 ;;
esac
if [ -z "$lib" ]; then
  for c in "$root/target/release/libvkcl.so" "$root/target/debug/libvkcl.so"; do
    [ -f "$c" ] && { lib=$c; break; }
  done
fi
[ -n "$lib" ] && [ -f "$lib" ] || { echo "register.sh: build vkcl first (cargo build --release)" >&2; exit 1; }
lib=$(readlink -f "$lib")
if [ "$mode" = --dir ]; then
  mkdir -p "$dir"
  echo "$lib" > "$dir/vkcl.icd"
  echo "$dir/vkcl.icd -> $lib"
else
  install -D -m 0755 "$lib" /usr/local/lib/libvkcl.so
  ldconfig
  install -D -m 0644 "$root/layer-manifest/vkcl.icd" /etc/OpenCL/vendors/vkcl.icd
  echo "/etc/OpenCL/vendors/vkcl.icd -> /usr/local/lib/libvkcl.so"
fi
