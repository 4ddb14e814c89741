/**
 * What the AWS builders produce, sent through the real AWS CLI into a moto server the test starts
 * (moto validates IAM policy documents as IAM does, routes EventBridge events to SQS targets and
 * evaluates event patterns): every role's trust policy and inline policy (Karpenter's controller,
 * the backup and restore roles, the node role), the interruption queue with its policy and
 * retention, and Karpenter's five interruption rules with the queue as their target: each
 * message kind the pinned controller parses (its module's parsers) matches exactly its own rule
 * (each kind's event, put on the bus, reaches the queue exactly once: once per matching rule). Also AWS's size limits
 * that only `up` would hit (inline policies per role 10,240 characters, trust policy 2,048).
 * And subnet and security-group discovery: the EC2NodeClass's selector terms, as EC2 tag filters,
 * find exactly the private subnets the VPC builder tags and the cluster security group.
 * Not checked by moto: that the queue policy admits EventBridge (moto delivers regardless).
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  INTERRUPTION_MESSAGE_RETENTION_SECONDS,
  INTERRUPTION_RULES,
} from "../../components/aws/karpenter-interruption.js";
import { pollUntil } from "../../core/util/poll-until.js";
import { awsCli, jsonField as field, type AwsCli } from "../../stacks/aws-cli.js";
import { karpenterInterruptionEvents } from "../support/karpenter-module.js";
import { s3ToolsMissing, startMoto, type MotoServer } from "../support/moto-server.js";
import { buildVpcArgs, DISCOVERY_TAG_KEY } from "../../components/aws/vpc.js";
import { buildEc2NodeClass } from "../../components/aws/karpenter-manifests.js";
import { TEST_ACCOUNT, TEST_QUEUE_ARN, TEST_QUEUE_POLICY, TEST_REGION, TEST_ROLES } from "../support/iam-policies.js";

/** AWS IAM quotas: a role's inline policies together, and its trust policy (default), in characters. */
const INLINE_POLICIES_PER_ROLE_CHARS = 10_240;
const TRUST_POLICY_CHARS = 2_048;

