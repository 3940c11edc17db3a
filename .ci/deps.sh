#!/usr/bin/env bash
# Installs the Debian bookworm packages vkcl needs to build, run and test (root or sudo).
set -euo pipefail
pkgs=(mesa-vulkan-drivers libvulkan1 vulkan-tools vulkan-validationlayers
      clang-15 llvm-15 llvm-spirv-15 libclc-15 spirv-tools
      ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo gcc make
      pocl-opencl-icd)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
