#!/usr/bin/env bash
# Unpacks Mesa's rusticl (Debian's mesa-opencl-icd) of a given Mesa version into the build tree,
# beside the system's Mesa, which it leaves alone, so that vkcl-bench can compare vkcl with
# rusticl on the llvmpipe of the same Mesa as vkcl's lavapipe (issue 15):
#
#   scripts/rusticl.sh 25.0.7 [DIR]   (default DIR: target/rusticl-25.0.7)
#   scripts/rusticl.sh 22.3.6 [DIR]   (default DIR: target/rusticl-22.3.6)
#
# Like scripts/lavapipe-25.sh, the .deb files are fetched with a temporary apt sources list (no
# system source, package or apt state is changed) and unpacked with `dpkg -x`. DIR then holds
# root/ (the unpacked packages), vendors/rusticl.icd (an OpenCL ICD file naming the unpacked
# libRusticlOpenCL.so.1), `installed` (the packages) and `run`, which runs a program with that
# rusticl as the only OpenCL platform (RUSTICL_ENABLE=llvmpipe unless set):
#   DIR/run clinfo -l
# vkcl-bench's platform `rusticl-VERSION` runs its child through target/rusticl-VERSION/run.
#
# 22.3.6 is bookworm's own package: it runs on this system's libraries (LLVM 15).
# 25.0.7: bookworm-backports' mesa-opencl-icd 25.0.7 has no rusticl (only Clover), so this takes
# trixie's (Mesa 25.0.7, built with LLVM 19 and glibc 2.41) with its whole dependency closure.
# `run` starts the program under trixie's dynamic loader with root/'s libraries, in a private
# mount namespace (`unshare -m`, or `unshare -rm` when not root) where an overlay on /usr/lib
# adds trixie's /usr/lib/llvm-19 (clang's OpenCL headers) and /usr/lib/clc (libclc), the fixed
# paths that rusticl reads. The program must be an ELF executable (not a script). Note that
# lavapipe 25.0.7 of scripts/lavapipe-25.sh (bookworm-backports) uses LLVM 15: same Mesa, newer
# LLVM on rusticl's side.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?usage: scripts/rusticl.sh 25.0.7|22.3.6 [DIR]}
dest=${2:-${CARGO_TARGET_DIR:-$root/target}/rusticl-$version}
case $version in
  25.0.7)
    suites=("deb http://deb.debian.org/debian trixie main")
    top=("mesa-opencl-icd=25.0.7-2+deb13u1" ocl-icd-libopencl1)
    closure=1 ;;
  22.3.6)
    suites=("deb http://deb.debian.org/debian bookworm main"
      "deb http://deb.debian.org/debian bookworm-updates main"
      "deb http://deb.debian.org/debian-security bookworm-security main")
    top=("mesa-opencl-icd=22.3.6-1+deb12u2")
    closure=0 ;;
  *) echo "rusticl.sh: version $version unknown (25.0.7 or 22.3.6)" >&2; exit 1 ;;
esac
if [ -f "$dest/installed" ] && [ "$(head -n 1 "$dest/installed")" = "${top[*]}" ] \
    && [ -x "$dest/run" ] && [ -f "$dest/vendors/rusticl.icd" ]; then
  exit 0
fi
mkdir -p "$(dirname "$dest")"
dest=$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$dest.new"' EXIT
. "$root/scripts/private-apt.sh"
private_apt "$tmp" "${suites[@]}"
echo "rusticl.sh: downloading ${top[*]}"
apt-get "${apt_opts[@]}" -qq update
pkgs=("${top[@]}")
if [ "$closure" = 1 ]; then
  # Every package these depend on (recursively), so that nothing comes from the system.
  mapfile -t deps < <(apt-cache "${apt_opts[@]}" depends --recurse --no-recommends \
      --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "${top[@]%%=*}" \
      | grep -v '^[ <]' | sort -u | grep -vx -e mesa-opencl-icd)
  pkgs+=("${deps[@]}")
fi
if ! (cd "$tmp/debs" && apt-get "${apt_opts[@]}" -qq download "${pkgs[@]}"); then
  echo "rusticl.sh: the archive no longer has ${top[*]}: update the versions in $0" >&2
  exit 1
fi
rm -rf "$dest.new"
mkdir -p "$dest.new/root" "$dest.new/vendors"
for d in "$tmp"/debs/*.deb; do dpkg -x "$d" "$dest.new/root"; done
so=$(find "$dest.new/root" -name libRusticlOpenCL.so.1 | head -n 1)
[ -n "$so" ] || { echo "rusticl.sh: no libRusticlOpenCL.so.1 in the packages" >&2; exit 1; }
libdir=${so%/libRusticlOpenCL.so.1}
ln -s "root/${libdir#"$dest.new/root/"}" "$dest.new/lib"
echo "$dest/lib/libRusticlOpenCL.so.1" >"$dest.new/vendors/rusticl.icd"
if [ "$closure" = 1 ]; then
  mkdir -p "$dest.new/usr-lib"
  for d in "$dest.new"/root/usr/lib/llvm-* "$dest.new/root/usr/lib/clc"; do
    ln -s "$dest/root/usr/lib/$(basename "$d")" "$dest.new/usr-lib/$(basename "$d")"
  done
  cat >"$dest.new/run" <<RUN
#!/bin/sh
# Runs "\$@" with rusticl $version (scripts/rusticl.sh) as the only OpenCL platform.
[ \$# -gt 0 ] || { echo "usage: \$0 PROGRAM [ARGS]" >&2; exit 2; }
prog=\$(command -v "\$1") || { echo "\$0: \$1 not found" >&2; exit 127; }
shift
export OCL_ICD_VENDORS=$dest/vendors RUSTICL_ENABLE=\${RUSTICL_ENABLE:-llvmpipe}
ns=-m; [ "\$(id -u)" = 0 ] || ns=-rm
exec unshare \$ns sh -c 'mount -t overlay overlay -o lowerdir=$dest/usr-lib:/usr/lib /usr/lib &&
  exec $dest/lib/ld-linux-x86-64.so.2 --library-path $dest/lib "\$@"' run "\$prog" "\$@"
RUN
else
  cat >"$dest.new/run" <<RUN
#!/bin/sh
# Runs "\$@" with rusticl $version (scripts/rusticl.sh) as the only OpenCL platform.
export OCL_ICD_VENDORS=$dest/vendors RUSTICL_ENABLE=\${RUSTICL_ENABLE:-llvmpipe}
exec "\$@"
RUN
fi
chmod +x "$dest.new/run"
{ echo "${top[*]}"; (cd "$tmp/debs" && ls); } >"$dest.new/installed"
rm -rf "$dest"
mv "$dest.new" "$dest"
if command -v clinfo >/dev/null; then
  info=$("$dest/run" "$(command -v clinfo)" 2>&1 || true)
  if ! grep -q "Driver Version *$version" <<<"$info"; then
    echo "rusticl.sh: clinfo does not see rusticl $version through $dest/run:" >&2
    echo "$info" | tail -n 20 >&2
    rm -rf "$dest"
    exit 1
  fi
fi
echo "rusticl.sh: rusticl $version in $dest (run programs with $dest/run)"
