#!/usr/bin/env bash
# On the H200 device machine: unpacks .h200/tools.tar.xz (made by scripts/h200-bundle.sh) into
# /opt/vkcl-tools (and any other .h200/tools*.tar.xz) and prints the environment that runs vkcl there; use as
#   eval "$(scripts/h200-env.sh)"
# then OpenCL programs see vkcl through OCL_ICD_FILENAMES (the image's ocl-icd prefers it to
# OCL_ICD_VENDORS); NVIDIA's own OpenCL stays reachable as libnvidia-opencl.so.1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
t=/opt/vkcl-tools
if [ ! -x $t/usr/bin/clang-15 ] || [ ! -x $t/usr/bin/llvm-extract-15 ]; then
  mkdir -p $t && for f in "$root"/.h200/tools*.tar.xz; do tar -xJf "$f" -C $t; done
fi
lib=${VKCL_H200_LIB:-$root/.h200/libvkcl.so}
cat <<ENV
export PATH=$t/usr/bin:\$PATH
export LD_LIBRARY_PATH=$t/usr/lib/x86_64-linux-gnu:$t/usr/lib/llvm-15/lib:\${LD_LIBRARY_PATH:-}
export VKCL_LIBCLC=$t/usr/lib/clc/spirv64-mesa3d-.spv VKCL_LIBCLC_NVPTX=$t/usr/lib/clc/nvptx64--nvidiacl.bc
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export VKCL_CACHE_DIR=/tmp/vkcl-cache
export OCL_ICD_FILENAMES=$lib
ENV
