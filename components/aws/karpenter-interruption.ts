/**
 * Karpenter's interruption handling: the SQS queue's policy and the five EventBridge rules
 * Karpenter v1.14 documents (scheduled change, spot interruption, rebalance recommendation,
 * instance state change, capacity reservation interruption), each targeting the queue.
 * tests/components/karpenter-iam.test.ts compares the patterns with the messages the pinned
 * controller parses (pkg/controllers/interruption/messages/).
 */
import type { PolicyDocument } from "./iam.js";

/** One EventBridge rule: its name suffix, description and event pattern. */
export interface InterruptionRule {
  part: string;
  description: string;
  eventPattern: { "source": string[]; "detail-type": string[] };
}

export const INTERRUPTION_RULES: readonly InterruptionRule[] = [
  {
    part: "scheduled-change",
    description: "AWS Health scheduled changes (maintenance events)",
    eventPattern: { "source": ["aws.health"], "detail-type": ["AWS Health Event"] },
  },
  {
    part: "spot-interruption",
    description: "EC2 Spot interruption warnings",
    eventPattern: { "source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"] },
  },
  {
    part: "rebalance",
    description: "EC2 instance rebalance recommendations",
    eventPattern: { "source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"] },
  },
  {
    part: "instance-state-change",
    description: "EC2 instance state changes",
    eventPattern: { "source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"] },
  },
  {
    part: "capacity-reservation-interruption",
    description: "EC2 capacity reservation interruption warnings",
    eventPattern: { "source": ["aws.ec2"], "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"] },
  },
];

/** Messages Karpenter cannot act on within 5 minutes are stale (the documented retention). */
export const INTERRUPTION_MESSAGE_RETENTION_SECONDS = 300;

/** Lets EventBridge and SQS send to the queue, and denies any access over plain HTTP. */
export function buildInterruptionQueuePolicy(queueArn: string): PolicyDocument {
  return {
    Version: "2012-10-17",
    Id: "EC2InterruptionPolicy",
    Statement: [
      {
        Sid: "AllowEventBridge",
        Effect: "Allow",
        Principal: { Service: ["events.amazonaws.com", "sqs.amazonaws.com"] },
        Action: "sqs:SendMessage",
        Resource: queueArn,
      },
      {
        Sid: "DenyHTTP",
        Effect: "Deny",
        Principal: "*",
        Action: "sqs:*",
        Resource: queueArn,
        Condition: { Bool: { "aws:SecureTransport": false } },
      },
    ],
  };
}
