/**
 * Reading which alerts drills fired from a Prometheus's history (core/drill/alert-history.ts): each drill from its own
 * fault, an alert carried over from the drill before read as pending before the fault rather than as a new one; the
 * settle time from the server's own intervals; and the same against a real Prometheus (Debian's) whose rule fires on a
 * real target going away, read back from its ALERTS history.
 */
import { createServer, type Server } from "node:http";
import { connect, createServer as createTcpServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import {
  alertSettleMs,
  API_ATTEMPTS,
  DISCOVERY_UPDATE_MS,
  alertSnapshots,
  alertsPerDrill,
  durationMs,
  readAlertHistory,
} from "../../core/drill/alert-history.js";
import { alertsSeen } from "../../core/drill/alerts-seen.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { startPrometheus } from "../../harness/metrics/prometheus.js";
import { freePort } from "../../harness/local/ports.js";

const points = (from: number, to: number): Array<[number, string]> =>
  Array.from({ length: (to - from) / 2 + 1 }, (_, i) => [from + 2 * i, "1"]);

describe("alert history", () => {
  it("each drill's alerts from its own fault; one carried over from the drill before is pending before the fault", () => {
    const changed = { alertname: "ValkeyPrimaryChanged", severity: "info", pod: "valkey-1" };
    const down = { alertname: "ValkeyServerDown", severity: "warning", pod: "valkey-0" };
    const series = [
      { metric: { ...changed, alertstate: "firing" }, values: points(1006, 1150) },
      { metric: { ...down, alertstate: "pending" }, values: points(1204, 1210) },
    ];
    const snapshots = alertSnapshots(series, 1000, 1300, 2);
    const [first, second] = alertsPerDrill([1_000_000, 1_100_000], snapshots, 990_000, 1_300_000);
    const row = { pod: "valkey-1", severity: "info" };
    expect(first).toEqual([
      { alert: "ValkeyPrimaryChanged", ...row, pendingMs: 6000, firingMs: 6000, resolvedMs: null },
    ]);
    expect(second).toEqual([
      { alert: "ValkeyPrimaryChanged", ...row, pendingMs: -94_000, firingMs: -94_000, resolvedMs: 52_000 },
      {
        alert: "ValkeyServerDown",
        pod: "valkey-0",
        severity: "warning",
        pendingMs: 104_000,
        firingMs: null,
        resolvedMs: 112_000,
      },
    ]);
  });

  it("durations as Prometheus writes them; anything else refused by its text", () => {
    expect(["15s", "1m", "1m30s", "500ms", "2h"].map(durationMs)).toEqual([15_000, 60_000, 90_000, 500, 7_200_000]);
    for (const bad of ["", "15", "1 m", "15sec"])
      expect(() => durationMs(bad)).toThrow(`not a Prometheus duration: ${bad}`);
  });

  it("against a real Prometheus: the settle from its intervals, a rule firing on a target gone read back from ALERTS; a read whose first connection hangs asked again; a server that is not there or not Prometheus named", async () => {
    // A target that answers, then stops (its listener closed): `up == 0` fires TargetGone at once.
    let server: Server | undefined = createServer((_q, res) => res.end("x 1\n"));
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const rules = [
      "groups:",
      "  - name: t",
      "    rules:",
      "      - alert: TargetGone",
      "        expr: up == 0",
      "        labels: { severity: warning }",
    ].join("\n");
    const p = await startPrometheus([{ address: `127.0.0.1:${port}`, labels: { pod: "p-0" } }], rules);
    try {
      // Scrape and evaluation every second (harness/metrics/prometheus.ts): 2 x 1 s + 2 x 1 s.
      expect(await alertSettleMs(p.url)).toBe(DISCOVERY_UPDATE_MS + 4000);
      await pollUntil(async () => ((await p.query("up")).some((s) => s.value === 1) ? true : "not scraped yet"), {
        timeoutMs: 60_000,
        what: "the target scraped",
      });
      const faultAt = Date.now();
      await new Promise<void>((r) => server?.close(() => r()));
      server = undefined;
      await pollUntil(async () => ((await p.alerts()).some((a) => a.state === "firing") ? true : "not firing yet"), {
        timeoutMs: 60_000,
        what: "TargetGone firing",
      });
      const history = await readAlertHistory(p.url, faultAt - 5000, Date.now(), 1);
      const [seen] = [alertsSeen(history, faultAt)];
      expect(seen.map((a) => [a.alert, a.pod, a.severity, a.resolvedMs])).toEqual([
        ["TargetGone", "p-0", "warning", null],
      ]);
      expect(seen[0]?.firingMs).toBeGreaterThanOrEqual(0);
      // Through a forward whose first connection hangs (as an API server's port-forward did on a loaded node): the
      // first ask times out (10 s), the next one answers.
      const hang = await forwardHangingFirst(p.url);
      try {
        expect(await alertSettleMs(hang.url)).toBe(DISCOVERY_UPDATE_MS + 4000);
        // The held one, and the ones the retry opened (undici may open one more as the first is aborted).
        expect(hang.connections()).toBeGreaterThanOrEqual(2);
      } finally {
        hang.close();
      }
      const closed = await freePort();
      await expect(readAlertHistory(`http://127.0.0.1:${closed}`, 0, 1000, 1)).rejects.toThrow(
        `http://127.0.0.1:${closed}/api/v1/query_range: ECONNREFUSED (asked ${API_ATTEMPTS} times)`,
      );
      await expect(readAlertHistory(`${p.url}/nothing-here`, 0, 1000, 1)).rejects.toThrow(
        /nothing-here\/api\/v1\/query_range: HTTP 404/,
      );
    } finally {
      server?.close();
      await p.stop();
    }
  }, 120_000);
});

/** A TCP forward to `url`'s host:port that holds its first connection without a byte, then pipes every later one. */
async function forwardHangingFirst(
  url: string,
): Promise<{ url: string; connections: () => number; close: () => void }> {
  const target = new URL(url);
  let held: Socket | undefined;
  let n = 0;
  const server = createTcpServer((socket) => {
    n += 1;
    if (n === 1) {
      held = socket;
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}${target.pathname.replace(/\/+$/, "")}`,
    connections: () => n,
    close: () => {
      held?.destroy();
      server.close();
    },
  };
}
