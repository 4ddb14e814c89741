/**
 * `vbench images-check --file stacks/Pulumi.<stack>.yaml [--engine docker|podman] [--mirror R=URL]
 * [--no-live] [--json]` (`npm run images:check -- …`): for someone with registry access, before an
 * `up`: every image the stack pulls, resolved at its registry (digest, platforms: the nodes'
 * arm64 among them), pulled by digest, asked its versions, HAProxy's `-c` on the stack's
 * haproxy.cfg, then the images run together (stacks/images-check/). Prints the pins to commit.
 * Exit 0 when every check passed, 1 when one did not, 2 for an unreadable stack file or bad flags.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { chooseEngine } from "../../stacks/images-check/engine.js";
import { parseMirror, type Mirror } from "../../stacks/images-check/registry.js";
import { CheckFailed, UsageError } from "./errors.js";
import { stackConfigOrUsage } from "./stack-file.js";

interface ImagesCheckOptions {
  file: string;
  engine?: string;
  mirror: string[];
  live: boolean;
  json?: boolean;
}

function usage<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export async function runImagesCheckCommand(options: ImagesCheckOptions): Promise<void> {
  const config = stackConfigOrUsage(options.file);
  const mirrors: Mirror[] = usage(() => options.mirror.map(parseMirror));
  // A throwaway password for the check's own server, in the engine's environment only.
  // The check renders the stack's manifests (the whole component tree): loaded for this command, not with the CLI.
  const [{ PASSWORD_VARS }, { collectImagesCheck, imagesCheckFailed, pinLines, renderImagesCheck }] = await Promise.all(
    [import("../../stacks/images-check/live.js"), import("../../stacks/images-check/check.js")],
  );
  const password = config.valkey.auth.enabled ? randomBytes(16).toString("hex") : undefined;
  const env = { ...process.env, ...Object.fromEntries(PASSWORD_VARS.map((k) => [k, password ?? ""])) };
  const engine = usage(() => chooseEngine(options.engine, env));
  const dir = mkdtempSync(join(tmpdir(), "images-check-"));
  try {
    const report = await collectImagesCheck({ config, mirrors, engine, dir, password, live: options.live });
    const failed = imagesCheckFailed(report);
    if (options.json === true)
      process.stdout.write(`${JSON.stringify({ ok: !failed, ...report, pins: pinLines(report) }, null, 2)}\n`);
    else process.stdout.write(`${renderImagesCheck(report)}\n`);
    if (failed) {
      const bad = [
        ...report.images.filter((i) => i.rows.some((r) => !r.ok)).map((i) => i.ref),
        ...report.live.filter((r) => !r.ok).map((r) => `live ${r.check}`),
      ];
      const error = new CheckFailed(`${options.file}: images not ready for this stack (${bad.join(", ")})`);
      throw options.json === true ? error.markReported() : error;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function registerImagesCheckCommand(program: Command): void {
  program
    .command("images-check")
    .description("with registry access: resolve, pull and run every image the stack uses; print digests to pin")
    .requiredOption("--file <path>", "the stack file, e.g. stacks/Pulumi.replication.yaml")
    .option("--engine <name>", "docker or podman (default: the first whose `info` answers)")
    .option(
      "--mirror <registry=url>",
      "serve a registry's images from another (an ECR pull-through cache, a local registry); repeatable",
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option("--no-live", "skip running the images together")
    .option("--json", "print JSON: { ok, mode, engine, requiredPlatform, images: [...], live: [...], pins: [...] }")
    .action((options: ImagesCheckOptions) => runImagesCheckCommand(options));
}
