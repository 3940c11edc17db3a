#!/usr/bin/env bash
# Runs CTS suites on lavapipe 25.0.7 on the device host's 16 CPU cores (docs/h200.md, "The CTS
# on the device host's CPU cores"). Three steps:
#   scripts/h200-cts.sh pack CTS_BUILD_DIR        # here: .h200/cts-bin.txz and .h200/vkcl-bins.txz
#   scripts/h200-cts.sh start COMMIT SUITES [JOBS] # device: unpack, start cts-runner in the background
#   scripts/h200-cts.sh wait SECONDS               # device: wait for it, pack out/ into $OUT
# `start` and `wait` run on the device (after scripts/h200-bundle.sh and scripts/h200-lavapipe.sh
# made .h200/tools*.tar.xz here; `carry` .h200). cts-runner records each suite as it ends
# (out/suites/<id>.json), so `wait` in later calls (the machine stays warm 30 s between calls)
# brings back what finished so far, and the development machine completes the run with
# `cts-runner --resume` in the same --out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cts=/opt/cts
case "${1:-}" in
pack)
  build=${2:?CTS build directory}
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # Every built test binary, stripped, plus the data files the suites read beside them.
  (cd "$build" && find test_conformance -type f \( -perm -u+x -name 'test_*' \) -print) |
    while read -r f; do
      mkdir -p "$work/$(dirname "$f")" && strip -o "$work/$f" "$build/$f"
    done
  (cd "$build" && find test_conformance -type f -not -path '*CMakeFiles*' \( -name '*.csv' -o -path '*spirv_bin*' \
    -o -path '*includeTestDirectory*' -o -path '*IncludeTestDirectory*' -o -name '*.cl' -o -name '*.txt' \) -print) |
    while read -r f; do mkdir -p "$work/$(dirname "$f")" && cp "$build/$f" "$work/$f"; done
  cp "$build/cts-commit" "$work/" 2>/dev/null || true
  mkdir -p "$root/.h200"
  tar -C "$work" -cJf "$root/.h200/cts-bin.txz" .
  rel="$root/target/release"
  mkdir -p "$work/v/bin" && strip -o "$work/v/libvkcl.so" "$rel/libvkcl.so"
  for b in cts-runner vkcl-difftest vkcl-bench; do strip -o "$work/v/bin/$b" "$rel/$b"; done
  tar -C "$work/v" -cJf "$root/.h200/vkcl-bins.txz" .
  ls -la "$root/.h200/"
  ;;
start)
  commit=${2:?vkcl commit} suites=${3:?suite ids} jobs=${4:-14}
  eval "$("$root/scripts/h200-env.sh")"
  mkdir -p $cts && tar -xJf "$root/.h200/cts-bin.txz" -C $cts && tar -xJf "$root/.h200/vkcl-bins.txz" -C $cts
  export LD_LIBRARY_PATH=/opt/vkcl-tools/lvp:$LD_LIBRARY_PATH
  export VKCL_VULKAN_DRIVER=/opt/vkcl-tools/lvp/lvp_icd.json
  unset VK_DRIVER_FILES OCL_ICD_FILENAMES
  nproc && free -g | head -2
  setsid nohup $cts/bin/cts-runner --cts-dir $cts --lib $cts/libvkcl.so --vkcl-commit "$commit" \
    --device lavapipe-25.0.7 --suites "$suites" --wimpy --jobs "$jobs" --timeout 300 \
    --env LP_NUM_THREADS=2 --out $cts/out --quiet >$cts/runner.log 2>&1 </dev/null &
  echo "started cts-runner (pid $!) on $suites"
  ;;
wait)
  secs=${2:?seconds}
  end=$((SECONDS + secs))
  while pgrep -f bin/cts-runner >/dev/null && [ $SECONDS -lt $end ]; do sleep 10; done
  pgrep -f bin/cts-runner >/dev/null && echo "cts-runner still running" || echo "cts-runner ended"
  uptime
  ls $cts/out/suites 2>/dev/null | sed 's/\.json$//' | tr '\n' ' '; echo
  tail -5 $cts/runner.log || true
  tar -C $cts -cJf "${OUT:?}/cts-out.tar.xz" out runner.log
  ;;
*)
  sed -n '2,11p' "$0" >&2
  exit 2
  ;;
esac
