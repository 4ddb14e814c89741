/**
 * `vbench config --file stacks/Pulumi.<stack>.yaml [--json] [--require-password]`: validates a
 * stack's config offline, as `pulumi up` would parse it, and prints the resolved config with every
 * default filled in. Exit 0 valid, 1 invalid (every problem by key path), 2 unreadable file or bad
 * YAML. The password's value is never printed, only whether it is a secret.
 */
import type { Command } from "commander";
import { stringify as toYaml } from "yaml";
import {
  ConfigError,
  StackFileError,
  loadStackFile,
  type ConfigIssue,
  type LoadedStackFile,
} from "../../config/schema.js";
import { CheckFailed, UsageError, type CliError } from "./errors.js";

interface ConfigOptions {
  file: string;
  json?: boolean;
  requirePassword?: boolean;
}

const print = (text: string) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
const printJson = (value: unknown) => print(JSON.stringify(value, null, 2));

function report(loaded: LoadedStackFile, file: string, json: boolean): void {
  if (json) {
    printJson({
      ok: true,
      file,
      stack: loaded.stack ?? null,
      password: loaded.password,
      warnings: loaded.warnings,
      config: loaded.config,
    });
    return;
  }
  for (const w of loaded.warnings) process.stderr.write(`warning: ${w.path}: ${w.message}\n`);
  const header = [
    `# ${file}: valid${loaded.stack ? ` (stack ${loaded.stack})` : ""}; resolved config with defaults`,
    `# password: ${loaded.password}`,
  ];
  print(`${header.join("\n")}\n${toYaml(loaded.config, { lineWidth: 0 })}`);
}

function fail(errors: readonly ConfigIssue[], json: boolean, error: CliError): never {
  if (json) {
    printJson({ ok: false, errors });
    error.markReported();
  }
  throw error;
}

export function runConfigCommand(options: ConfigOptions): void {
  const json = options.json === true;
  let loaded: LoadedStackFile;
  try {
    loaded = loadStackFile(options.file, { requirePassword: options.requirePassword === true });
  } catch (err) {
    if (err instanceof StackFileError) fail([{ path: "", message: err.message }], json, new UsageError(err.message));
    if (err instanceof ConfigError) {
      const summary = `${options.file}: invalid stack config (${err.issues.length} problem${err.issues.length === 1 ? "" : "s"})`;
      fail(err.issues, json, new CheckFailed(json ? summary : `${options.file}: ${err.message}`));
    }
    throw err;
  }
  report(loaded, options.file, json);
}

export function registerConfigCommand(program: Command): void {
  program
    .command("config")
    .description("validate a stack's config offline and print it resolved with defaults")
    .requiredOption("--file <path>", "the stack file, e.g. stacks/Pulumi.cluster.yaml")
    .option("--json", "print JSON: the resolved config, or { ok: false, errors: [{ path, message }] }")
    .option("--require-password", "treat a missing password as an error, as `pulumi up` does")
    .action((options: ConfigOptions) => runConfigCommand(options));
}
