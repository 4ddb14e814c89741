/**
 * `pulumi up` entry point: loads and validates the stack config (every problem by key path,
 * before any resource exists), then runs the program. Nothing happens at import time: Pulumi
 * calls the default export.
 */
import { loadPulumiConfig } from "./pulumi-config.js";
import { runProgram } from "./program.js";

export default function main(): Record<string, unknown> {
  const loaded = loadPulumiConfig();
  const out = runProgram({ config: loaded.config, password: loaded.passwordSecret });
  return { report: out.report, kubeconfig: out.kubeconfig, password: out.password };
}
