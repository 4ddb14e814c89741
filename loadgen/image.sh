#!/usr/bin/env bash
# npm run loadgen:image [-- --out DIR] [-- --push REF]: the load generator's image, for a registry
# your nodes pull from (config benchmark.loadgenImage; docs/deploy-on-aws.md, "The load
# generator's image"). One layer holding /vload, the static binary .ci/setup built from loadgen/
# (VBENCH_LOADGEN; the npm script runs this through .ci/setup), entrypoint /vload; no base image:
# the benchmark Job's init container runs `/vload install <dir>` and nothing else.
#
#   --out DIR   where the OCI archive goes (default results/loadgen-image/); its tag is the first
#               12 hex digits of its manifest's digest (the same bytes give the same tag)
#   --push REF  then copies it to REF (e.g. 123456789012.dkr.ecr.us-west-2.amazonaws.com/vload:TAG)
#               with skopeo (Debian: apt-get install skopeo), using skopeo's login
#               (for ECR: aws ecr get-login-password | skopeo login --username AWS --password-stdin <registry>)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { printf 'loadgen:image: error: %s\n' "$*" >&2; exit 2; }
out="$ROOT/results/loadgen-image"
push=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --out) [ "$#" -ge 2 ] || die "--out needs a directory"; out="$2"; shift 2 ;;
    --push) [ "$#" -ge 2 ] || die "--push needs an image reference"; push="$2"; shift 2 ;;
    *) die "unknown argument '$1' (--out DIR, --push REF)" ;;
  esac
done
vload="${VBENCH_LOADGEN:-}"
[ -x "$vload" ] || die "the load generator is not built (VBENCH_LOADGEN unset): run it as npm run loadgen:image, which builds it through .ci/setup"
mkdir -p "$out"
stage="$(mktemp -d "$out/.stage.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
install -m 755 "$vload" "$stage/vload"
layer="$out/loadgen-$(sha256sum "$vload" | cut -c1-12).layer.tar"
tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$stage" -cf "$layer" .
read -r _name ref archive < <(python3 "$ROOT/apps/kube-local/oci-archive.py" "$out" valkey-on-eks.local loadgen '{"Entrypoint":["/vload"]}' "$layer")
printf 'loadgen image: %s\n  archive %s\n  vload %s\n' "$ref" "$archive" "$("$vload" version)"
if [ -z "$push" ]; then
  printf '  push it with: npm run loadgen:image -- --push <registry>/vload:%s (skopeo), then set benchmark.loadgenImage to that reference\n' "${ref##*:}"
  exit 0
fi
command -v skopeo >/dev/null || die "--push needs skopeo (Debian: apt-get install skopeo)"
skopeo copy --quiet "oci-archive:$archive" "docker://$push"
printf '  pushed to %s: set benchmark.loadgenImage to it\n' "$push"
