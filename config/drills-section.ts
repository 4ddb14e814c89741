/**
 * The `drills` section of the stack-file schema (sections.ts lists it): failure drills in the
 * deployed stack (components/steps/failure-drill/). Off by default: a drill deliberately breaks
 * the deployment.
 */
import { z } from "zod";
import { FAULTS, type Fault } from "../vocabulary/faults.js";
import { UNSUPPORTED_DEPLOYED_FAULTS } from "../vocabulary/faults.js";
import { versions } from "../versions.js";
import { count, flag, imageReference, runId, section, unique } from "./fields.js";

export const drillsSchema = section(
  {
    enabled: flag(false).describe(
      "Run failure drills after the benchmark: each fault deletes Valkey pods through the Kubernetes API under an in-cluster write load and measures until the topology verifier passes again. Off by default: a drill deliberately breaks the deployment.",
    ),
    faults: z
      .array(z.enum(FAULTS as readonly [Fault, ...Fault[]]))
      .min(1)
      .superRefine(unique("fault"))
      .superRefine((faults, ctx) =>
        faults.forEach((f, index) => {
          const why = UNSUPPORTED_DEPLOYED_FAULTS[f];
          if (why !== undefined)
            ctx.addIssue({ code: "custom", path: [index], message: `${f} cannot run in the deployed stack: ${why}` });
        }),
      )
      .default(["primary"])
      .describe(
        "Faults, in order: primary (crash the primary's pod: its server stopped at once by an exec of `SHUTDOWN NOSAVE NOW FORCE`, then the pod deleted, grace 0; a grace-0 deletion alone still runs the preStop hand-over for up to 1 s on a real kubelet; needs pods/exec), replica (a replica's pod, crashed alike), zone (cordon one zone's nodes, crash its members, delete its Sentinels, hold zoneDownS, uncordon), all (every member pod, crashed alike), switchover (evict the primary's pod through the Eviction API as a node drain does: its PodDisruptionBudget honoured, deleted with its grace period, preStop runs; needs pods/eviction), crash-restart (exec `SHUTDOWN NOSAVE NOW FORCE` in the primary's container: the kubelet restarts it in place; needs pods/exec), lost-volume (delete the primary's PVC, then crash its pod), freeze (SIGSTOP the primary's valkey-server, SIGCONT after failure detection + 5 s) and partition (DROP every packet between the primary and the other members and Sentinels for as long; clients still reach it): both through a privileged pod with hostPID on the primary's node running the Valkey image (the namespace must admit privileged pods; partition uses the node's iptables). upgrade is refused (a real `pulumi up` with a new image is the deployed upgrade).",
      ),
    rate: count(1, 50).describe(
      "Writes per second of each load stream (replication: two streams, Sentinel-aware and through the write Service).",
    ),
    preFaultS: count(1, 10).describe(
      "Seconds of load before the fault (the 'before' latency window), counted from the load's first acknowledgement on every stream.",
    ),
    loadS: count(1, 90).describe(
      "Seconds the load Job writes for, from its first acknowledgement on every stream; the fault and the recovery should fall inside it.",
    ),
    zoneDownS: count(0, 30).describe(
      "zone fault: seconds the zone stays cordoned (its pods Pending) before it is uncordoned.",
    ),
    timeoutS: count(1, 600).describe(
      "Bound on the recovery (fault → verifier passing, zones included); past it the drill fails `pulumi up`, naming the fault.",
    ),
    image: imageReference(versions.DRILL_LOAD_IMAGE).describe(
      "Image of the load pod: any Node ≥ 22 image that runs `node` as uid 1000 (the bundled load needs nothing else), same forms as `valkey.image`. The default is ECR Public's mirror of the Docker official image; its tag is not verified from here.",
    ),
    alertsFrom: z
      .url({
        protocol: /^https?$/,
        error: "must be an http(s) URL of a Prometheus HTTP API, e.g. http://localhost:9090",
      })
      .optional()
      .describe(
        "A Prometheus HTTP API (its base URL, e.g. http://localhost:9090 through a port-forward) reachable from where `pulumi up` runs, evaluating this stack's rules (report.metrics.rules, or the PrometheusRule). With it, once the last drill healed, its discovery's 5 s update and two of its scrape and evaluation intervals passed (at most 2 min), each drill row gets `alerts`: every alert its ALERTS history shows pending or firing around that drill, in seconds from the fault (drills.csv's alerts column). Unset: no alerts recorded. Kept in the stack's state: no credentials in it.",
      ),
    runId: runId("Change it (any new value, e.g. a date) to run the drills again on an unchanged stack."),
  },
  "Failure drills in the deployed stack (post-deploy, after the benchmark).",
);
