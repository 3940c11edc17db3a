#!/usr/bin/env bash
# Unpacks Mesa 25.0.7's lavapipe (Debian bookworm-backports) into the build tree, beside the
# system's Mesa, which it leaves alone: the .deb files are fetched with a temporary apt sources
# list (no system source, package or apt state is changed) and unpacked with `dpkg -x`.
#
#   scripts/lavapipe-25.sh [DIR]      (default DIR: target/lavapipe-25.0.7 of this repository)
#
# DIR then holds root/ (the unpacked packages), lib (a link to root's library directory),
# lvp_icd.json (a Vulkan ICD manifest whose library_path is DIR/lib/libvulkan_lvp.so) and
# `installed` (the package versions). Use it with
#   VK_DRIVER_FILES=DIR/lvp_icd.json LD_LIBRARY_PATH=DIR/lib
# (scripts/vulkan-driver.sh does that from VKCL_VULKAN_DRIVER; docs/devices.md). Quick when
# DIR already holds these versions. Needs network access to deb.debian.org and the system
# libraries of bookworm's mesa-vulkan-drivers (libLLVM-15, libxcb...: .ci/deps.sh installs them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-${CARGO_TARGET_DIR:-$root/target}/lavapipe-25.0.7}
mesa=25.0.7-2~bpo12+1
drm=2.4.123-1~bpo12+1
pkgs=("mesa-vulkan-drivers=$mesa" "libdrm2=$drm" "libdrm-amdgpu1=$drm")
if [ -f "$dest/installed" ] && [ "$(cat "$dest/installed")" = "${pkgs[*]}" ] \
    && [ -f "$dest/lvp_icd.json" ] && [ -e "$dest/lib/libvulkan_lvp.so" ]; then
  exit 0
fi
mkdir -p "$(dirname "$dest")"
dest=$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$dest.new"' EXIT
. "$root/scripts/private-apt.sh"
private_apt "$tmp" "deb http://deb.debian.org/debian bookworm-backports main"
echo "lavapipe-25.sh: downloading ${pkgs[*]} from bookworm-backports"
apt-get "${apt_opts[@]}" -qq update
if ! (cd "$tmp/debs" && apt-get "${apt_opts[@]}" -qq download "${pkgs[@]}"); then
  echo "lavapipe-25.sh: bookworm-backports no longer has ${pkgs[*]}: update the versions" \
       "in $0 (and the expectations/docs naming 25.0.7)" >&2
  exit 1
fi
rm -rf "$dest.new"
mkdir -p "$dest.new/root"
for d in "$tmp"/debs/*.deb; do dpkg -x "$d" "$dest.new/root"; done
so=$(find "$dest.new/root" -name libvulkan_lvp.so -type f | head -n 1)
[ -n "$so" ] || { echo "lavapipe-25.sh: no libvulkan_lvp.so in the packages" >&2; exit 1; }
libdir=${so%/libvulkan_lvp.so}
ln -s "root/${libdir#"$dest.new/root/"}" "$dest.new/lib"
missing=$(LD_LIBRARY_PATH="$libdir" ldd "$so" | grep "not found" || true)
if [ -n "$missing" ]; then
  echo "lavapipe-25.sh: libvulkan_lvp.so needs libraries this system lacks" \
       "(run .ci/deps.sh first):" >&2
  echo "$missing" >&2
  exit 1
fi
cat >"$dest.new/lvp_icd.json" <<JSON
{
    "ICD": {
        "api_version": "1.4.305",
        "library_path": "$dest/lib/libvulkan_lvp.so"
    },
    "file_format_version": "1.0.0"
}
JSON
echo "${pkgs[*]}" >"$dest.new/installed"
rm -rf "$dest"
mv "$dest.new" "$dest"
if command -v vulkaninfo >/dev/null; then
  info=$(VK_DRIVER_FILES="$dest/lvp_icd.json" LD_LIBRARY_PATH="$dest/lib" vulkaninfo --summary 2>&1 || true)
  if ! grep -q "Mesa 25.0.7" <<<"$info"; then
    echo "lavapipe-25.sh: vulkaninfo does not see Mesa 25.0.7 through $dest/lvp_icd.json:" >&2
    echo "$info" | tail -n 20 >&2
    rm -rf "$dest"
    exit 1
  fi
fi
echo "lavapipe-25.sh: lavapipe 25.0.7 in $dest"
