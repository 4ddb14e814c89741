/**
 * The kube:local API client against a real TLS server on 127.0.0.1 (certificates from the control planes' own PKI
 * module): Node's keep-alive race, where the server closes a kept-alive connection as the client reuses it, is sent
 * again on a new connection; a reset on a new connection is not, and its error names the request.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, globalAgent, type Server } from "node:https";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiClient } from "../../../apps/kube-local/api.js";
import { makePki, tokenKubeconfig } from "../../../harness/control-plane/pki.js";

describe("kube:local API client", () => {
  let dir = "";
  let server: Server;
  let kubeconfig = "";
  /** Requests seen, each with the connection it came on; `resetNext` makes the server drop the next one unanswered. */
  const seen: Array<{ path: string; connection: number }> = [];
  let resetNext: "no" | "on-reused" | "always" = "no";
  const connections = new WeakMap<Socket, number>();
  let opened = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "kube-local-api-"));
    makePki(dir, { caName: "api-test-ca", days: 1, apiserverIps: [] });
    server = createServer(
      {
        key: readFileSync(join(dir, "apiserver.key")),
        cert: readFileSync(join(dir, "apiserver.crt")),
        keepAlive: true,
      },
      (req, res) => {
        const connection = connections.get(req.socket) ?? -1;
        const reused = seen.some((s) => s.connection === connection);
        seen.push({ path: req.url ?? "", connection });
        if (resetNext === "always" || (resetNext === "on-reused" && reused)) {
          if (resetNext === "on-reused") resetNext = "no";
          req.socket.destroy();
          return;
        }
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ path: req.url, auth: req.headers.authorization }));
      },
    );
    server.on("secureConnection", (s) => connections.set(s, opened++));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    kubeconfig = join(dir, "kubeconfig");
    writeFileSync(
      kubeconfig,
      tokenKubeconfig(`https://127.0.0.1:${port}`, readFileSync(join(dir, "ca.crt"), "utf8"), "t0k"),
    );
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("sends a request again on a new connection when the server closed the kept-alive one it was sent on", async () => {
    const api = apiClient(kubeconfig);
    seen.length = 0;
    resetNext = "no";
    expect((await api("GET", "/first")).body).toEqual({ path: "/first", auth: "Bearer t0k" });
    resetNext = "on-reused";
    expect((await api("GET", "/second")).body).toEqual({ path: "/second", auth: "Bearer t0k" });
    // The second request went out on the first's connection (reused), was dropped, and went again on a new one.
    const [first, dropped, again] = seen;
    expect([seen.length, dropped?.connection === first?.connection, again?.connection !== first?.connection]).toEqual([
      3,
      true,
      true,
    ]);
  });

  it("does not send again a request reset on a new connection, and names it", async () => {
    // No kept-alive connection left to reuse: the server closes them, and the client's agent has let them go.
    server.closeAllConnections();
    await expect.poll(() => Object.keys(globalAgent.freeSockets).length).toBe(0);
    const api = apiClient(kubeconfig);
    seen.length = 0;
    resetNext = "always";
    await expect(api("PUT", "/apis/x/v1/things/a", { a: 1 })).rejects.toThrow(
      /^PUT \/apis\/x\/v1\/things\/a: .*\(ECONNRESET\)$/,
    );
    expect(seen.map((s) => s.path)).toEqual(["/apis/x/v1/things/a"]);
    resetNext = "no";
  });
});
