/**
 * CustomResourceDefinitions from YAML files onto the e2e control plane: server-side apply of each
 * file, then a wait until the API server serves every one of them (condition Established).
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { pollUntil } from "../../../core/util/poll-until.js";
import type { ControlPlane } from "./control-plane.js";

/** The CRD's metadata.name in one YAML file (the first `name:` after `metadata:`). */
function crdName(path: string, text: string): string {
  const name = /^\s*name:\s*(\S+)/m.exec(text.slice(text.indexOf("metadata:")))?.[1];
  if (name === undefined) throw new Error(`no metadata.name in ${basename(path)}`);
  return name;
}

export async function applyCrds(plane: ControlPlane, paths: readonly string[]): Promise<void> {
  const names: string[] = [];
  for (const path of paths) {
    const text = readFileSync(path, "utf8");
    const name = crdName(path, text);
    names.push(name);
    await plane.api(
      "PATCH",
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}?fieldManager=valkey-on-eks-e2e&force=true`,
      text,
      { contentType: "application/apply-patch+yaml" },
    );
  }
  for (const name of names) {
    await pollUntil(
      async () => {
        const crd = await plane.api<{ status?: { conditions?: { type: string; status: string }[] } }>(
          "GET",
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
        );
        return crd.body.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
          ? true
          : "not Established yet";
      },
      { timeoutMs: 30_000, intervalMs: 250, what: `CRD ${name} to be established` },
    );
  }
}
