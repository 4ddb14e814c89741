/**
 * Every alert the stack ships, in the order its rule files list them (rule-file.ts renders them
 * per mode). What each means and what to do is in docs/metrics.md, generated from the same list.
 */
import type { AlertDefinition } from "./alert-definition.js";
import {
  AOF_REWRITE,
  AOF_WRITE,
  EVERY_MEMBER_RESTARTED,
  EVICTIONS,
  FORK_SLOW,
  MEMORY_NEAR_MAX,
  RDB_SAVE,
  REJECTED_CONNECTIONS,
  SERVER_DOWN,
} from "./alerts-server.js";
import {
  CLUSTER_STATE,
  ENDPOINT_EMPTY,
  LAG_OVER_BOUND,
  LINK_DOWN,
  NO_PRIMARY,
  PRIMARY_CHANGED,
  QUORUM_LOST,
  SENTINELS_DISAGREE,
  SLOTS_NOT_OK,
  TWO_PRIMARIES,
} from "./alerts-topology.js";
import { NO_REPLICA_ELSEWHERE } from "./alerts-zones.js";

export const ALERTS: readonly AlertDefinition[] = [
  NO_PRIMARY,
  TWO_PRIMARIES,
  CLUSTER_STATE,
  SLOTS_NOT_OK,
  QUORUM_LOST,
  SENTINELS_DISAGREE,
  ENDPOINT_EMPTY,
  LINK_DOWN,
  LAG_OVER_BOUND,
  NO_REPLICA_ELSEWHERE,
  PRIMARY_CHANGED,
  EVERY_MEMBER_RESTARTED,
  SERVER_DOWN,
  MEMORY_NEAR_MAX,
  EVICTIONS,
  REJECTED_CONNECTIONS,
  AOF_WRITE,
  AOF_REWRITE,
  RDB_SAVE,
  FORK_SLOW,
];
