#!/usr/bin/env bash
# Prepares what a run on the H200 device machine needs (no Rust, no clang, no network there):
# the Debian bookworm compiler tools vkcl calls at run time (clang-15, opt-15, llvm-link-15, llvm-extract-15, llc-15,
# llvm-spirv-15, libclc-15's modules, spirv-val), the libraries they and NVIDIA's Vulkan ICD need
# that the image lacks (libz3, ICU, glvnd, libvulkan1), and clpeak, trimmed to the files used and
# packed as one .tar.xz under .h200/ (ignored by git, named in the device tool's `carry`).
# On the device: `scripts/h200-env.sh` unpacks it and prints the environment to eval.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/.h200"
mkdir -p "$out"
grep -qx '/.h200/' "$root/.git/info/exclude" 2>/dev/null || echo '/.h200/' >>"$root/.git/info/exclude"
[ -f "$out/tools.tar.xz" ] && { echo "$out/tools.tar.xz exists"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -q clang-15 libclang-cpp15 libllvm15 llvm-15 llvm-spirv-15 \
    libllvmspirvlib15 libclc-15 libclang-common-15-dev spirv-tools libz3-4 libicu72 libxml2 \
    libedit2 libbsd0 libmd0 libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 clpeak)
mkdir "$work/x" "$work/t"
for f in "$work"/*.deb; do dpkg -x "$f" "$work/x"; done
cd "$work/x"
keep=(usr/bin/clang-15 usr/bin/opt-15 usr/bin/llvm-link-15 usr/bin/llvm-extract-15 usr/bin/llc-15 usr/bin/llvm-spirv-15
      usr/bin/spirv-val usr/bin/spirv-dis usr/bin/spirv-as usr/bin/clpeak
      usr/lib/llvm-15/bin/clang usr/lib/llvm-15/bin/opt usr/lib/llvm-15/bin/llvm-link
      usr/lib/llvm-15/bin/llc usr/lib/llvm-15/bin/llvm-extract usr/lib/llvm-15/lib/libclang-cpp.so.15
      usr/lib/llvm-15/lib/clang/15.0.6/include/opencl-c.h
      usr/lib/llvm-15/lib/clang/15.0.6/include/opencl-c-base.h
      usr/lib/clc/spirv64-mesa3d-.spv usr/lib/clc/nvptx64--nvidiacl.bc)
# libz3 (23 MB) and ICU's data (31 MB) only satisfy the loader: libLLVM binds Z3 for clang's static
# analyser and libxml2's ICU data for encodings, neither used by vkcl's builds. Small stand-ins
# (functions that abort if ever called, an empty data symbol) keep the bundle inside the device
# tool's 64 MiB; libLLVM is not linked with BIND_NOW, so the stand-ins are never resolved.
lib=usr/lib/x86_64-linux-gnu
nm -D --undefined-only $lib/libLLVM-15.so.1 | awk '/ Z3_/ {print "void " $2 "(void) { abort(); }"}' \
    | { echo '#include <stdlib.h>'; cat; } >"$work/z3.c"
gcc -shared -fPIC -o $lib/libz3.so.4 -Wl,-soname,libz3.so.4 -xc "$work/z3.c"
echo 'const char icudt72_dat[32] __attribute__((aligned(16)));' >"$work/icu.c"
rm -f $lib/libicudata.so*
gcc -shared -fPIC -o $lib/libicudata.so.72 -Wl,-soname,libicudata.so.72 -xc "$work/icu.c"
keep+=($(cd usr/lib/x86_64-linux-gnu && ls | grep -E '^(libLLVM-15|libLLVMSPIRVLib|libz3|libicu(uc|data)|libxml2|libedit|libbsd|libmd|libvulkan|libEGL|libGL|libOpenGL|libGLX|libGLES|libGLdispatch)\.so' | sed 's|^|usr/lib/x86_64-linux-gnu/|'))
tar -cJf "$out/tools.tar.xz" "${keep[@]}"
ls -la "$out/tools.tar.xz"
