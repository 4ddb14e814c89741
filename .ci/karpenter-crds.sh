#!/usr/bin/env bash
# Fills DEST/crds/karpenter-<KARPENTER_CHART_VERSION>/ (the layout of the workplace's shared/ folder,
# which is not in the repository) with Karpenter's NodePool, NodeClaim and EC2NodeClass CRDs as
# published in the github.com/aws/karpenter-provider-aws module at that version
# (pkg/apis/crds/), fetched from the Go module proxy. For CI, where no shared/ sits beside the
# checkout:
#
#   bash .ci/karpenter-crds.sh "$RUNNER_TEMP/shared" && export VALKEY_ON_EKS_SHARED="$RUNNER_TEMP/shared"
#
# Needs `go`. Idempotent: an existing, complete destination is left as it is.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../versions.env
. "$ROOT/versions.env"
[ "$#" -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
dest="$1/crds/karpenter-$KARPENTER_CHART_VERSION"
files=(karpenter.sh_nodepools.yaml karpenter.sh_nodeclaims.yaml karpenter.k8s.aws_ec2nodeclasses.yaml)
complete=1
for f in "${files[@]}"; do [ -s "$dest/$f" ] || complete=0; done
[ "$complete" = 1 ] && exit 0
command -v go >/dev/null || { echo "karpenter-crds: go is needed to fetch the CRDs from the Go module proxy" >&2; exit 1; }
module="github.com/aws/karpenter-provider-aws@v$KARPENTER_CHART_VERSION"
src="$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[ -d "$src/pkg/apis/crds" ] || { echo "karpenter-crds: $module has no pkg/apis/crds in the module cache ($src)" >&2; exit 1; }
mkdir -p "$dest"
for f in "${files[@]}"; do install -m 0644 "$src/pkg/apis/crds/$f" "$dest/$f"; done
echo "karpenter-crds: $module pkg/apis/crds -> $dest" >&2
