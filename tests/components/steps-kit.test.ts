/**
 * The post-deploy step kit (components/steps/kit/): one field list gives the component args'
 * defaults and secrecy, the provider's parser (messages name the key, never the value), the diff
 * keys and the secret keys; every run stamps its outputs anew.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  nonEmptyString,
  parserOf,
  rerun,
  rerunKeys,
  secret,
  secretKeys,
  setting,
  wholeNumber,
} from "../../components/steps/kit/inputs.js";
import { resourceInputs } from "../../components/steps/kit/resource-inputs.js";
import { dynamicProtocol } from "../../components/steps/kit/protocol.js";
import { declareStep, output } from "../../components/steps/kit/step.js";
import { bootstrapStep } from "../../components/steps/cluster-bootstrap/declaration.js";
import { checkStep } from "../../components/steps/topology-check/declaration.js";
import { resultsStep } from "../../components/steps/benchmark-results/declaration.js";

const fields = {
  name: rerun(nonEmptyString()),
  token: secret(nonEmptyString()),
  retries: setting(wholeNumber(1).default(3)),
  label: rerun(nonEmptyString().optional()),
  flag: rerun(z.boolean().default(true)),
};

describe("step inputs from one field list", () => {
  it("gives the diff keys and secret keys by role, in declaration order", () => {
    expect(rerunKeys(fields)).toEqual(["name", "label", "flag"]);
    expect(secretKeys(fields)).toEqual(["token"]);
  });

  it("the real steps: secrets are kubeconfig/password, bounds re-run nothing, runId re-runs", () => {
    expect(secretKeys(bootstrapStep.fields).sort()).toEqual(["kubeconfig", "password"]);
    expect(rerunKeys(bootstrapStep.fields).sort()).toEqual([
      "connector",
      "context",
      "expectedPods",
      "headlessService",
      "namespace",
      "primaries",
      "replicasPerPrimary",
      "selector",
    ]);
    expect(rerunKeys(checkStep.fields).sort()).toEqual([
      "connector",
      "context",
      "countKeys",
      "expect",
      "headlessService",
      "mode",
      "namespace",
      "replicaLagBytes",
      "runId",
      "selector",
      "sentinel",
      "triggers",
    ]);
    expect(secretKeys(resultsStep.fields)).toEqual(["kubeconfig"]);
    expect(rerunKeys(resultsStep.fields)).toEqual([
      "namespace",
      "jobName",
      "jobUid",
      "mode",
      "workload",
      "serverVersion",
      "image",
      "timestamp",
      "runId",
      "clientPods",
    ]);
  });

  it("parses with defaults, treats null and empty optional values as absent, and names the faulty key only", () => {
    const parse = parserOf(fields);
    expect(parse({ name: "a", token: "t", label: "", extra: 1 })).toEqual({
      name: "a",
      token: "t",
      retries: 3,
      label: undefined,
      flag: true,
    });
    expect(parse({ name: "a", token: "t", label: null, retries: 7 })).toMatchObject({ label: undefined, retries: 7 });
    expect(() => parse({ name: "a", token: "t", retries: 0 })).toThrow("input 'retries' must be a whole number ≥ 1");
    expect(() => parse({ name: "a", token: "" })).toThrow("input 'token' must be a non-empty string");
    let message = "";
    try {
      parse({ name: 42, token: "SECRET-VALUE" });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe("input 'name' must be a non-empty string");
  });

  it("resource inputs: schema defaults filled in, secret fields wrapped, absent optionals left undefined", async () => {
    const inputs = resourceInputs(fields, { name: "a", token: "t" });
    expect(inputs.retries).toBe(3);
    expect(inputs.flag).toBe(true);
    expect(inputs.label).toBeUndefined();
    expect(pulumi.Output.isInstance(inputs.token)).toBe(true);
    expect(await pulumi.isSecret(inputs.token as pulumi.Output<string>)).toBe(true);
  });
});

describe("a step's declaration", () => {
  it("a run must return every declared output: one it never sets does not typecheck", () => {
    const step = declareStep({ type: "T", fields: {}, outputs: { a: output<number>(), b: output<string>() } });
    // @ts-expect-error -- `b` is declared but this run never sets it.
    dynamicProtocol(step, { run: () => Promise.resolve({ a: 1 }), idOf: () => "x" });
    expect(step.outputKeys).toEqual(["a", "b"]);
  });

  it("a step that follows others gets the `triggers` rerun field; runStamp is every step's, not declared", () => {
    expect(declareStep({ type: "F", follows: true, fields, outputs: {} }).rerunKeys).toEqual([
      "name",
      "label",
      "flag",
      "triggers",
    ]);
    expect(declareStep({ type: "N", fields, outputs: {} }).rerunKeys).toEqual(["name", "label", "flag"]);
    expect(() => declareStep({ type: "R", fields, outputs: { runStamp: output<string>() } })).toThrow(
      "step R: runStamp is every step's output",
    );
  });
});

describe("the dynamic protocol built from the fields", () => {
  const runs: unknown[] = [];
  const step = declareStep({ type: "Test", fields, outputs: { answer: output<number>() } });
  const impl = dynamicProtocol(step, {
    run: (i) => {
      runs.push(i);
      return Promise.resolve({ answer: i.retries * 2 });
    },
    idOf: (i) => i.name,
  });

  it("create/update run the step, echo non-secret inputs, and stamp every run anew", async () => {
    const a = await impl.create({ name: "a", token: "SECRET", retries: 2 });
    expect(a.id).toBe("a");
    expect(a.outs).toMatchObject({ name: "a", retries: 2, answer: 4 });
    expect(a.outs).not.toHaveProperty("token");
    expect(typeof a.outs.runStamp).toBe("string");
    const b = await impl.update("a", a.outs, { name: "a", token: "SECRET", retries: 2, label: "x" });
    expect(b.outs.runStamp).not.toBe(a.outs.runStamp);
    expect(runs).toHaveLength(2);
  });

  it("diffs over the rerun keys only: a new token or retry bound changes nothing", () => {
    const olds = { name: "a", retries: 2, runStamp: "old" };
    expect(impl.diff("a", olds, { name: "a", token: "other", retries: 9 })).toEqual({ changes: false, replaces: [] });
    expect(impl.diff("a", olds, { name: "b", token: "other", retries: 2 }).changes).toBe(true);
  });
});
