/**
 * What the tests expect the live part of a deployed cluster member's valkey.conf to be (the keys
 * pod/conf-directives.ts classifies live, as the member conf renders them), written once for the
 * classification, real-server and program tests.
 */
export const CLUSTER_MEMBER_LIVE_KEYS = [
  "appendfsync",
  "appendonly",
  "cluster-node-timeout",
  "cluster-preferred-endpoint-type",
  "cluster-require-full-coverage",
  "maxmemory",
  "maxmemory-policy",
  "protected-mode",
  "repl-diskless-sync-delay",
  "save",
] as const;
