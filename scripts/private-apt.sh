# Sourced by scripts/lavapipe-25.sh and scripts/rusticl.sh: `private_apt DIR LINE...` writes an
# apt configuration under DIR that reads only the given sources.list lines, with its own lists,
# cache and an empty status (nothing of the system's apt state is read or changed), and sets
# the array `apt_opts` for apt-get and apt-cache; .deb files go to DIR/debs.
private_apt() {
  local dir=$1
  shift
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/debs"
  printf '%s\n' "$@" >"$dir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o Dir::State::Status=/dev/null
    -o "APT::Sandbox::User=$(id -un)")
}
