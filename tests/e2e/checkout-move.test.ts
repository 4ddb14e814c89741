/**
 * Destroy from another checkout, under the real Pulumi engine (Automation API,
 * the CLI built by the toolchain, a file:// backend; no cluster needed): CI creates a stack from
 * one clone of the repository, an engineer destroys it from another clone at a different path,
 * after the first one is gone.
 *
 * Checkout A and checkout B are copies of this checkout (support/serialized-provider.ts
 * copyCheckout: every tracked file, node_modules linked). The program is built from A's code (its
 * kit imported from A), with A's dynamic-provider host on PATH and A's `stacks/` as the
 * workspace directory, as `pulumi up` run in A would; the resource is an undoing step
 * (tests/support/where-step.ts: its create reports the module it was loaded from, its delete
 * writes that to a marker file). A is then deleted, and `destroy` runs from B: B's host, B's
 * `stacks/`. The delete must load B's module and succeed. With a shell that stores absolute paths
 * in the state, the delete loads A's path, which no longer exists, and destroy fails.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as kit from "../../components/steps/kit/ts-module-provider.js";
import { copyCheckout } from "../support/serialized-provider.js";
import { createPulumiEnv, tail, type PulumiEnv } from "./support/pulumi-harness.js";

const WHERE_STEP = "tests/support/where-step.ts";

/** The where-step's resource: `module` is the file its create loaded. */
class Where extends pulumi.dynamic.Resource {
  declare readonly module: pulumi.Output<string>;
  constructor(provider: pulumi.dynamic.ResourceProvider, marker: string) {
    super(provider, "where", { marker, module: undefined, cwd: undefined }, {}, "checks", "Where");
  }
}

/** A bin directory whose `pulumi-resource-pulumi-nodejs` runs `checkout`'s own dynamic-provider host. */
function providerHostBin(checkout: string): string {
  const bin = join(checkout, ".e2e-bin");
  mkdirSync(bin, { recursive: true });
  const host = join(bin, "pulumi-resource-pulumi-nodejs");
  writeFileSync(
    host,
    `#!/bin/sh\nexec "${process.execPath}" "${join(checkout, "node_modules/@pulumi/pulumi/cmd/dynamic-provider")}" "$@"\n`,
  );
  chmodSync(host, 0o755);
  return bin;
}

/** The stack `name` in a workspace rooted in `checkout`/stacks, its dynamic providers run by `checkout`'s host. */
async function stackIn(
  env: PulumiEnv,
  checkout: string,
  name: string,
  program: () => Promise<Record<string, unknown>>,
): Promise<Stack> {
  return LocalWorkspace.createOrSelectStack(
    { stackName: name, projectName: "valkey-on-eks", program },
    {
      pulumiCommand: env.command,
      envVars: { ...env.envVars, PATH: `${providerHostBin(checkout)}:${env.envVars.PATH ?? ""}` },
      workDir: join(checkout, "stacks"),
      secretsProvider: "passphrase",
      projectSettings: { name: "valkey-on-eks", runtime: "nodejs", backend: { url: env.envVars.PULUMI_BACKEND_URL } },
    },
  );
}

let env: PulumiEnv;
let a: string;
let b: string;
beforeAll(async () => {
  env = await createPulumiEnv({ kubernetes: false });
  a = copyCheckout();
  b = copyCheckout();
}, 120_000);
afterAll(() => {
  for (const dir of [a, b]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  env?.dispose();
});

describe("a stack created from one checkout is destroyed from another", () => {
  it("up from checkout A, A deleted, destroy from checkout B: the delete runs B's implementation", async () => {
    const name = `move${Math.random().toString(36).slice(2, 10)}`;
    const marker = join(env.dir, "deleted.json");
    const log: string[] = [];
    // The program as checkout A builds it: A's kit, A's module path.
    const kitOfA = (await import(
      pathToFileURL(join(a, "components/steps/kit/ts-module-provider.ts")).href
    )) as typeof kit;
    const provider = kitOfA.tsModuleProvider(join(a, WHERE_STEP), undefined, { undoes: true });
    const program = (): Promise<Record<string, unknown>> => {
      const step = new Where(provider, marker);
      return Promise.resolve({ module: step.module });
    };

    const inA = await stackIn(env, a, name, program);
    let destroyed = false;
    try {
      const up = await inA.up({ onOutput: (o) => log.push(o) });
      expect(up.summary.result, tail(log)).toBe("succeeded");
      expect(up.outputs.module?.value).toBe(pathToFileURL(join(a, WHERE_STEP)).href);

      // The engineer's laptop: A is gone, the stack's settings (its passphrase salt) come along.
      copyFileSync(join(a, "stacks", `Pulumi.${name}.yaml`), join(b, "stacks", `Pulumi.${name}.yaml`));
      rmSync(a, { recursive: true, force: true });
      expect(existsSync(a)).toBe(false);

      const inB = await stackIn(env, b, name, () => Promise.resolve({}));
      const down = await inB.destroy({ onOutput: (o) => log.push(o) });
      expect(down.summary.result, tail(log)).toBe("succeeded");
      destroyed = true;
      expect(JSON.parse(readFileSync(marker, "utf8"))).toMatchObject({
        module: pathToFileURL(join(b, WHERE_STEP)).href,
      });
      await inB.workspace.removeStack(name);
    } finally {
      if (!destroyed) {
        // Leave no stack behind in the test backend whatever failed (the resource has no cloud side).
        const cleanup = await stackIn(env, b, name, () => Promise.resolve({}));
        await cleanup.workspace.removeStack(name, { force: true }).catch(() => undefined);
      }
    }
  }, 300_000);
});
