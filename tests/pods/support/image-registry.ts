/**
 * A real OCI registry on 127.0.0.1 for the images check's test: Debian's docker-registry
 * (distribution 2.8) with its `silly` access controller, which answers every anonymous request
 * with a `Bearer realm=…` challenge as ECR Public and quay.io do; the realm is a token endpoint
 * here that hands out a token and records each scope asked for. Images go in with skopeo from the
 * local images' OCI archives (apps/kube-local/images.sh); `putIndex` makes a tag an OCI index.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { freePort } from "../../../harness/local/ports.js";

const execFileAsync = promisify(execFile);

export interface LocalRegistry {
  /** host:port */
  host: string;
  /** Every `scope` the token endpoint was asked for. */
  scopes: string[];
  stop(): Promise<void>;
}

export const REGISTRY_TOOLS = ["docker-registry", "skopeo", "podman"] as const;

export function missingRegistryTools(): string[] {
  return REGISTRY_TOOLS.filter((t) => spawnSync("sh", ["-c", `command -v ${t}`]).status !== 0);
}

async function tokenServer(scopes: string[]): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    for (const s of url.searchParams.getAll("scope")) scopes.push(s);
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ token: "images-check-test" }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

async function untilUp(host: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited ${child.exitCode}: ${log()}`);
    const ok = await fetch(`http://${host}/v2/`).then(
      (r) => r.status === 401 || r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`docker-registry on ${host} did not answer: ${log()}`);
}

export async function startRegistry(dir: string): Promise<LocalRegistry> {
  const scopes: string[] = [];
  const tokens = await tokenServer(scopes);
  const realm = `http://127.0.0.1:${(tokens.address() as AddressInfo).port}/token`;
  const host = `127.0.0.1:${await freePort()}`;
  mkdirSync(join(dir, "data"), { recursive: true });
  const config = join(dir, "config.yml");
  writeFileSync(
    config,
    [
      "version: 0.1",
      "log: { level: warn }",
      `storage: { filesystem: { rootdirectory: ${join(dir, "data")} }, delete: { enabled: true } }`,
      `http: { addr: "${host}" }`,
      `auth: { silly: { realm: "${realm}", service: images-check-test } }`,
    ].join("\n"),
  );
  const child = spawn("docker-registry", ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
  await untilUp(host, child, () => stderr);
  return {
    host,
    scopes,
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((r) => tokens.close(r));
    },
  };
}

const auth = { Authorization: "Bearer images-check-test" };

/**
 * Copies an OCI archive to host/repository:tag (skopeo: the same push a CI would make). Async: the
 * token endpoint answers from this process's event loop, so nothing here may block it.
 */
export async function pushArchive(reg: LocalRegistry, archive: string, repository: string, tag: string): Promise<void> {
  const dest = `docker://${reg.host}/${repository}:${tag}`;
  await run("skopeo", ["copy", "-q", "--dest-tls-verify=false", `oci-archive:${archive}`, dest]);
}

/** Runs a command without blocking the event loop; its stdout, or an error with its stderr. */
export async function run(cmd: string, args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync(cmd, args, { env: { ...process.env, ...env }, maxBuffer: 16 << 20 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(" ")}: ${e.stderr ?? e.message}`, { cause: err });
  }
}

/** The manifest a tag names now: its bytes' digest and size. */
export async function manifestOf(reg: LocalRegistry, repository: string, tag: string) {
  const res = await fetch(`http://${reg.host}/v2/${repository}/manifests/${tag}`, {
    headers: { ...auth, Accept: "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json" },
  });
  if (!res.ok) throw new Error(`GET ${repository}:${tag}: ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const mediaType = (JSON.parse(bytes.toString()) as { mediaType: string }).mediaType;
  return { digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`, size: bytes.length, mediaType };
}

/**
 * Makes `tag` an OCI index over the single-platform manifest `from` names, listed for each of
 * `platforms`. Test data, said plainly: the local images are amd64 builds, so an arm64 entry
 * points at the same amd64 manifest; the check reads the index's platforms, and this machine's
 * engine pulls and runs the amd64 entry.
 */
export async function putIndex(
  reg: LocalRegistry,
  repository: string,
  from: string,
  tag: string,
  platforms: readonly { os: string; architecture: string; variant?: string }[],
): Promise<string> {
  const m = await manifestOf(reg, repository, from);
  const index = JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: platforms.map((platform) => ({ mediaType: m.mediaType, digest: m.digest, size: m.size, platform })),
  });
  const res = await fetch(`http://${reg.host}/v2/${repository}/manifests/${tag}`, {
    method: "PUT",
    headers: { ...auth, "Content-Type": "application/vnd.oci.image.index.v1+json" },
    body: index,
  });
  if (res.status !== 201) throw new Error(`PUT index ${repository}:${tag}: ${res.status} ${await res.text()}`);
  return `sha256:${createHash("sha256").update(index).digest("hex")}`;
}

/**
 * podman's storage and engine settings for the test, in `dir` (CONTAINERS_STORAGE_CONF,
 * CONTAINERS_CONF): overlay storage of its own; cgroupfs; and the default ulimits capped at this
 * process's hard limits (podman's defaults for root exceed them in a container, and runc then
 * refuses to start anything).
 */
export function podmanEnv(dir: string): Record<string, string> {
  const hard = (flag: string) => spawnSync("bash", ["-c", `ulimit -H${flag}`], { encoding: "utf8" }).stdout.trim();
  // nproc at the hard limit itself was refused here (runc: "error setting rlimit type 6"): 4096 is plenty.
  const cap = (v: string, max: number) => String(v === "unlimited" ? max : Math.min(Number(v), max));
  const [nofile, nproc] = [cap(hard("n"), 65536), cap(hard("u"), 4096)];
  const storage = join(dir, "storage.conf");
  const containers = join(dir, "containers.conf");
  writeFileSync(
    storage,
    `[storage]\ndriver = "overlay"\ngraphroot = "${join(dir, "root")}"\nrunroot = "${join(dir, "run")}"\n`,
  );
  writeFileSync(
    containers,
    [
      "[containers]",
      `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]`,
      "[engine]",
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      "",
    ].join("\n"),
  );
  return { CONTAINERS_STORAGE_CONF: storage, CONTAINERS_CONF: containers };
}
