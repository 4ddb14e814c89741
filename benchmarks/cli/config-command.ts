import type { Command } from "commander";

// PLACEHOLDER: being written; replaced by the real 'config' subcommand.
export function registerConfigCommand(program: Command): void {
  program.command("config").description("(not built yet)").action(() => {
    throw new Error("vbench config is not built yet");
  });
}
