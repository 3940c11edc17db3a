#!/usr/bin/env bash
# The main job on lavapipe: installs what is missing, builds vkcl, registers it for this
# command only (OCL_ICD_VENDORS), runs clinfo and every example.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
.ci/deps.sh
cargo build --release
icd_dir="$root/target/icd"
layer-manifest/register.sh --dir "$icd_dir" target/release/libvkcl.so
make -s -C examples OUT="$root/target/examples"
export OCL_ICD_VENDORS="$icd_dir"
clinfo
status=0
for ex in $(sed -n 's/^EXAMPLES = //p' examples/Makefile); do
  echo "== $ex"
  "$root/target/examples/$ex" || status=1
done
exit $status
