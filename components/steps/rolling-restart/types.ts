/**
 * What RollingRestart's implementation needs from the outside world (real-deps.ts builds the real one; tests pass
 * fakes).
 */
import type { TopologyReport } from "../../../core/verify/verify-types.js";
import type { RollKubeApi } from "./kube-api.js";

export interface RollDeps {
  api: RollKubeApi;
  /** One verifier run on the pods as they are now (a failing report is returned, not thrown). */
  verify: () => Promise<TopologyReport>;
  /** `CLUSTER FAILOVER` on the member announced at `address`. */
  failover: (address: string) => Promise<void>;
  /**
   * Replication mode: undefined once every HAProxy counts every Sentinel naming the primary, else why not
   * (rolling-restart.ts RollOps.endpointsSettled).
   */
  endpointsSettled?: () => Promise<string | undefined>;
  /** Progress lines (the provider's log). */
  log?: (line: string) => void;
}
