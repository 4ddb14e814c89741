# Sourced by install.sh --real-cluster (never run on its own): builds what the local real cluster
# (docs/real-cluster.md) needs beyond the control plane, after the control plane so that kubelet and
# kube-proxy reuse its Go build cache. Same conventions as install.sh: one key directory per tool,
# built into a temporary directory and renamed into place, logs in build-logs/<key>.log.
#
#   kubernetes-node-<KUBERNETES_VERSION>-<hash of kubernetes/>/bin/{kubelet,kube-proxy}
#   coredns-<COREDNS_VERSION>-<hash of coredns/ (go.mod, go.sum, main.go)>/bin/coredns
#   cilium-<CILIUM_VERSION>-<hash of cilium/>/bin/{cilium-agent,cilium-cni} + bpf/ (the agent's
#                          BPF sources from the module, compiled by the agent at run time) + crds/
#   local-path-provisioner-<LOCAL_PATH_PROVISIONER_VERSION>/bin/local-path-provisioner  (go install)

build_kubernetes_node() {
  local tmp b s; tmp="$(newtmp "$k8s_node_name")"
  for b in kubelet kube-proxy; do
    s=$(date +%s)
    go_build "$k8s_node_name" kubernetes "$k8s_ldflags" "$tmp/bin/$b" "k8s.io/kubernetes/cmd/$b"
    echo "built $b in $(( $(date +%s) - s ))s" >>"$LOGS/$k8s_node_name.log"
  done
  publish "$k8s_node_name" "$tmp"
}
if [ ! -x "$T/$k8s_node_name/bin/kubelet" ] || [ ! -x "$T/$k8s_node_name/bin/kube-proxy" ]; then
  need_go; timed "$k8s_node_name" build_kubernetes_node
fi

build_coredns() {
  local tmp; tmp="$(newtmp "$coredns_name")"
  go_build "$coredns_name" coredns "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" "$tmp/bin/coredns" .
  publish "$coredns_name" "$tmp"
}
if [ ! -x "$T/$coredns_name/bin/coredns" ]; then need_go; timed "$coredns_name" build_coredns; fi

build_local_path() {
  local tmp; tmp="$(newtmp "$local_path_name")"
  go_install "$local_path_name" "$tmp" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION"
  publish "$local_path_name" "$tmp"
}
if [ ! -x "$T/$local_path_name/bin/local-path-provisioner" ]; then need_go; timed "$local_path_name" build_local_path; fi

# Cilium's Makefile.defs: version in pkg/version.ciliumVersion, the osusergo tag.
build_cilium() {
  local tmp src; tmp="$(newtmp "$cilium_name")"
  local ld="-s -w -X github.com/cilium/cilium/pkg/version.ciliumVersion=${CILIUM_VERSION#v}"
  go_build "$cilium_name" cilium "$ld" "$tmp/bin/cilium-agent" "-tags osusergo github.com/cilium/cilium/daemon"
  go_build "$cilium_name" cilium "$ld" "$tmp/bin/cilium-cni" "-tags osusergo github.com/cilium/cilium/plugins/cilium-cni"
  src="$(module_src "$cilium_name" "github.com/cilium/cilium@$CILIUM_VERSION" bpf "$HERE/cilium")"
  cp -r "$src/bpf" "$tmp/bpf"
  # Cilium's CRDs as the module publishes them (its operator would register them; kube:local
  # applies them instead, as the operator is not built).
  mkdir -p "$tmp/crds"
  cp "$src/pkg/k8s/apis/cilium.io/client/crds/"v2*/*.yaml "$tmp/crds/"
  chmod -R u+w "$tmp/bpf" "$tmp/crds"
  publish "$cilium_name" "$tmp"
}
if [ ! -x "$T/$cilium_name/bin/cilium-agent" ] || [ ! -x "$T/$cilium_name/bin/cilium-cni" ] || [ ! -d "$T/$cilium_name/bpf" ] || [ ! -d "$T/$cilium_name/crds" ]; then
  need_go; timed "$cilium_name" build_cilium
fi
