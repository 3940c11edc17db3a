#!/usr/bin/env bash
# Packs the build tree's lavapipe 25.0.7 (scripts/lavapipe-25.sh) for the device machine:
# .h200/tools-lvp.tar.xz holds libvulkan_lvp.so, the backports libdrm and the X/Wayland client
# libraries it links (the device image lacks them; libLLVM-15 comes with .h200/tools.tar.xz),
# and an ICD manifest for /opt/vkcl-tools/lvp. scripts/h200-env.sh unpacks it with the tools;
# then VKCL_VULKAN_DRIVER=/opt/vkcl-tools/lvp/lvp_icd.json and LD_LIBRARY_PATH=/opt/vkcl-tools/lvp
# run vkcl (tests, cts-runner, vkcl-difftest) on lavapipe on the device host's 16 CPU cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/target/lavapipe-25.0.7/lib"
[ -e "$src/libvulkan_lvp.so" ] || { echo "run scripts/lavapipe-25.sh first" >&2; exit 1; }
mkdir -p "$root/.h200"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/lvp"
cp -L "$src/libvulkan_lvp.so" "$src/libdrm.so.2" "$work/lvp/"
for l in libexpat.so.1 libxcb.so.1 libxcb-randr.so.0 libX11-xcb.so.1 libxcb-dri3.so.0 \
    libxcb-present.so.0 libxcb-xfixes.so.0 libxcb-sync.so.1 libxcb-shm.so.0 libxshmfence.so.1 \
    libwayland-client.so.0 libXau.so.6 libXdmcp.so.6 libffi.so.8 libtinfo.so.6 libzstd.so.1 \
    liblzma.so.5; do
  cp -L "/lib/x86_64-linux-gnu/$l" "$work/lvp/"
done
strip "$work/lvp/libvulkan_lvp.so"
cat >"$work/lvp/lvp_icd.json" <<'JSON'
{ "ICD": { "api_version": "1.4.305", "library_path": "/opt/vkcl-tools/lvp/libvulkan_lvp.so" }, "file_format_version": "1.0.0" }
JSON
tar -C "$work" -cJf "$root/.h200/tools-lvp.tar.xz" lvp
ls -la "$root/.h200/tools-lvp.tar.xz"
