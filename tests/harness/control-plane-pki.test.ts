/**
 * The one PKI module both local control planes use (kube:local and the e2e tier's kwok one): the
 * serving certificate verifies against the CA and names every address and in-cluster name asked;
 * the kubelet client certificate is made only when asked.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makePki, tokenKubeconfig } from "../../harness/control-plane/pki.js";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), "pki-test-"));
  dirs.push(d);
  return d;
};
const openssl = (args: string[], cwd: string) => execFileSync("openssl", args, { cwd, encoding: "utf8" });

describe("makePki", () => {
  it("a serving certificate the CA signed, for 127.0.0.1, the addresses given and the in-cluster names; the kubelet client only when asked", () => {
    const kube = newDir();
    makePki(kube, { caName: "test-ca", days: 3, apiserverIps: ["10.1.2.3", "10.233.0.1"], kubeletClient: true });
    expect(openssl(["verify", "-CAfile", "ca.crt", "apiserver.crt", "apiserver-kubelet-client.crt"], kube)).toMatch(
      /apiserver\.crt: OK[\s\S]*apiserver-kubelet-client\.crt: OK/,
    );
    const text = openssl(["x509", "-in", "apiserver.crt", "-noout", "-text"], kube);
    for (const san of [
      "IP Address:127.0.0.1",
      "IP Address:10.1.2.3",
      "IP Address:10.233.0.1",
      "DNS:kubernetes.default.svc.cluster.local",
      "DNS:localhost",
    ])
      expect(text).toContain(san);
    expect(openssl(["x509", "-in", "ca.crt", "-noout", "-subject"], kube)).toMatch(/CN ?= ?test-ca/);
    expect(readFileSync(join(kube, "sa.pub"), "utf8")).toMatch(/BEGIN PUBLIC KEY/);

    const e2e = newDir();
    makePki(e2e, { caName: "e2e-ca", days: 2, apiserverIps: ["10.0.0.1"] });
    expect(existsSync(join(e2e, "apiserver-kubelet-client.crt"))).toBe(false);
    expect(openssl(["x509", "-in", "apiserver.crt", "-noout", "-text"], e2e)).not.toContain("10.1.2.3");
  });

  it("a token kubeconfig names its cluster, user and context, and carries the CA", () => {
    const text = tokenKubeconfig("https://127.0.0.1:6443", "PEM", "tok", "local");
    expect(text).toContain("current-context: local");
    expect(text).toContain(`certificate-authority-data: ${Buffer.from("PEM").toString("base64")}`);
    expect(text).toContain("token: tok");
    expect(tokenKubeconfig("s", "c", "t")).toContain("current-context: kube-local");
  });
});
