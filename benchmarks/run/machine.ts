/**
 * The machine a measurement ran on, declared once: run.json (report/run-meta.ts) and the scale ladder's file
 * (scale/ladder-file.ts) record it, the report shows it (model.ts MachineView).
 */
import { cpus, release, totalmem, type as osType } from "node:os";
import { z } from "zod";

export const machineSchema = z.object({
  cpuModel: z.string(),
  cpus: z.number().int().positive(),
  memoryGiB: z.number().positive(),
  os: z.string(),
  node: z.string(),
});

export type MachineView = z.infer<typeof machineSchema>;

/** This machine, as the report shows it. */
export function captureMachine(): MachineView {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() || "unknown",
    cpus: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${osType()} ${release()} ${process.arch}`,
    node: process.version,
  };
}
