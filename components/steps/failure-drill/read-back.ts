/**
 * After recovery, every acknowledged key is read back through the checks' connector (the same
 * way the topology check reaches the pods; read-back latency does not matter). Replication: GET
 * from the healed primary. Cluster: GET from every primary; the slot's owner answers (a value or
 * nil) while the others answer MOVED, so the owner's answer is the key's value.
 */
import type { Redis } from "ioredis";
import { readInBatches } from "../../../core/drill/target.js";
import type { Connector } from "../../../core/topology/connector.js";
import { parseEndpoint } from "../../../vocabulary/endpoint.js";
import type { TopologyCheckReport } from "../../../core/verify/check-report.js";

async function getMany(client: Redis, keys: string[]): Promise<{ value: string | null; moved: boolean }[]> {
  const results = (await client.pipeline(keys.map((k) => ["get", k])).exec()) ?? [];
  return keys.map((k, i) => {
    const [err, value] = results[i] ?? [new Error(`no reply for ${k}`), null];
    if (err !== null) {
      if (/^(MOVED|ASK) /.test(err.message)) return { value: null, moved: true };
      throw new Error(`reading back ${k}: ${err.message}`);
    }
    return { value: (value as string | null) ?? null, moved: false };
  });
}

/** key → value read back (undefined: missing), through `connector` to the primaries of `healed`. */
export async function readBackKeys(
  keys: readonly string[],
  healed: TopologyCheckReport,
  connector: Connector,
): Promise<Map<string, string | undefined>> {
  const primaries = healed.shards.map((s) => s.primary.address);
  if (primaries.length === 0) throw new Error("the healed topology report names no primary to read back from");
  const clients = await Promise.all(primaries.map((a) => connector.connect(parseEndpoint(a))));
  try {
    return await readInBatches(keys, async (batch) => {
      const answers = await Promise.all(clients.map((c) => getMany(c, batch)));
      return batch.map((k, i) => {
        const owners = answers.map((a) => a[i]!).filter((a) => !a.moved);
        if (owners.length === 0) throw new Error(`no primary owns the slot of ${k} (every one answered MOVED)`);
        return owners.find((o) => o.value !== null)?.value ?? null;
      });
    });
  } finally {
    clients.forEach((c) => c.disconnect());
  }
}
