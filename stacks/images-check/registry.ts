/**
 * What a registry says a reference is, over the OCI distribution API (the calls `docker pull` makes
 * first): the digest of the manifest or index the tag names (sha256 of its bytes, checked against
 * the registry's Docker-Content-Digest), and the platforms it offers (an index's entries; a single
 * manifest's config blob). Anonymous pulls: a 401 with a `Bearer realm=…` challenge is answered with
 * the realm's token for `repository:<name>:pull` (ECR Public, quay.io, Docker Hub all work so).
 *
 * A mirror (`--mirror public.ecr.aws=https://<account>.dkr.ecr.<region>.amazonaws.com/ecr-public`:
 * an ECR pull-through cache, or a registry of your own) sends a registry's references to another
 * base URL and path prefix; the pull then uses that name too.
 */
import { createHash } from "node:crypto";
import { parseImageReference } from "../../config/fields.js";

export interface Mirror {
  /** The registry host the stack's references name, e.g. public.ecr.aws. */
  registry: string;
  /** Where its repositories are served instead: scheme, host[:port] and a path prefix. */
  base: URL;
}

/** `host=http(s)://host[:port][/prefix]`; an error naming the flag's value otherwise. */
export function parseMirror(text: string): Mirror {
  const at = text.indexOf("=");
  const registry = at < 0 ? "" : text.slice(0, at);
  let base: URL | undefined;
  try {
    base = new URL(text.slice(at + 1));
  } catch {
    base = undefined;
  }
  if (registry === "" || base === undefined || !/^https?:$/.test(base.protocol) || base.search !== "")
    throw new Error(
      `--mirror ${JSON.stringify(text)}: expected <registry>=<http(s)://host[:port][/prefix]>, e.g. public.ecr.aws=https://123456789012.dkr.ecr.us-east-1.amazonaws.com/ecr-public`,
    );
  return { registry, base };
}

export interface ImageLocation {
  /** The API's base, e.g. https://public.ecr.aws. */
  api: string;
  /** The repository path on that registry (with a mirror's prefix). */
  repository: string;
  /** The tag or digest the reference names. */
  reference: string;
  /** The name a container engine pulls (host[:port]/repository), without tag or digest. */
  pullName: string;
  /** Plain HTTP (a local mirror): the engine must be told the registry is not TLS. */
  insecure: boolean;
}

/** Where a reference's manifest is served, through the first matching mirror. */
export function locateImage(ref: string, mirrors: readonly Mirror[]): ImageLocation {
  const parts = parseImageReference(ref);
  if (parts === undefined) throw new Error(`${JSON.stringify(ref)} is not an image reference`);
  const [first = "", ...rest] = parts.name.split("/");
  const hasHost = rest.length > 0 && (first.includes(".") || first.includes(":") || first === "localhost");
  const registry = hasHost ? first : "docker.io";
  const path = hasHost ? rest.join("/") : rest.length === 0 ? `library/${first}` : parts.name;
  const reference = parts.digest ?? parts.tag;
  if (reference === undefined) throw new Error(`${JSON.stringify(ref)} names neither a tag nor a digest`);
  const mirror = mirrors.find((m) => m.registry === registry);
  if (mirror !== undefined) {
    const prefix = mirror.base.pathname.replace(/^\/+|\/+$/g, "");
    const repository = prefix === "" ? path : `${prefix}/${path}`;
    return {
      api: mirror.base.origin,
      repository,
      reference,
      pullName: `${mirror.base.host}/${repository}`,
      insecure: mirror.base.protocol === "http:",
    };
  }
  const api = registry === "docker.io" ? "https://registry-1.docker.io" : `https://${registry}`;
  return { api, repository: path, reference, pullName: `${registry}/${path}`, insecure: false };
}

/** The fields of a `WWW-Authenticate: Bearer realm="…",service="…"` challenge; undefined for any other. */
export function parseBearerChallenge(header: string | null): { realm: string; service?: string } | undefined {
  if (header === null || !/^bearer\s/i.test(header)) return undefined;
  const fields = new Map<string, string>();
  for (const m of header.slice(7).matchAll(/(\w+)="([^"]*)"/g))
    fields.set((m[1] as string).toLowerCase(), m[2] as string);
  const realm = fields.get("realm");
  if (realm === undefined) return undefined;
  const service = fields.get("service");
  return service === undefined ? { realm } : { realm, service };
}

export const INDEX_TYPES = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
];
const MANIFEST_TYPES = [
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
];

