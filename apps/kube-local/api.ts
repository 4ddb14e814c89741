/**
 * A minimal Kubernetes API client for kube:local's bootstrap: requests with the kubeconfig's bearer
 * token and CA, and `applyAll` (create, or leave an existing object as it is) for the few kinds the
 * cluster's add-ons use.
 */
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { parse } from "yaml";

/** A request; `contentType` defaults to JSON (PATCH needs e.g. application/merge-patch+json). */
export type Api = <T = unknown>(
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
) => Promise<{ status: number; body: T }>;

interface Kubeconfig {
  clusters: Array<{ cluster: { "server": string; "certificate-authority-data": string } }>;
  users: Array<{ user: { token: string } }>;
}

export function apiClient(kubeconfigPath: string): Api {
  const kc = parse(readFileSync(kubeconfigPath, "utf8")) as Kubeconfig;
  const server = kc.clusters[0]!.cluster.server;
  const ca = Buffer.from(kc.clusters[0]!.cluster["certificate-authority-data"], "base64").toString("utf8");
  const token = kc.users[0]!.user.token;
  const once = oneRequest(server, ca, token);
  // Node's keep-alive race (its http docs, `request.reusedSocket`): the server closes an idle connection just as the
  // client sends the next request on it, and the request fails with ECONNRESET before any reply. Two pods-tier tests
  // under a CPU hog failed at once on a bare "socket hang up" (2026-12-01). The server read nothing of a request on a
  // connection it had closed, so that one case is sent again, once, on a new connection; any other failure (and a
  // second reset) is the caller's, named. Were a create read after all, its second send answers 409, which every
  // caller refuses by status: nothing is made twice unseen.
  return async <T>(method: string, path: string, body?: unknown, contentType = "application/json") => {
    try {
      return await once<T>(method, path, body, contentType);
    } catch (err) {
      if (!(err instanceof RequestError) || !err.reusedSocket || err.code !== "ECONNRESET") throw err;
      return await once<T>(method, path, body, contentType);
    }
  };
}

/** A failed request, named by its method and path, the error code and whether a kept-alive connection was reused. */
export class RequestError extends Error {
  constructor(
    what: string,
    readonly code: string | undefined,
    readonly reusedSocket: boolean,
    cause: Error,
  ) {
    super(
      `${what}: ${cause.message}${code ? ` (${code})` : ""}${reusedSocket ? ", on a reused keep-alive connection" : ""}`,
      {
        cause,
      },
    );
  }
}

function oneRequest(server: string, ca: string, token: string) {
  return <T>(method: string, path: string, body: unknown, contentType: string) =>
    new Promise<{ status: number; body: T }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        `${server}${path}`,
        {
          method,
          ca,
          timeout: 15_000,
          headers: {
            authorization: `Bearer ${token}`,
            accept: "application/json",
            ...(payload !== undefined
              ? { "content-type": contentType, "content-length": Buffer.byteLength(payload) }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              /* plain text */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed as T });
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", (err: NodeJS.ErrnoException) =>
        reject(new RequestError(`${method} ${path}`, err.code, req.reusedSocket, err)),
      );
      if (payload !== undefined) req.write(payload);
      req.end();
    });
}

const PLURAL: Record<string, [string, boolean]> = {
  Namespace: ["namespaces", false],
  ServiceAccount: ["serviceaccounts", true],
  ConfigMap: ["configmaps", true],
  Service: ["services", true],
  Deployment: ["deployments", true],
  ClusterRole: ["clusterroles", false],
  ClusterRoleBinding: ["clusterrolebindings", false],
  StorageClass: ["storageclasses", false],
  CustomResourceDefinition: ["customresourcedefinitions", false],
};

/** The collection path of an object (its kind must be one of PLURAL's). */
export function collectionPath(obj: Record<string, unknown>): string {
  const kind = String(obj.kind);
  const entry = PLURAL[kind];
  if (!entry) throw new Error(`kube:local: no API path known for kind ${kind}`);
  const [plural, namespaced] = entry;
  const apiVersion = String(obj.apiVersion);
  const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = (obj.metadata as { namespace?: string } | undefined)?.namespace;
  if (namespaced && !ns) throw new Error(`kube:local: ${kind} needs metadata.namespace`);
  return namespaced ? `${base}/namespaces/${ns}/${plural}` : `${base}/${plural}`;
}

/** Creates each object in order; an existing one (409) is left as it is. */
export async function applyAll(api: Api, objs: Array<Record<string, unknown>>): Promise<void> {
  for (const o of objs) {
    const { status, body } = await api("POST", collectionPath(o), o);
    if (status !== 201 && status !== 200 && status !== 409) {
      const name = (o.metadata as { name?: string } | undefined)?.name;
      throw new Error(
        `kube:local: creating ${String(o.kind)} ${name}: HTTP ${status}: ${JSON.stringify(body).slice(0, 400)}`,
      );
    }
  }
}
