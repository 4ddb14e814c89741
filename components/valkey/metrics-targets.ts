/**
 * What a release serves to a Prometheus, per component: the labels that select its pods, the
 * named container port and the path. One list, read by the stack report's `metrics` part
 * (stacks/metrics-output.ts) and by the PodMonitors (monitoring.ts). Pure.
 */
import type { ValkeyMode } from "../../config/types.js";
import type { Component } from "../../core/metrics/targets.js";
import { EXPORTER_METRICS_PATH } from "../../pod/exporter.js";
import { METRICS_PATH } from "../../pod/haproxy-checks.js";
import { releaseLabels } from "../shared.js";
import { HAPROXY_STATUS_PORT_NAME, haproxyLabels } from "./haproxy-manifests.js";
import { EXPORTER_PORT_NAME } from "./metrics-pod.js";
import { sentinelLabels } from "./sentinel-manifests.js";

export interface ScrapeTarget {
  component: Component;
  /** The labels every pod of the component carries (and no other pod of the release). */
  labels: Record<string, string>;
  /** The container port serving the metrics, by name. */
  portName: string;
  path: string;
}

/** The scraped components of a release: its members, and in replication mode its Sentinels and HAProxy. */
export function scrapeTargets(mode: ValkeyMode, release: string): ScrapeTarget[] {
  const members: ScrapeTarget = {
    component: "valkey",
    labels: releaseLabels(release),
    portName: EXPORTER_PORT_NAME,
    path: EXPORTER_METRICS_PATH,
  };
  if (mode === "cluster") return [members];
  return [
    members,
    {
      component: "sentinel",
      labels: sentinelLabels(release),
      portName: EXPORTER_PORT_NAME,
      path: EXPORTER_METRICS_PATH,
    },
    { component: "haproxy", labels: haproxyLabels(release), portName: HAPROXY_STATUS_PORT_NAME, path: METRICS_PATH },
  ];
}
