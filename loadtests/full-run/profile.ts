/**
 * Which service a CPU profile's time went to: `gatehouse dev` runs every service in one Node process,
 * so its main-thread profile (node --cpu-prof) is split by source: each sample's stack is walked from
 * the running function outwards to the first frame in a service's or package's source
 * (services/<name>, sandbox-runner, packages/<name>), else the running function's library
 * (node_modules/<package>), Node's internals, or V8's own entries (garbage collector, program, idle).
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The owner of a source URL: "service kernel", "package event-store", "lib @grpc/grpc-js", "node", or undefined. */
function ownerOf(url: string): { owner: string; ours: boolean } | undefined {
  const service = /\/services\/([^/]+)\//.exec(url);
  if (service && !url.includes("node_modules")) return { owner: `service ${service[1]}`, ours: true };
  if (/\/sandbox-runner\//.test(url) && !url.includes("node_modules"))
    return { owner: "service sandbox-runner", ours: true };
  const pkg = /\/packages\/([^/]+)\//.exec(url);
  if (pkg && !url.includes("node_modules")) return { owner: `package ${pkg[1]}`, ours: true };
  const lib = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (lib) return { owner: `lib ${lib[1]}`, ours: false };
  if (url.startsWith("node:")) return { owner: url.replace(/^node:(internal\/)?/, "node "), ours: false };
  return undefined;
}

/**
 * ms of main-thread CPU by owner, largest first. With `window`, only the samples taken between
 * `from` and `to` (epoch ms), placed in time from `exitedAt`, when the process ended the profile.
 */
export function attributeProfile(
  file: string,
  window?: { from: number; to: number; exitedAt: number },
): {
  totalMs: number;
  byOwner: [string, number][];
  byService: [string, number][];
  topFunctions: [string, number][];
} {
  const p = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfMs = new Map<number, number>();
  let clock = p.startTime; // µs, the profile's own clock
  for (let i = 0; i < p.samples.length; i++) {
    clock += p.timeDeltas[i] ?? 0;
    if (window) {
      const wall = window.exitedAt - (p.endTime - clock) / 1000;
      if (wall < window.from || wall >= window.to) continue;
    }
    const id = p.samples[i] as number;
    selfMs.set(id, (selfMs.get(id) ?? 0) + (p.timeDeltas[i + 1] ?? 0) / 1000);
  }
  const byOwner = new Map<string, number>();
  const byService = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of selfMs) {
    const node = byId.get(id) as ProfileNode;
    const fn = node.callFrame.functionName;
    if (fn === "(idle)") continue;
    total += ms;
    const own = ownerOf(node.callFrame.url);
    const label = own?.owner ?? (fn.startsWith("(") ? fn : "native / unknown");
    byOwner.set(label, (byOwner.get(label) ?? 0) + ms);
    const where = node.callFrame.url.replace(/^.*\/(services|packages|node_modules)\//, "$1/");
    const fnKey = `${fn || "(anonymous)"} ${where}`.trim();
    byFunction.set(fnKey, (byFunction.get(fnKey) ?? 0) + ms);
    // The nearest frame of our own source up the stack: the service (or package) that asked for this work.
    let at: number | undefined = id;
    let service = `${label} (no Gatehouse frame on the stack)`;
    while (at !== undefined) {
      const o = ownerOf((byId.get(at) as ProfileNode).callFrame.url);
      if (o?.ours) {
        service = o.owner;
        break;
      }
      at = parent.get(at);
    }
    if (fn === "(garbage collector)") service = "(garbage collector)";
    byService.set(service, (byService.get(service) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round(v)] as [string, number]);
  return {
    totalMs: Math.round(total),
    byOwner: sorted(byOwner),
    byService: sorted(byService),
    topFunctions: sorted(byFunction),
  };
}
