/**
 * The TypeScript an agent is given for a workspace: each binding's declaration as its gatekeeper
 * generated it, then `interface Env` naming exactly the granted bindings.
 */
import type { BindingState } from "./domain/workspace.ts";

/** Joins the bindings' declarations and appends `interface Env { NAME: NAME; ... }`. */
export function agentEnvDts(bindings: BindingState[]): string {
  const parts = bindings.map((b) => b.dts.trim());
  const members = bindings.map(
    (b) => `  /** ${b.url.replace(/\*\//g, "*\\/")} (${b.trust}) */\n  ${b.name}: ${b.name};`,
  );
  parts.push(
    [
      "/** What `env` holds in `export default async (env: Env) => { ... }`: the granted bindings and nothing else. */",
      "interface Env {",
      ...members,
      "}",
    ].join("\n"),
  );
  return `${parts.join("\n\n")}\n`;
}
