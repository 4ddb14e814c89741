/**
 * The building blocks of the stack-file schema (sections.ts): the project name, the value
 * patterns (regions, zones, CIDRs, instance types, IAM ARNs), quantities, counts, flags, strict
 * sections whose own defaults apply when left out, and list uniqueness.
 */
import { z } from "zod";
import { isGravitonFamily } from "./instance-types.js";
import { parseCpuQuantity, parseMemoryQuantity, type QuantityInput } from "./quantity.js";

/** The Pulumi project name: stack keys are `valkey-on-eks:<section>`. */
export const PROJECT = "valkey-on-eks";

export const REGION_RE = /^[a-z]{2}(-gov)?-[a-z]+-\d$/;
export const ZONE_RE = /^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/;
export const DNS_LABEL_RE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const CIDR_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
export const INSTANCE_TYPE_RE = /^([a-z]+\d+[a-z]*)\.([a-z0-9]+)$/;
export const IAM_PRINCIPAL_RE = /^arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]{1,512}$/;
export const IAM_ROLE_ARN_RE = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;

export function quantityOf(kind: "CPU" | "memory") {
  const parse = kind === "CPU" ? parseCpuQuantity : parseMemoryQuantity;
  return z
    .union([z.string(), z.number()], {
      error: `must be a Kubernetes ${kind} quantity (e.g. ${kind === "CPU" ? '"1", "500m"' : '"12Gi", "512Mi"'})`,
    })
    .superRefine((value: QuantityInput, ctx) => {
      try {
        if (parse(value) <= 0)
          ctx.addIssue({ code: "custom", message: `must be greater than zero (got ${JSON.stringify(value)})` });
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    })
    .transform((value) => String(value));
}

export function quantity(kind: "CPU" | "memory", fallback: string) {
  return quantityOf(kind)
    .default(fallback)
    .meta({ typeLabel: `${kind} quantity` });
}

/** A quantity that, left out, takes another key's value (`sameAs`, resolved in resolve.ts). */
export const quantityLike = (kind: "CPU" | "memory", sameAs: string) =>
  quantityOf(kind)
    .optional()
    .meta({ typeLabel: `${kind} quantity`, defaultText: `= ${sameAs}` });

/** A CPU quantity ("1", "500m", 2), kept as written (a string). */
export const cpuQuantity = (fallback: string) => quantity("CPU", fallback);
/** A memory quantity ("12Gi", "512Mi"), kept as written (a string). */
export const memoryQuantity = (fallback: string) => quantity("memory", fallback);

/** An optional re-run token: only its changes matter. */
export const runId = (description: string) =>
  z
    .string()
    .min(1, { error: "must be a non-empty string" })
    .optional()
    .describe(description)
    .meta({ defaultText: "none" });

export const count = (min: number, fallback: number) => z.int().min(min).default(fallback);
export const flag = (fallback: boolean) => z.boolean().default(fallback);

/** A strict map of keys whose own defaults apply when the map is left out. */
export function section<S extends z.core.$ZodLooseShape>(shape: S, description: string) {
  return z
    .strictObject(shape)
    .prefault({} as z.input<z.ZodObject<S, z.core.$strict>>)
    .describe(description);
}

export function unique<T>(label: string) {
  return (items: T[], ctx: z.core.$RefinementCtx<T[]>) => {
    items.forEach((item, index) => {
      if (items.indexOf(item) !== index)
        ctx.addIssue({ code: "custom", path: [index], message: `${label} ${JSON.stringify(item)} is listed twice` });
    });
  };
}

export const gravitonInstanceType = z.string().superRefine((value, ctx) => {
  const match = INSTANCE_TYPE_RE.exec(value);
  if (!match)
    ctx.addIssue({
      code: "custom",
      message: `"${value}" is not an EC2 instance type (expected <family>.<size>, e.g. r7g.large)`,
    });
  else if (!isGravitonFamily(match[1] ?? ""))
    ctx.addIssue({ code: "custom", message: `"${value}" is not a Graviton (arm64) instance type` });
});

/** An IPv4 CIDR string whose prefix lies in [minPrefix, maxPrefix]. */
export function ipv4Cidr(message: string, minPrefix = 0, maxPrefix = 32) {
  return z.string().refine((v) => {
    const m = CIDR_RE.exec(v);
    return (
      m !== null &&
      m.slice(1, 5).every((o) => Number(o) <= 255) &&
      Number(m[5]) >= minPrefix &&
      Number(m[5]) <= maxPrefix
    );
  }, message);
}

// A container image reference as github.com/distribution/reference (grammar.go) reads it:
// [domain[:port]/]path[/path...][:tag][@sha256:<64 hex>].
const DOMAIN = "[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\\d+)?";
const PATH = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const IMAGE_RE = new RegExp(
  `^((?:${DOMAIN}/)?${PATH}(?:/${PATH})*)(?::([\\w][\\w.-]{0,127}))?(?:@(sha256:[0-9a-f]{64}))?$`,
);

/** An image reference's parts; undefined when it is not one or names neither a tag nor a digest. */
export function parseImageReference(ref: string): { name: string; tag?: string; digest?: string } | undefined {
  const m = IMAGE_RE.exec(ref);
  if (!m || (m[2] === undefined && m[3] === undefined)) return undefined;
  return {
    name: m[1] as string,
    ...(m[2] === undefined ? {} : { tag: m[2] }),
    ...(m[3] === undefined ? {} : { digest: m[3] }),
  };
}

/** A container image: `name:tag`, `name@sha256:<digest>` or `name:tag@sha256:<digest>`. */
/** An image reference (name:tag, name@digest or both), validated. */
export const imageName = () =>
  z.string().refine((v) => parseImageReference(v) !== undefined, {
    error:
      "must be an image reference name:tag, name@sha256:<64 hex digits> or name:tag@sha256:<64 hex digits> (e.g. registry.example.com/valkey/valkey:9.0)",
  });

export const imageReference = (fallback: string) => imageName().default(fallback);
