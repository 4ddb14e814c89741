/**
 * `vbench images-check`'s work (apps/vbench/images-check-command.ts wires it): for each image the
 * stack pulls (images.ts), what its registry serves (registry.ts: digest, platforms, the nodes'
 * platform among them), the image pulled by that digest and asked about itself
 * (version-checks.ts), HAProxy's `-c` on the stack's own haproxy.cfg, then the images working
 * together (live.ts). The report names every finding; the pins it prints are what to commit.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StackConfig } from "../../config/types.js";
import { zonesOnly } from "../../components/capacity/pod-inventory.js";
import { DEFAULT_REPLICATION_RELEASE } from "../../components/valkey-replication.js";
import { HAPROXY_CFG_DIR, HAPROXY_CFG_KEY } from "../../components/valkey/haproxy-manifests.js";
import { buildReplicationManifests } from "../../components/valkey/replication-manifests.js";
import type { Engine } from "./engine.js";
import { requiredPlatform, stackImages, type StackImage } from "./images.js";
import { runLiveStack, type LiveImages, type LiveRow } from "./live.js";
import { resolveImage, type Mirror, type ResolvedImage } from "./registry.js";
import { versionChecks } from "./version-checks.js";

export interface CheckRow {
  check: string;
  ok: boolean;
  detail: string;
}

export interface ImageReport extends StackImage {
  resolved?: Pick<ResolvedImage, "digest" | "mediaType" | "platforms" | "pullRef">;
  rows: CheckRow[];
}

export interface ImagesReport {
  mode: StackConfig["valkey"]["mode"];
  engine: string;
  requiredPlatform: string | undefined;
  images: ImageReport[];
  live: LiveRow[];
}

export interface ImagesCheckOptions {
  config: StackConfig;
  mirrors: readonly Mirror[];
  engine: Engine;
  /** Scratch directory (rendered files). */
  dir: string;
  /** The check's throwaway password (in the engine's environment too). */
  password: string | undefined;
  /** Run the images together (live.ts). @default true */
  live?: boolean;
  fetchFn?: typeof fetch;
}

/** The registry's answer, and whether it offers the nodes' platform. */
async function resolveRow(image: ImageReport, o: ImagesCheckOptions, platform: string | undefined): Promise<boolean> {
  try {
    const r = await resolveImage(image.ref, o.mirrors, o.fetchFn);
    image.resolved = { digest: r.digest, mediaType: r.mediaType, platforms: r.platforms, pullRef: r.pullRef };
    const offers = platform === undefined || r.platforms.some((p) => p === platform || p.startsWith(`${platform}/`));
    image.rows.push({
      check: "registry",
      ok: offers,
      detail: offers
        ? `${r.digest} (${r.platforms.join(", ")})`
        : `${r.digest} offers ${r.platforms.join(", ")}: no ${platform}, the platform of the stack's nodes`,
    });
    const pulled = o.engine.pull(r.pullRef, r.location.insecure);
    image.rows.push({
      check: "pull",
      ok: pulled.status === 0,
      detail:
        pulled.status === 0 ? `${o.engine.name} pulled ${r.pullRef}` : `${o.engine.name} pull: ${pulled.stderr.trim()}`,
    });
    return offers && pulled.status === 0;
  } catch (err) {
    image.rows.push({ check: "registry", ok: false, detail: (err as Error).message });
    return false;
  }
}

function askImage(image: ImageReport, o: ImagesCheckOptions): void {
  const ref = image.resolved?.pullRef as string;
  for (const v of versionChecks(image)) {
    const r = o.engine.run({ image: ref, entrypoint: v.entrypoint, args: v.args });
    const out = `${r.stdout}${r.stderr}`;
    const problem = r.status === 0 ? v.judge(out) : `exited ${r.status}: ${out.trim().slice(0, 300)}`;
    image.rows.push({ check: v.name, ok: problem === undefined, detail: problem ?? out.trim().split("\n")[0] ?? "" });
  }
}

