/**
 * The password Secret. The password is a Pulumi secret and appears only here, in `stringData`,
 * wrapped with pulumi.secret so it stays encrypted in state and redacted in previews.
 */
import * as pulumi from "@pulumi/pulumi";
import type * as k8s from "@pulumi/kubernetes";
import { releaseLabels } from "../shared.js";
import { PASSWORD_SECRET_KEY } from "../../pod/paths.js";

export function buildPasswordSecret(
  name: string,
  namespace: string,
  release: string,
  password: pulumi.Input<string>,
): k8s.types.input.core.v1.Secret {
  return {
    metadata: { name, namespace, labels: releaseLabels(release) },
    type: "Opaque",
    stringData: { [PASSWORD_SECRET_KEY]: pulumi.secret(password) },
  };
}

/**
 * Checks that a password is given exactly when auth is on; returns it (undefined = auth off).
 * Throws before any resource exists, naming the problem.
 */
export function requirePassword(
  authEnabled: boolean,
  password: pulumi.Input<string> | undefined,
  component: string,
): pulumi.Input<string> | undefined {
  if (!authEnabled) return undefined;
  if (password === undefined) {
    throw new Error(
      `${component}: valkey.auth.enabled is true but no password was given (set the valkey password as a Pulumi secret)`,
    );
  }
  return password;
}
