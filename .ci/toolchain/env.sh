# Source this file (bash or zsh) to put the toolchain that .ci/toolchain/install.sh built on PATH,
# without building anything:  source .ci/toolchain/env.sh
# The bin dirs are the ones `install.sh --dirs` prints for this checkout (keyed by versions.env and
# the wrapper modules' go.mod/go.sum); directories that do not exist yet are still added: run
# install.sh to fill them.
if [ -n "${BASH_VERSION:-}" ]; then
  _vo_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
elif [ -n "${ZSH_VERSION:-}" ]; then
  eval '_vo_here="$(cd "$(dirname "${(%):-%x}")" && pwd)"'
else
  echo "env.sh: source it from bash or zsh" >&2
  return 1
fi
export VALKEY_ON_EKS_TOOLCHAIN="${VALKEY_ON_EKS_TOOLCHAIN:-$HOME/.cache/valkey-on-eks/toolchain}"
if _vo_dirs="$(bash "$_vo_here/install.sh" --dirs)"; then
  export PATH="$(printf '%s\n' "$_vo_dirs" | sed 's/^[^=]*=//' | paste -sd: -):$PATH"
else
  echo "env.sh: $_vo_here/install.sh --dirs failed; PATH unchanged" >&2
fi
unset _vo_here _vo_dirs
