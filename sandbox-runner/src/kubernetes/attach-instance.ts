import { PassThrough } from "node:stream";
import { Attach, type CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { SandboxExit, SandboxInstance } from "../pool/backend.ts";
import { encodeLine } from "../protocol.ts";
import { apiErrorCode, apiErrorMessage } from "./api-error.ts";
import { CONTAINER } from "./template.ts";

const STDERR_TAIL = 2048;
/** How long the exit path waits for the pod's status to explain a closed stream, ms. */
const EXPLAIN_TIMEOUT_MS = 1_500;
/** Between reads of that status, ms. */
const EXPLAIN_POLL_MS = 150;

/** What attachInstance needs to reach one sandbox pod. */
export interface AttachTarget {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  namespace: string;
  /** The pod's name. */
  name: string;
  /** Claims the pod for a workspace (SandboxInstance.claim). */
  claim(workspaceId: string): Promise<void>;
  /** Deletes the pod (idempotent, never throws). */
  remove(): Promise<void>;
  /** How often to ping the isolate host, ms (its input-silence deadline / 6). */
  pingMs: number;
}

/**
 * Attaches to a running sandbox pod's container (stdin, stdout and stderr over the API server's attach
 * WebSocket: the pod itself needs no network) and adapts it to a SandboxInstance. Sends `{hello}` at
 * once, so the isolate host repeats its `{ready}` line (what it wrote before the attach is not replayed),
 * then `{ping}` every `pingMs`, so the isolate host's input-silence deadline ends it only when this runner
 * is gone.
 * The exit notification fires once, when the stream closes (or destroy() runs); its `reason` says why,
 * from the pod's status read at that moment (deleted, exited with a code, OOM-killed).
 * @throws Error naming the pod when the attach is refused.
 */
export async function attachInstance(target: AttachTarget): Promise<SandboxInstance> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  let stderrTail = "";
  let exit: SandboxExit | null = null;
  let destroyed: Promise<void> | null = null;
  const exitListeners: Array<(exit: SandboxExit) => void> = [];
  const notify = (e: SandboxExit) => {
    if (exit) return;
    exit = e;
    for (const listener of exitListeners.splice(0)) listener(e);
  };
  stdout.setEncoding("utf8");
  stderr.setEncoding("utf8");
  stderr.on("data", (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL);
  });
  let socket: Awaited<ReturnType<Attach["attach"]>>;
  try {
    socket = await new Attach(target.kubeConfig).attach(
      target.namespace,
      target.name,
      CONTAINER,
      stdout,
      stderr,
      stdin,
      false,
    );
  } catch (error) {
    throw new Error(`cannot attach to sandbox pod ${target.name}: ${apiErrorMessage(error)}`);
  }
  let closed = false;
  socket.on("close", () => {
    closed = true;
    if (exit) return;
    void explainEnd(target).then((why) =>
      notify({ code: why.code, signal: why.signal, stderrTail, reason: why.reason }),
    );
  });
  socket.on("error", () => undefined); // "close" follows and reports it
  stdin.write(encodeLine({ hello: {} }));
  const pinger = setInterval(() => {
    if (!exit) stdin.write(encodeLine({ ping: {} }));
  }, target.pingMs);
  pinger.unref();
  exitListeners.push(() => clearInterval(pinger));
  return {
    id: target.name,
    pid: null,
    write(text) {
      if (!exit && !closed) stdin.write(text);
    },
    onData(listener) {
      stdout.on("data", listener);
    },
    onExit(listener) {
      if (exit) listener(exit);
      else exitListeners.push(listener);
    },
    claim: (workspaceId) => target.claim(workspaceId),
    destroy() {
      destroyed ??= (async () => {
        notify({
          code: null,
          signal: "SIGKILL",
          stderrTail,
          reason: `sandbox pod ${target.name} was deleted by the runner`,
        });
        socket.close();
        stdin.destroy();
        await target.remove();
      })();
      return destroyed;
    },
  };
}

/** Why a sandbox pod's stream closed: exit code, signal, and the words for the caller. */
interface EndReason {
  code: number | null;
  signal: string | null;
  reason: string;
}

/** Why the stream to a sandbox pod closed, from the pod's status (bounded wait). */
async function explainEnd(target: AttachTarget): Promise<EndReason> {
  const fallback: EndReason = {
    code: null,
    signal: null,
    reason: `the attach stream of sandbox pod ${target.name} closed`,
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<EndReason>((resolve) => {
    timer = setTimeout(() => resolve(fallback), EXPLAIN_TIMEOUT_MS);
  });
  let waiting = true;
  const read = (async () => {
    // The kubelet reports the container's end a moment after its stream closes: read until it has.
    for (;;) {
      const why = await readOnce();
      if (why !== fallback || !waiting) return why;
      await new Promise((resolve) => setTimeout(resolve, EXPLAIN_POLL_MS));
    }
  })();
  async function readOnce(): Promise<EndReason> {
    try {
      const pod = await target.core.readNamespacedPod({ namespace: target.namespace, name: target.name });
      const terminated = pod.status?.containerStatuses?.find((s) => s.name === CONTAINER)?.state?.terminated;
      if (pod.metadata?.deletionTimestamp) {
        return { code: null, signal: "SIGKILL", reason: `sandbox pod ${target.name} was deleted` };
      }
      if (terminated) {
        const why = terminated.reason ? ` (${terminated.reason})` : "";
        return {
          code: terminated.exitCode ?? null,
          signal: terminated.reason === "OOMKilled" ? "SIGKILL" : null,
          reason: `sandbox pod ${target.name} exited with code ${terminated.exitCode}${why}`,
        };
      }
      return fallback;
    } catch (error) {
      if (apiErrorCode(error) === 404)
        return { code: null, signal: "SIGKILL", reason: `sandbox pod ${target.name} was deleted` };
      return fallback;
    }
  }
  try {
    return await Promise.race([read, timeout]);
  } finally {
    waiting = false;
    clearTimeout(timer);
  }
}
