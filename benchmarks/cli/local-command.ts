import type { Command } from "commander";

// PLACEHOLDER: being written; replaced by the real 'local' subcommand.
export function registerLocalCommand(program: Command): void {
  program.command("local").description("(not built yet)").action(() => {
    throw new Error("vbench local is not built yet");
  });
}
