/**
 * Refreshes prices.json's us-east-1 EC2 figures from Karpenter's generated price table in the Go
 * module github.com/aws/karpenter-provider-aws at versions.env KARPENTER_CHART_VERSION, for every
 * instance type config/instance-types.ts knows (INSTANCE_CAPACITY):
 *
 *   npx tsx benchmarks/cost/update-prices.ts           print the drift (nothing written)
 *   npx tsx benchmarks/cost/update-prices.ts --write   rewrite prices.json
 *   npx tsx benchmarks/cost/update-prices.ts --check   exit 1 when prices.json drifted
 *
 * The module directory is VALKEY_ON_EKS_KARPENTER_MODULE_DIR when set, else what
 * .ci/karpenter-module.sh prints (it downloads the module from the Go module proxy when missing).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { INSTANCE_CAPACITY } from "../../config/instance-types.js";
import { versions } from "../../versions.js";
import {
  ec2PriceDrift,
  KARPENTER_PRICE_FILE,
  karpenterEc2Figures,
  karpenterSourceEntry,
  parseKarpenterPrices,
  withKarpenterPrices,
} from "./karpenter-prices.js";
import { loadPriceTable, parsePriceTable, PRICES_FILE } from "./prices.js";

function moduleDir(): string {
  const fromEnv = process.env.VALKEY_ON_EKS_KARPENTER_MODULE_DIR;
  if (fromEnv) return fromEnv;
  const script = fileURLToPath(new URL("../../.ci/karpenter-module.sh", import.meta.url));
  try {
    return execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  } catch {
    throw new Error(
      "the Karpenter Go module is needed: set VALKEY_ON_EKS_KARPENTER_MODULE_DIR to its directory, or see the error of .ci/karpenter-module.sh above",
    );
  }
}

function main(args: string[]): number {
  const version = versions.KARPENTER_CHART_VERSION;
  const file = join(moduleDir(), KARPENTER_PRICE_FILE);
  const prices = parseKarpenterPrices(readFileSync(file, "utf8"), file);
  const figures = karpenterEc2Figures(prices, Object.keys(INSTANCE_CAPACITY), version);
  const table = loadPriceTable();
  const drift = ec2PriceDrift(table, figures);
  if (args.includes("--write")) {
    const next = parsePriceTable(
      withKarpenterPrices(
        table,
        figures,
        karpenterSourceEntry(version, prices.generatedAt, new Date().toISOString().slice(0, 10)),
      ),
    );
    writeFileSync(PRICES_FILE, `${JSON.stringify(next, null, 2)}\n`);
    console.log(
      `prices.json: ${drift.length} us-east-1 EC2 figure(s) changed (Karpenter v${version}, generated at ${prices.generatedAt})`,
    );
    for (const line of drift) console.log(`  ${line}`);
    return 0;
  }
  if (drift.length === 0) {
    console.log(`prices.json matches Karpenter v${version}'s price table (generated at ${prices.generatedAt})`);
    return 0;
  }
  console.log(`prices.json differs from Karpenter v${version}'s price table (generated at ${prices.generatedAt}):`);
  for (const line of drift) console.log(`  ${line}`);
  return args.includes("--check") ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