export interface ResolvedImage {
  location: ImageLocation;
  /** sha256:<hex> of the manifest or index the reference names. */
  digest: string;
  mediaType: string;
  /** os/architecture[/variant] of each image it offers (attestation entries left out). */
  platforms: string[];
  /** What the engine pulls: the name through any mirror, at the digest. */
  pullRef: string;
}

type Fetch = typeof fetch;

class RegistrySession {
  private token: string | undefined;
  constructor(
    private readonly location: ImageLocation,
    private readonly ref: string,
    private readonly fetchFn: Fetch,
  ) {}

  async get(path: string, accept: readonly string[]): Promise<Response> {
    const url = `${this.location.api}/v2/${this.location.repository}/${path}`;
    const headers = (): Record<string, string> => ({
      Accept: accept.join(", "),
      ...(this.token === undefined ? {} : { Authorization: `Bearer ${this.token}` }),
    });
    let res = await this.call(url, headers());
    if (res.status === 401 && this.token === undefined) {
      this.token = await this.anonymousToken(res.headers.get("www-authenticate"));
      res = await this.call(url, headers());
    }
    if (!res.ok) throw new Error(`${this.ref}: GET ${url} answered ${res.status} ${await snippet(res)}`);
    return res;
  }

  private async call(url: string, headers: Record<string, string>): Promise<Response> {
    try {
      return await this.fetchFn(url, { headers, redirect: "follow" });
    } catch (err) {
      throw new Error(`${this.ref}: cannot reach ${url}: ${(err as Error).message}`, { cause: err });
    }
  }

  private async anonymousToken(header: string | null): Promise<string> {
    const challenge = parseBearerChallenge(header);
    if (challenge === undefined)
      throw new Error(`${this.ref}: the registry wants credentials (${header ?? "no WWW-Authenticate"}); log in first`);
    const url = new URL(challenge.realm);
    if (challenge.service !== undefined) url.searchParams.set("service", challenge.service);
    url.searchParams.set("scope", `repository:${this.location.repository}:pull`);
    const res = await this.call(url.href, {});
    if (!res.ok)
      throw new Error(`${this.ref}: no anonymous token from ${url.origin} (${res.status} ${await snippet(res)})`);
    const body = (await res.json()) as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === "string" ? body.token : body.access_token;
    if (typeof token !== "string" || token === "")
      throw new Error(`${this.ref}: the token answer from ${url.origin} holds no token`);
    return token;
  }
}

async function snippet(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  return text.slice(0, 200).replace(/\s+/g, " ");
}

interface ManifestBody {
  mediaType?: string;
  manifests?: { platform?: { os?: string; architecture?: string; variant?: string } }[];
  config?: { digest?: string };
}

const platformName = (p: { os?: string; architecture?: string; variant?: string }): string =>
  [p.os ?? "?", p.architecture ?? "?", ...(p.variant === undefined ? [] : [p.variant])].join("/");

/** Resolves a reference at its registry (or mirror): digest, media type, platforms. */
export async function resolveImage(
  ref: string,
  mirrors: readonly Mirror[],
  fetchFn: Fetch = fetch,
): Promise<ResolvedImage> {
  const location = locateImage(ref, mirrors);
  const session = new RegistrySession(location, ref, fetchFn);
  const res = await session.get(`manifests/${location.reference}`, [...INDEX_TYPES, ...MANIFEST_TYPES]);
  const bytes = Buffer.from(await res.arrayBuffer());
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  const header = res.headers.get("docker-content-digest");
  if (header !== null && header !== digest)
    throw new Error(`${ref}: the registry names the manifest ${header}, its bytes hash to ${digest}`);
  const pinned = parseImageReference(ref)?.digest;
  if (pinned !== undefined && pinned !== digest)
    throw new Error(`${ref}: pinned ${pinned}, the registry serves ${digest}`);
  const body = JSON.parse(bytes.toString("utf8")) as ManifestBody;
  const mediaType = body.mediaType ?? res.headers.get("content-type") ?? "?";
  let platforms: string[];
  if (INDEX_TYPES.includes(mediaType)) {
    platforms = (body.manifests ?? [])
      .map((m) => platformName(m.platform ?? {}))
      .filter((p) => p !== "unknown/unknown");
  } else {
    const configDigest = body.config?.digest;
    if (configDigest === undefined) throw new Error(`${ref}: manifest ${digest} (${mediaType}) has no config`);
    const blob = (await (await session.get(`blobs/${configDigest}`, ["*/*"])).json()) as {
      os?: string;
      architecture?: string;
      variant?: string;
    };
    platforms = [platformName(blob)];
  }
  return { location, digest, mediaType, platforms, pullRef: `${location.pullName}@${digest}` };
}
