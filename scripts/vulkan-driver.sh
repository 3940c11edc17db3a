# Sourced (bash): exports VK_DRIVER_FILES / LD_LIBRARY_PATH for the Vulkan driver that
# VKCL_VULKAN_DRIVER names, with the rules of tests/common/vulkan_driver.rs (docs/devices.md):
#   unset          lavapipe 25.0.7 of target/lavapipe-25.0.7 (scripts/lavapipe-25.sh) if there,
#                  else the loader's default, with a warning; VK_DRIVER_FILES/VK_ICD_FILENAMES
#                  already set: left alone
#   lavapipe-25.0.7, lavapipe-22.3.6 (the system's), system (the loader's default), or a path
#   to a Vulkan ICD manifest (.json)
# Returns non-zero (with a message) when the named driver is missing.
vkcl_vulkan_driver() {
  local root target lp25 choice=${VKCL_VULKAN_DRIVER:-}
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  target=${CARGO_TARGET_DIR:-$root/target}
  lp25=$target/lavapipe-25.0.7
  if [ -z "$choice" ]; then
    if [ -n "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
      choice=system
    elif [ -f "$lp25/lvp_icd.json" ]; then
      choice=lavapipe-25.0.7
    else
      echo "!!!!!!!! WARNING: VKCL_VULKAN_DRIVER is unset and lavapipe 25.0.7 (the default" >&2
      echo "!!!!!!!! device) is not in $lp25: using the loader's default driver." >&2
      echo "!!!!!!!! Run scripts/lavapipe-25.sh, or set VKCL_VULKAN_DRIVER=system." >&2
      choice=system
    fi
  fi
  case $choice in
    lavapipe-25.0.7)
      [ -f "$lp25/lvp_icd.json" ] || {
        echo "VKCL_VULKAN_DRIVER=lavapipe-25.0.7 but $lp25/lvp_icd.json is missing: run scripts/lavapipe-25.sh" >&2
        return 1; }
      export VK_DRIVER_FILES=$lp25/lvp_icd.json
      export LD_LIBRARY_PATH=$lp25/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      unset VK_ICD_FILENAMES ;;
    lavapipe-22.3.6)
      local m
      m=/usr/share/vulkan/icd.d/lvp_icd.$(uname -m).json
      [ -f "$m" ] || { echo "VKCL_VULKAN_DRIVER=lavapipe-22.3.6 but $m is missing: run .ci/deps.sh" >&2; return 1; }
      export VK_DRIVER_FILES=$m
      unset VK_ICD_FILENAMES ;;
    system) ;;
    *.json)
      [ -f "$choice" ] || { echo "VKCL_VULKAN_DRIVER=$choice: no such ICD manifest" >&2; return 1; }
      VK_DRIVER_FILES=$(cd "$(dirname "$choice")" && pwd)/$(basename "$choice")
      export VK_DRIVER_FILES
      unset VK_ICD_FILENAMES ;;
    *)
      echo "VKCL_VULKAN_DRIVER=$choice is not lavapipe-25.0.7, lavapipe-22.3.6, system or a .json manifest" >&2
      return 1 ;;
  esac
  export VKCL_VULKAN_DRIVER=$choice
  echo "Vulkan driver: $choice${VK_DRIVER_FILES:+ ($VK_DRIVER_FILES)}" >&2
}
vkcl_vulkan_driver
