#!/usr/bin/env bash
# The main job on lavapipe: installs what is missing (lavapipe 25.0.7 into target/ by
# scripts/lavapipe-25.sh), builds vkcl, registers it for this command only (OCL_ICD_VENDORS),
# runs clinfo and every example on the Vulkan driver that VKCL_VULKAN_DRIVER names
# (default lavapipe-25.0.7; lavapipe-22.3.6, system or an ICD .json: docs/devices.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
.ci/deps.sh
case ${VKCL_VULKAN_DRIVER:-lavapipe-25.0.7} in
  lavapipe-25.0.7) scripts/lavapipe-25.sh ;;
esac
source scripts/vulkan-driver.sh
cargo build --release
icd_dir="$root/target/icd"
layer-manifest/register.sh --dir "$icd_dir" target/release/libvkcl.so
make -s -C examples OUT="$root/target/examples"
export OCL_ICD_VENDORS="$icd_dir"
clinfo
status=0
for ex in $(sed -n 's/^EXAMPLES = //p' examples/Makefile); do
  echo "== $ex"
  case $ex in
    # Images are experimental (docs/images.md): on for this example only.
    gaussian_blur) VKCL_IMAGES=1 "$root/target/examples/$ex" || status=1 ;;
    *) "$root/target/examples/$ex" || status=1 ;;
  esac
done
exit $status
