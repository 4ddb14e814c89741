import { describe, expect, it } from "vitest";
import { alertsSeen, renderAlertsSeen, type AlertSample } from "../../core/drill/alerts-seen.js";

const a = (name: string, state: AlertSample["state"], pod?: string, severity = "critical"): AlertSample => ({
  name,
  state,
  labels: { alertname: name, severity, ...(pod === undefined ? {} : { pod }) },
});

describe("alertsSeen: one row per alert and pod, times from the fault", () => {
  it("pending, then firing, then gone: each time is the first sample that showed it", () => {
    const rows = alertsSeen(
      [
        { at: 900, alerts: [] },
        { at: 1500, alerts: [a("ValkeyNoPrimary", "pending")] },
        { at: 2000, alerts: [a("ValkeyNoPrimary", "firing")] },
        { at: 2500, alerts: [a("ValkeyNoPrimary", "firing")] },
        { at: 3000, alerts: [] },
      ],
      1000,
    );
    expect(rows).toEqual([
      { alert: "ValkeyNoPrimary", severity: "critical", pendingMs: 500, firingMs: 1000, resolvedMs: 2000 },
    ]);
  });

  it("pending only never fires; still active at the last sample is unresolved; pods are kept apart", () => {
    const rows = alertsSeen(
      [
        { at: 1000, alerts: [a("ValkeyServerDown", "pending", "valkey-0", "warning")] },
        { at: 2000, alerts: [a("ValkeyPrimaryChanged", "firing", "valkey-1", "info")] },
        {
          at: 3000,
          alerts: [
            a("ValkeyPrimaryChanged", "firing", "valkey-1", "info"),
            a("ValkeyServerDown", "pending", "valkey-2"),
          ],
        },
      ],
      1000,
    );
    expect(rows.map((r) => [r.alert, r.pod, r.pendingMs, r.firingMs, r.resolvedMs])).toEqual([
      ["ValkeyServerDown", "valkey-0", 0, null, 1000],
      ["ValkeyPrimaryChanged", "valkey-1", 1000, 1000, null],
      ["ValkeyServerDown", "valkey-2", 2000, null, null],
    ]);
  });

  it("an alert that goes and comes back is a second episode, unresolved while back", () => {
    const rows = alertsSeen(
      [
        { at: 3000, alerts: [a("X", "firing")] },
        { at: 1000, alerts: [a("X", "firing")] },
        { at: 2000, alerts: [] },
      ],
      0,
    );
    expect(rows).toEqual([
      // Active at the first sample: it began no later than that (the window can say no more).
      { alert: "X", severity: "critical", pendingMs: 1000, firingMs: 1000, resolvedMs: 2000, activeAtStart: true },
      { alert: "X", severity: "critical", pendingMs: 3000, firingMs: 3000, resolvedMs: null },
    ]);
  });

  it("renders each row, and says so when nothing was active", () => {
    expect(renderAlertsSeen([])).toBe("no alert pending or firing");
    expect(
      renderAlertsSeen([
        {
          alert: "ValkeyPrimaryChanged",
          pod: "valkey-1",
          severity: "info",
          pendingMs: -200,
          firingMs: 3200,
          resolvedMs: null,
        },
      ]),
    ).toBe("ValkeyPrimaryChanged (valkey-1) info: pending −0.2 s, firing +3.2 s, still active at the end");
    expect(
      renderAlertsSeen([
        {
          alert: "ValkeyForkSlow",
          pod: "valkey-0",
          severity: "warning",
          pendingMs: -2800,
          firingMs: -2800,
          resolvedMs: 3200,
          activeAtStart: true,
        },
      ]),
    ).toBe(
      "ValkeyForkSlow (valkey-0) warning: already active at the first sample −2.8 s, firing by −2.8 s, resolved +3.2 s",
    );
  });
});
