import type { Command } from "commander";

// PLACEHOLDER: being written; replaced by the real 'verify' subcommand.
export function registerVerifyCommand(program: Command): void {
  program.command("verify").description("(not built yet)").action(() => {
    throw new Error("vbench verify is not built yet");
  });
}
