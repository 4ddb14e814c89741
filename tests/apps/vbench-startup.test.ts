/**
 * What `vbench` loads before it reads its arguments: every command module is imported at start, so anything they
 * import statically is paid by every run, a refusal or `--help` included (and by every CLI test: a few hundred starts
 * in the suite). The Pulumi SDK, the AWS, Kubernetes and EKS providers, Grafana's SDK and vega are loaded by the commands
 * that use them, when they run. Read from esbuild's import graph of apps/vbench/cli.ts (static imports only).
 */
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const HEAVY = [/^@pulumi\//, /^@grafana\//, /^vega(-lite)?$/, /^@kubernetes\/client-node$/, /^esbuild$/];

/** Every module `entry` reaches through static imports, with the file that first imported it. */
async function staticClosure(entry: string): Promise<Map<string, string>> {
  const { metafile } = await build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    metafile: true,
    write: false,
    logLevel: "silent",
  });
  const seen = new Map<string, string>([[entry, ""]]);
  const queue = [entry];
  for (let f = queue.shift(); f !== undefined; f = queue.shift())
    for (const i of metafile.inputs[f]?.imports ?? [])
      if (i.kind !== "dynamic-import" && !seen.has(i.path)) {
        seen.set(i.path, f);
        queue.push(i.path);
      }
  return seen;
}

describe("vbench at start", () => {
  it("imports no Pulumi SDK or provider, no Grafana SDK, no vega, no Kubernetes client, no esbuild", async () => {
    const closure = await staticClosure("apps/vbench/cli.ts");
    const chain = (m: string): string => {
      const out = [m];
      for (let p = closure.get(m); p; p = closure.get(p)) out.push(p);
      return out.join(" <- ");
    };
    const heavy = [...closure.keys()].filter((m) => {
      const pkg = m.startsWith("@") ? m.split("/").slice(0, 2).join("/") : m.split("/")[0]!;
      return HEAVY.some((h) => h.test(pkg));
    });
    expect(heavy.map(chain)).toEqual([]);
    // The closure is real: it reaches the commands and their light dependencies.
    expect(closure.has("apps/vbench/bench-command.ts")).toBe(true);
    expect([...closure.keys()].some((m) => m === "ioredis")).toBe(true);
  });
});
