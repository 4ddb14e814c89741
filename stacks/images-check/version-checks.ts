/**
 * What each image must answer about itself, by role: the binary the stack runs from it, its version
 * against the tag (a tag that names another version than the image holds is a finding), and the
 * floors the stack depends on. Pure: the command to run and the judge of its output.
 */
import type { ImageRole, StackImage } from "./images.js";
import { tagVersion } from "./images.js";

export interface VersionCheck {
  name: string;
  entrypoint: string;
  args: string[];
  /** undefined = passed; else what is wrong, from the output. */
  judge: (output: string) => string | undefined;
}

/** The first AWS CLI v2 that reads EKS Pod Identity credentials (the backup's and restore's role). */
export const AWS_CLI_FLOOR = "2.15.0";

const cmp = (a: string, b: string): number => {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
};

/** The output names the tag's version (`found` pulls it out), or says which it holds instead. */
function versionIs(tag: string | undefined, found: RegExp, what: string) {
  return (out: string): string | undefined => {
    const v = found.exec(out)?.[1];
    if (v === undefined) return `no ${what} version in its output: ${JSON.stringify(out.trim().slice(0, 200))}`;
    if (tag === undefined || v === tag || v.startsWith(`${tag}.`) || v.startsWith(`${tag}-`)) return undefined;
    return `the tag says ${tag}, the image holds ${what} ${v}`;
  };
}

const answers = (out: string): string | undefined => (out.trim() === "" ? "printed nothing" : undefined);

function checksOf(role: ImageRole, tag: string | undefined): VersionCheck[] {
  switch (role) {
    case "valkey":
      return [
        {
          name: "valkey-server",
          entrypoint: "valkey-server",
          args: ["--version"],
          judge: versionIs(tag, /v=(\S+)/, "Valkey"),
        },
        { name: "valkey-cli", entrypoint: "valkey-cli", args: ["--version"], judge: answers },
        { name: "valkey-benchmark", entrypoint: "valkey-benchmark", args: ["--version"], judge: answers },
      ];
    case "haproxy":
      return [
        {
          name: "haproxy",
          entrypoint: "haproxy",
          args: ["-v"],
          judge: versionIs(tag, /version (\d[\w.]*)/i, "HAProxy"),
        },
      ];
    case "node":
      return [{ name: "node", entrypoint: "node", args: ["--version"], judge: versionIs(tag, /v(\d[\w.]*)/, "Node") }];
    case "exporter":
      return [
        {
          name: "redis_exporter",
          entrypoint: "/redis_exporter",
          args: ["--version"],
          judge: versionIs(tag, /v?(\d+\.\d+\.\d+)/, "redis_exporter"),
        },
      ];
    case "aws-cli":
      return [
        {
          name: "aws",
          entrypoint: "aws",
          args: ["--version"],
          judge: (out) => {
            const v = /aws-cli\/(\d+\.\d+\.\d+)/.exec(out)?.[1];
            if (v !== undefined && cmp(v, AWS_CLI_FLOOR) < 0)
              return `aws-cli ${v} is older than ${AWS_CLI_FLOOR}, the first that reads EKS Pod Identity credentials`;
            return versionIs(tag, /aws-cli\/(\S+)/, "aws-cli")(out);
          },
        },
      ];
    case "loadgen":
      return [{ name: "vload", entrypoint: "/vload", args: ["version"], judge: answers }];
  }
}

/** The checks an image gets, from its role and tag. */
export function versionChecks(image: StackImage): VersionCheck[] {
  return checksOf(image.role, tagVersion(image.ref));
}
