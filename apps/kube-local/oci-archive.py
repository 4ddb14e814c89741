#!/usr/bin/env python3
"""Writes an OCI archive (an image layout in a tar, uncompressed layers) that `ctr images import`
loads and `skopeo copy oci-archive:...` pushes, and prints its `<name> <ref> <archive>` line.

    oci-archive.py OUT REGISTRY NAME CONFIG_JSON LAYER...

The image has the layers given (bottom first) and the config fields of CONFIG_JSON (Entrypoint,
Cmd, User, WorkingDir, Env). Its tag is the first 12 hex digits of its manifest's digest, which
names every layer by digest: a changed file gives a new tag. The archive is OUT/<name>-<tag>.oci.tar;
layer digests are cached in OUT/.layer-digests.json by path, size and mtime.
Used by apps/kube-local/images.sh (the local cluster's images) and loadgen/image.sh (the
load generator's image for a registry).
"""
import hashlib, json, os, shutil, sys, tarfile, tempfile
out, registry, name, config, layers = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5:]
def digest_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()
cache = os.path.join(out, ".layer-digests.json")
known = json.load(open(cache)) if os.path.exists(cache) else {}
descs = []
for path in layers:
    st = os.stat(path)
    stamp = f"{st.st_size}:{st.st_mtime_ns}"
    entry = known.get(path)
    if not entry or entry[0] != stamp:
        entry = [stamp, digest_file(path)]
        known[path] = entry
    descs.append({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": entry[1], "size": st.st_size, "path": path})
json.dump(known, open(cache + ".tmp", "w")); os.replace(cache + ".tmp", cache)
env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
cfg = {
    "architecture": "amd64", "os": "linux",
    "config": {"Env": env, **config},
    "rootfs": {"type": "layers", "diff_ids": [d["digest"] for d in descs]},
}
blobs = {}
def blob(obj):
    data = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    blobs[d] = data
    return d, len(data)
cd, cs = blob(cfg)
manifest = {
    "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cs},
    "layers": [{k: v for k, v in d.items() if k != "path"} for d in descs],
}
md, ms = blob(manifest)
tag = md.split(":")[1][:12]
ref = f"{registry}/{name}:{tag}"
archive = os.path.join(out, f"{name}-{tag}.oci.tar")
if not os.path.exists(archive):
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": ms,
        "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": tag}}]}
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".tmp-oci-")
    os.close(fd)
    with tarfile.open(tmp, "w") as t:
        def add_bytes(arc, data):
            info = tarfile.TarInfo(arc); info.size = len(data); info.mode = 0o644
            import io; t.addfile(info, io.BytesIO(data))
        add_bytes("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add_bytes("index.json", json.dumps(index).encode())
        for d, data in blobs.items():
            add_bytes("blobs/sha256/" + d.split(":")[1], data)
        for d in descs:
            t.add(d["path"], arcname="blobs/sha256/" + d["digest"].split(":")[1])
    os.replace(tmp, archive)
print(name, ref, archive)
