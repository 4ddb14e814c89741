/**
 * FailureDrill's serialized provider in a plain node process (as Pulumi's dynamic-provider
 * process runs it): it loads the implementation through the kit's tsx shell, diffs on the drill
 * settings, and refuses bad inputs naming the key, before touching any cluster.
 */
import { describe, expect, it } from "vitest";
import { runSerializedProvider, serializeProviderUnderTsx } from "../support/serialized-provider.js";

describe("the FailureDrill provider, serialized, in a plain node process", () => {
  it("diffs on the drill settings (not on timeoutS) and refuses an unknown fault naming the key", async () => {
    const text = serializeProviderUnderTsx("components/steps/failure-drill/component.ts", "failureDrillProvider");
    expect(text).toContain("failure-drill/implementation.ts");
    const out = await runSerializedProvider(text, [
      `const same = { namespace: "v", selector: "a=b", faults: ["primary"], rate: 50, timeoutS: 600 };`,
      `const bad = { kubeconfig: "k", namespace: "v", selector: "a=b", mode: "cluster", faults: ["network"], rate: 50, preFaultS: 10, loadS: 90, image: "node:24", loadTarget: { host: "h", port: 6379 }, placement: {} };`,
      `Promise.all([p.diff("id", same, same), p.diff("id", same, { ...same, rate: 60 }), p.diff("id", same, { ...same, timeoutS: 60 }), p.create(bad).then(() => "created", (e) => String(e.message))])`,
      `  .then((r) => process.stdout.write(JSON.stringify(r)), (e) => { process.stderr.write(String(e)); process.exit(1); });`,
    ]);
    const [unchanged, rate, timeout, refused] = JSON.parse(out) as [
      unknown,
      { changes: boolean },
      { changes: boolean },
      string,
    ];
    expect(unchanged).toEqual({ changes: false, replaces: [] });
    expect(rate.changes).toBe(true);
    expect(timeout.changes).toBe(false);
    expect(refused).toMatch(/input 'faults\.0' must be one of primary, replica, zone, all, switchover/);
  }, 60_000);
});
