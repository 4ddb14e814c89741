#!/usr/bin/env bash
# Prints the directory of the github.com/aws/karpenter-provider-aws Go module at
# KARPENTER_CHART_VERSION (versions.env) in the Go module cache, downloading it from the Go module
# proxy first when it is missing (the same module and cache .ci/karpenter-crds.sh uses). Only the
# module proxy is asked (GOPROXY is forced to it, never `direct`), so no git clone happens.
#
#   dir="$(bash .ci/karpenter-module.sh)"   # e.g. ~/go/pkg/mod/github.com/aws/karpenter-provider-aws@v<version>
#
# Needs `go`; exits 1 with a message naming what is missing otherwise. Override the proxy with
# VALKEY_ON_EKS_GOPROXY (a module proxy URL) where proxy.golang.org is not reachable.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../versions.env
. "$ROOT/versions.env"
command -v go >/dev/null || {
  echo "karpenter-module: \`go\` is not on PATH; it fetches github.com/aws/karpenter-provider-aws@v$KARPENTER_CHART_VERSION from the Go module proxy (install Go: https://go.dev/doc/install)" >&2
  exit 1
}
module="github.com/aws/karpenter-provider-aws@v$KARPENTER_CHART_VERSION"
json="$(cd "${TMPDIR:-/tmp}" && GOPROXY="${VALKEY_ON_EKS_GOPROXY:-https://proxy.golang.org}" GOFLAGS=-mod=mod go mod download -json "$module")" || {
  echo "karpenter-module: go mod download $module failed: $json" >&2
  exit 1
}
dir="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[ -n "$dir" ] && [ -f "$dir/go.mod" ] || { echo "karpenter-module: $module is not in the module cache after download ($json)" >&2; exit 1; }
printf '%s\n' "$dir"