const missing = s3ToolsMissing();
describe.skipIf(missing !== undefined)(
  "the AWS builders' output through the AWS CLI into moto (real processes)",
  () => {
    let moto: MotoServer;
    let cli: AwsCli;
    /** Runs a call that must succeed; its JSON. */
    const ok = (args: string[]): unknown => {
      const r = cli(args);
      if (!r.ok) throw new Error(`aws ${args.slice(0, 2).join(" ")}: ${r.error}`);
      return r.json;
    };

    beforeAll(async () => {
      moto = await startMoto("127.0.0.97");
      const env = { ...process.env, AWS_ACCESS_KEY_ID: "testing", AWS_SECRET_ACCESS_KEY: "testing" };
      cli = awsCli({ region: TEST_REGION, endpointUrl: moto.url }, ((
        _cmd: string,
        args: readonly string[],
        o: object,
      ) => spawnSync(process.env.AWS_CLI as string, args, { ...o, env })) as unknown as typeof spawnSync);
    }, 60_000);
    afterAll(async () => moto?.stop());

    it.each(TEST_ROLES.map((r) => [r.name, r] as const))(
      "role %s: IAM takes its trust and inline policies as written, within AWS's size limits",
      (_name, role) => {
        const trust = JSON.stringify(role.trust);
        expect(trust.length).toBeLessThanOrEqual(TRUST_POLICY_CHARS);
        ok(["iam", "create-role", "--role-name", role.name, "--assume-role-policy-document", trust]);
        let inlineChars = 0;
        for (const [policyName, doc] of Object.entries(role.inline)) {
          const text = JSON.stringify(doc);
          inlineChars += text.length;
          ok([
            "iam",
            "put-role-policy",
            "--role-name",
            role.name,
            "--policy-name",
            policyName,
            "--policy-document",
            text,
          ]);
          const stored = field(
            ok(["iam", "get-role-policy", "--role-name", role.name, "--policy-name", policyName]),
            "PolicyDocument",
          );
          expect(stored).toEqual(doc);
        }
        expect(inlineChars, "inline policies of the role, characters").toBeLessThanOrEqual(
          INLINE_POLICIES_PER_ROLE_CHARS,
        );
      },
    );

    it("IAM refuses a malformed policy (the check above can fail)", () => {
      const r = cli([
        "iam",
        "put-role-policy",
        "--role-name",
        "karpenter-controller",
        "--policy-name",
        "broken",
        "--policy-document",
        JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "ec2:*" }] }),
      ]);
      expect(r.ok).toBe(false);
      expect(r.ok ? "" : r.error).toMatch(/MalformedPolicyDocument/);
    });

    it("the interruption queue, its rules and targets: each message kind the controller parses reaches the queue once (one matching rule)", async () => {
      const url = String(
        field(
          ok([
            "sqs",
            "create-queue",
            "--queue-name",
            "valkey-test",
            "--attributes",
            JSON.stringify({
              MessageRetentionPeriod: String(INTERRUPTION_MESSAGE_RETENTION_SECONDS),
              Policy: JSON.stringify(TEST_QUEUE_POLICY),
            }),
          ]),
          "QueueUrl",
        ),
      );
      const attrs = field(
        ok(["sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "All"]),
        "Attributes",
      ) as Record<string, string>;
      expect(attrs.QueueArn).toBe(TEST_QUEUE_ARN);
      expect(attrs.MessageRetentionPeriod).toBe(String(INTERRUPTION_MESSAGE_RETENTION_SECONDS));
      expect(JSON.parse(attrs.Policy ?? "{}")).toEqual(TEST_QUEUE_POLICY);

      for (const rule of INTERRUPTION_RULES) {
        ok([
          "events",
          "put-rule",
          "--name",
          `valkey-test-${rule.part}`,
          "--event-pattern",
          JSON.stringify(rule.eventPattern),
        ]);
        ok([
          "events",
          "put-targets",
          "--rule",
          `valkey-test-${rule.part}`,
          "--targets",
          JSON.stringify([{ Id: "queue", Arn: TEST_QUEUE_ARN }]),
        ]);
      }
      const envelope = (source: string, detailType: string) => ({
        "version": "0",
        "id": "7bf73129-1428-4cd3-a780-95db273d1602",
        "detail-type": detailType,
        "source": source,
        "account": TEST_ACCOUNT,
        "time": "2026-11-29T00:00:00Z",
        "region": TEST_REGION,
        "resources": [`arn:aws:ec2:${TEST_REGION}:${TEST_ACCOUNT}:instance/i-0123456789abcdef0`],
        "detail": { "instance-id": "i-0123456789abcdef0" },
      });
      // Every message kind the pinned controller parses, put on the bus once: moto routes each event
      // to the queue once per rule that matches it, so a kind arriving exactly once matched exactly
      // one rule (moto 5.2.5 answers TestEventPattern with an empty body, so routing is the test).
      const kinds = karpenterInterruptionEvents();
      expect(kinds.length).toBe(INTERRUPTION_RULES.length);
      const entries = kinds.map((k) => {
        const e = envelope(k.source, k.detailType);
        return {
          Source: e.source,
          DetailType: e["detail-type"],
          Detail: JSON.stringify(e.detail),
          Resources: e.resources,
        };
      });
      expect(field(ok(["events", "put-events", "--entries", JSON.stringify(entries)]), "FailedEntryCount")).toBe(0);
      const received: Array<Record<string, unknown>> = [];
      const receive = () => {
        const messages = field(
          ok([
            "sqs",
            "receive-message",
            "--queue-url",
            url,
            "--max-number-of-messages",
            "10",
            "--wait-time-seconds",
            "1",
          ]),
          "Messages",
        );
        for (const m of Array.isArray(messages) ? (messages as Array<{ Body: string; ReceiptHandle: string }>) : []) {
          received.push(JSON.parse(m.Body) as Record<string, unknown>);
          ok(["sqs", "delete-message", "--queue-url", url, "--receipt-handle", m.ReceiptHandle]);
        }
      };
      await pollUntil(
        () => {
          receive();
          return Promise.resolve(received.length >= kinds.length || `${received.length} of ${kinds.length} events`);
        },
        { timeoutMs: 30_000, intervalMs: 200, what: "every kind's event in the interruption queue" },
      );
      receive(); // a second delivery of any kind (two rules matching it) would arrive with the first
      const count = (detailType: string) => received.filter((b) => b["detail-type"] === detailType).length;
      for (const k of kinds) expect(count(k.detailType), `${k.kind}: ${k.source} / ${k.detailType}`).toBe(1);
      expect(received).toHaveLength(kinds.length);
      const spot = received.find((b) => b["detail-type"] === "EC2 Spot Instance Interruption Warning");
      expect(spot?.source).toBe("aws.ec2");
      expect(spot?.detail).toEqual(envelope("aws.ec2", "x").detail);
    }, 120_000);

    it("the EC2NodeClass's selector terms find exactly the stack's private subnets (one per zone) and its cluster security group, not the public subnets nor another cluster's", () => {
      const zones = ["us-west-2a", "us-west-2b", "us-west-2c"];
      const specs = buildVpcArgs({ cidr: "10.0.0.0/16", zones, natGateways: "single", clusterName: "valkey-test" })
        .subnetSpecs as Array<{ name: string; tags: Record<string, string> }>;
      const tagsArg = (tags: Record<string, string>) =>
        JSON.stringify(Object.entries(tags).map(([Key, Value]) => ({ Key, Value })));
      const vpc = String(field(ok(["ec2", "create-vpc", "--cidr-block", "10.0.0.0/16"]), "Vpc", "VpcId"));
      const made: Record<string, string[]> = {};
      specs.forEach((spec, j) =>
        zones.forEach((zone, i) => {
          const id = String(
            field(
              ok([
                "ec2",
                "create-subnet",
                "--vpc-id",
                vpc,
                "--availability-zone",
                zone,
                "--cidr-block",
                `10.0.${j * 10 + i}.0/24`,
              ]),
              "Subnet",
              "SubnetId",
            ),
          );
          ok(["ec2", "create-tags", "--resources", id, "--tags", tagsArg(spec.tags)]);
          (made[spec.name] ??= []).push(id);
        }),
      );
      const other = String(field(ok(["ec2", "create-vpc", "--cidr-block", "10.1.0.0/16"]), "Vpc", "VpcId"));
      const decoy = String(
        field(ok(["ec2", "create-subnet", "--vpc-id", other, "--cidr-block", "10.1.0.0/24"]), "Subnet", "SubnetId"),
      );
      ok(["ec2", "create-tags", "--resources", decoy, "--tags", tagsArg({ [DISCOVERY_TAG_KEY]: "another-cluster" })]);
      const sg = (name: string, cluster: string) => {
        const id = String(
          field(
            ok(["ec2", "create-security-group", "--group-name", name, "--description", name, "--vpc-id", vpc]),
            "GroupId",
          ),
        );
        // As the program tags the cluster's security group (components/eks-cluster.ts).
        ok(["ec2", "create-tags", "--resources", id, "--tags", tagsArg({ [DISCOVERY_TAG_KEY]: cluster })]);
        return id;
      };
      const clusterSg = sg("valkey-test-cluster", "valkey-test");
      sg("another-cluster", "another-cluster");

      const nodeClass = buildEc2NodeClass({ role: "valkey-test-node", discoveryTag: "valkey-test" });
      // Karpenter turns each term's tags into EC2 tag filters (a "*" value: the key alone; none here).
      const filters = (term: { tags: Record<string, string> }) =>
        Object.entries(term.tags).map(([k, v]) => `Name=tag:${k},Values=${v}`);
      const subnets = nodeClass.spec.subnetSelectorTerms.flatMap((term) =>
        ((field(ok(["ec2", "describe-subnets", "--filters", ...filters(term)]), "Subnets") as unknown[]) ?? []).map(
          (x) => String(field(x, "SubnetId")),
        ),
      );
      expect(made.private).toHaveLength(zones.length);
      expect([...subnets].sort()).toEqual([...(made.private ?? [])].sort());
      const groups = nodeClass.spec.securityGroupSelectorTerms.flatMap((term) =>
        (
          (field(
            ok(["ec2", "describe-security-groups", "--filters", ...filters(term)]),
            "SecurityGroups",
          ) as unknown[]) ?? []
        ).map((x) => String(field(x, "GroupId"))),
      );
      expect(groups).toEqual([clusterSg]);
    }, 600_000); // a hang guard, not a speed bound: about 30 AWS CLI starts, each seconds of CPU on a loaded machine
  },
);
