#!/usr/bin/env bash
# Packs what a measurement call on the H200 device machine runs (no Rust or clang there) into
# .h200/t.tar.xz (git-ignored; name it in the device tool's `carry` beside .h200/tools.tar.xz
# from scripts/h200-bundle.sh): the release libvkcl.so, vkcl-bench, the Rust probes
# (submit_floor, green_copy_bench, green_bench, fault_probe), the C examples and benchmarks
# (launch_latency, cmdbuf_chain, cmdbuf_bench, vector_add, ...), and release builds of the
# test binaries named (default: a set covering memory, queues, faults and sub-devices), all
# stripped, under t/ and t/deps/.
#   scripts/h200-pack.sh [TEST...]
# On the device (docs/h200.md "Set-up"):
#   tar -xJf .h200/t.tar.xz -C .h200 && eval "$(VKCL_H200_LIB=$PWD/.h200/t/libvkcl.so scripts/h200-env.sh)"
#   export VKCL_VULKAN_DRIVER=system VKCL_TEST_OPENCL_LIBRARY=$PWD/.h200/t/libvkcl.so
#   (cd .h200/t/deps && ./host_access --test-threads=4)
# VKCL_TEST_OPENCL_LIBRARY makes the tests use the carried library (their own check that the
# library is newer than the sources would fail on a copied tree).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(host_access host_access_staged host_access_device_local staged_reads
  allocation_failure out_of_order queue_release green_contexts subdevices device_loss gpu_timeout
  command_buffer images_kernels images_commands copy_kernel)
cargo build --release -p vkcl -p cts-runner --bin vkcl-bench
cargo build --release --example submit_floor --example green_copy_bench --example green_bench --example fault_probe
args=(); for t in "${tests[@]}"; do args+=(--test "$t"); done
cargo test --release --no-run "${args[@]}" 2>&1 | grep -E '^error' && exit 1
make -C examples OUT="$root/target/examples-c" >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/t/deps"
rel=target/release
for f in $rel/libvkcl.so $rel/vkcl-bench $rel/examples/{submit_floor,green_copy_bench,green_bench,fault_probe}; do
  strip -o "$out/t/$(basename "$f")" "$f"
done
for f in target/examples-c/*; do cp "$f" "$out/t/"; done
for t in "${tests[@]}"; do
  f=$(ls -t $rel/deps/"$t"-* | grep -v '\.d$' | head -1)
  strip -o "$out/t/deps/$t" "$f"
done
mkdir -p .h200
grep -qx '/.h200/' .git/info/exclude 2>/dev/null || echo '/.h200/' >>.git/info/exclude
tar -C "$out" -cJf .h200/t.tar.xz t
ls -la .h200/t.tar.xz
