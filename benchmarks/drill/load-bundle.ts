/**
 * Bundles load-main.ts (and ioredis) into one ES module, `load.mjs`, that a plain `node` runs
 * without node_modules: what the FailureDrill step puts in its ConfigMap. esbuild, minified, for
 * Node 22+; the bundle stays well under a ConfigMap's 1 MiB.
 */
import { fileURLToPath } from "node:url";

export const LOAD_ENTRY = fileURLToPath(new URL("./load-main.ts", import.meta.url));
/** A ConfigMap holds at most 1 MiB. */
export const CONFIGMAP_LIMIT_BYTES = 1024 * 1024;

/** One ES module of `entry` and everything it imports, that a plain `node` runs without node_modules (minified, Node 22+). */
export async function bundleForNode(entry: string): Promise<string> {
  const esbuild = await import("esbuild");
  const out = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: "node",
    format: "esm",
    target: "node22",
    minify: true,
    legalComments: "none",
    // ioredis' CommonJS dependencies call require(): give the ES module one.
    banner: { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' },
    logLevel: "silent",
  });
  const text = out.outputFiles[0]?.text;
  if (text === undefined) throw new Error(`esbuild produced no output for ${entry}`);
  return text;
}

export async function bundleLoadScript(): Promise<string> {
  const text = await bundleForNode(LOAD_ENTRY);
  if (Buffer.byteLength(text) >= CONFIGMAP_LIMIT_BYTES) throw new Error(`the drill load bundle is ${Buffer.byteLength(text)} bytes, over a ConfigMap's 1 MiB`);
  return text;
}
