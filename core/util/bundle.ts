/**
 * Bundles an entry module (and ioredis) into one ES module that a plain `node` runs without
 * node_modules: what the in-cluster Node pods get from a ConfigMap (the drill's load, the
 * benchmark Job's mix). esbuild, minified, for Node 22+; the bundle must stay under a ConfigMap's
 * 1 MiB.
 */

/** A ConfigMap holds at most 1 MiB. */
export const CONFIGMAP_LIMIT_BYTES = 1024 * 1024;

/** The bundle of `entry` (an absolute path); `what` names it in errors. */
export async function bundleEntry(entry: string, what: string): Promise<string> {
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
  if (text === undefined) throw new Error(`esbuild produced no output for ${what}`);
  if (Buffer.byteLength(text) >= CONFIGMAP_LIMIT_BYTES)
    throw new Error(`${what} bundles to ${Buffer.byteLength(text)} bytes, over a ConfigMap's 1 MiB`);
  return text;
}
