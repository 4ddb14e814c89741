# Source this file (bash or zsh) to put the toolchain that .ci/toolchain/install.sh built on PATH,
# without building anything:  source .ci/toolchain/env.sh
# Directories that do not exist yet are still added; run install.sh to fill them.
_vo_t="${VALKEY_ON_EKS_TOOLCHAIN:-$HOME/.cache/valkey-on-eks/toolchain}"
export VALKEY_ON_EKS_TOOLCHAIN="$_vo_t"
export PATH="$_vo_t/pulumi-v3.259.0/bin:$_vo_t/pulumi-kubernetes-4.25.0/bin:$_vo_t/pulumi-nodejs-dynamic-host/bin:$_vo_t/kubernetes-v1.33.13/bin:$_vo_t/etcd-v3.5.21/bin:$_vo_t/kwok-v0.8.0/bin:$_vo_t/actionlint-v1.7.12/bin:$PATH"
unset _vo_t