/** `haproxy -c` on the haproxy.cfg the program renders for this stack (its members' DNS names, re-resolved). */
function checkHaproxyCfg(image: ImageReport, o: ImagesCheckOptions): void {
  const m = buildReplicationManifests({
    namespace: o.config.valkey.namespace,
    release: DEFAULT_REPLICATION_RELEASE,
    valkey: o.config.valkey,
    placement: zonesOnly(o.config),
    auth: o.config.valkey.auth.enabled,
    metrics: o.config.metrics,
  });
  const file = join(o.dir, HAPROXY_CFG_KEY);
  writeFileSync(file, m.haproxy.renderCfg(o.password), { mode: 0o644 });
  const path = `${HAPROXY_CFG_DIR}/${HAPROXY_CFG_KEY}`;
  const r = o.engine.run({
    image: image.resolved?.pullRef as string,
    entrypoint: "haproxy",
    args: ["-c", "-f", path],
    mounts: [{ host: file, path }],
  });
  const out = `${r.stdout}${r.stderr}`.trim();
  image.rows.push({
    check: "haproxy -c",
    ok: r.status === 0,
    detail: r.status === 0 ? `the stack's haproxy.cfg is valid (${out.split("\n").pop() ?? ""})` : out.slice(0, 600),
  });
}

function liveImages(images: readonly ImageReport[]): LiveImages | undefined {
  const ok = (role: StackImage["role"]) =>
    images.find((i) => i.role === role && i.rows.every((r) => r.ok))?.resolved?.pullRef;
  const valkey = ok("valkey");
  if (valkey === undefined) return undefined;
  const [haproxy, node, exporter] = [ok("haproxy"), ok("node"), ok("exporter")];
  return {
    valkey,
    ...(haproxy === undefined ? {} : { haproxy }),
    ...(node === undefined ? {} : { node }),
    ...(exporter === undefined ? {} : { exporter }),
  };
}

export async function collectImagesCheck(o: ImagesCheckOptions): Promise<ImagesReport> {
  const platform = requiredPlatform(o.config);
  const images: ImageReport[] = stackImages(o.config).map((i) => ({ ...i, rows: [] }));
  for (const image of images) {
    if (!(await resolveRow(image, o, platform))) continue;
    askImage(image, o);
    if (image.role === "haproxy") checkHaproxyCfg(image, o);
  }
  const live = liveImages(images);
  const liveRows =
    o.live === false
      ? []
      : live === undefined
        ? [{ check: "live stack", image: "-", ok: false, detail: "not run: the Valkey image failed its own checks" }]
        : await runLiveStack({
            engine: o.engine,
            config: o.config,
            images: live,
            dir: o.dir,
            prefix: `images-check-${process.pid}`,
            password: o.password,
          });
  return { mode: o.config.valkey.mode, engine: o.engine.name, requiredPlatform: platform, images, live: liveRows };
}

export const imagesCheckFailed = (r: ImagesReport): boolean =>
  r.images.some((i) => i.rows.some((x) => !x.ok)) || r.live.some((x) => !x.ok);

/** The lines to commit: versions.env keys for its defaults, stack keys for the stack's own images. */
export function pinLines(r: ImagesReport): string[] {
  return r.images.flatMap((i) => {
    if (i.resolved === undefined || i.rows.some((x) => !x.ok)) return [];
    const pinned = i.ref.includes("@") ? i.ref : `${i.ref}@${i.resolved.digest}`;
    return i.pinKey !== undefined
      ? [`${i.pinKey}=${pinned}`]
      : i.keys.map((k) => `pulumi config set --path valkey-on-eks:${k} ${pinned}`);
  });
}

export function renderImagesCheck(r: ImagesReport): string {
  const mark = (ok: boolean) => (ok ? "ok  " : "FAIL");
  const lines = [
    `images of this ${r.mode}-mode stack (engine ${r.engine}; nodes: ${r.requiredPlatform ?? "not chosen by the stack"})`,
  ];
  for (const i of r.images) {
    lines.push("", `${i.ref}  (${i.keys.join(", ")}: ${i.uses.join("; ")})`);
    for (const x of i.rows) lines.push(`  ${mark(x.ok)} ${x.check.padEnd(17)} ${x.detail}`);
  }
  if (r.live.length > 0) {
    lines.push("", "the images together (one pod's localhost):");
    for (const x of r.live) lines.push(`  ${mark(x.ok)} ${x.check.padEnd(17)} ${x.detail}`);
  }
  const pins = pinLines(r);
  if (pins.length > 0)
    lines.push(
      "",
      "pins to commit (versions.env, or the stack file for its own images):",
      ...pins.map((p) => `  ${p}`),
    );
  return lines.join("\n");
}
