import { createHash } from "node:crypto";
import type { V1Pod } from "@kubernetes/client-node";

/** Labels every sandbox pod carries (a NetworkPolicy selects `gatehouse.dev/sandbox: "true"`). */
export const LABELS = {
  /** "true" on every sandbox pod. */
  sandbox: "gatehouse.dev/sandbox",
  /** The runner that created it (its pod name): only that runner attaches to it. */
  runner: "gatehouse.dev/runner",
  /** The runner process that created it (random per start): tells a restarted runner's pods from its own. */
  runnerInstance: "gatehouse.dev/runner-instance",
  /** "warm" until a workspace claims it, then "leased". */
  state: "gatehouse.dev/state",
  /** workspaceLabel() of the workspace it serves (set by the claim). */
  workspace: "gatehouse.dev/workspace",
  managedBy: "app.kubernetes.io/managed-by",
} as const;

/** Value of app.kubernetes.io/managed-by on sandbox pods. */
export const MANAGED_BY = "gatehouse-sandbox-runner";

/** The container name inside every sandbox pod (attach targets it). */
export const CONTAINER = "sandbox";

/** Where the scratch dir (a size-limited emptyDir, the only writable path) is mounted: /tmp, so gVisor adds no tmpfs of its own there. */
export const SCRATCH_PATH = "/tmp";

/**
 * What every sandbox pod of a runner looks like (SANDBOX_K8S_* variables, see ../config.ts).
 * Sizes: memory in MiB, ephemeral storage in MiB, cpu as Kubernetes quantities ("100m", "1").
 */
export interface SandboxPodTemplate {
  /** Namespace the pods are created in (the runner's Role allows pods only there). */
  namespace: string;
  image: string;
  imagePullPolicy: "Always" | "IfNotPresent" | "Never";
  /** Secret names (in `namespace`) for pulling `image`. */
  imagePullSecrets: string[];
  /** RuntimeClass of every sandbox pod (the chart's gVisor one, handler runsc). */
  runtimeClassName: string;
  /** This runner's name (its pod name): the value of the runner label, and the pod names' prefix. */
  runnerName: string;
  cpuRequest: string;
  cpuLimit: string;
  memoryRequestMb: number;
  memoryLimitMb: number;
  /** Size of the scratch emptyDir and the pod's ephemeral-storage limit, MiB. */
  ephemeralMb: number;
  /** The isolate host's command line inside the image. */
  command: string[];
  /**
   * The isolate host exits when nothing arrived on its stdin for this long, ms (the runner pings every
   * inputSilenceMs / 6): a pod whose runner died, or never attached, ends on its own.
   */
  inputSilenceMs: number;
}

/** The isolate host's command in the chart's sandbox image. */
export const DEFAULT_COMMAND = ["/usr/bin/node", "--no-node-snapshot", "/app/dist/isolate-host.cjs"];

/** Uid and gid the isolate host runs as (the images' non-root user). */
export const SANDBOX_UID = 65532;

/**
 * The label value naming a workspace: the first 32 hex digits of SHA-256 of its id, so a label (63
 * characters at most, a restricted alphabet) never carries the workspace's name.
 */
export function workspaceLabel(workspaceId: string): string {
  return createHash("sha256").update(workspaceId).digest("hex").slice(0, 32);
}

/** Label selector of the pods one runner created (every instance of it). */
export function runnerSelector(runnerName: string): string {
  return `${LABELS.sandbox}=true,${LABELS.runner}=${runnerName}`;
}

/** Label selector of every sandbox pod in the namespace, whichever runner made it. */
export const ALL_SANDBOXES_SELECTOR = `${LABELS.sandbox}=true,${LABELS.managedBy}=${MANAGED_BY}`;

/**
 * The pod of one sandbox: RuntimeClass from the template, no service-account token, no service links,
 * no env but the scratch dir and the input-silence deadline, read-only root (the scratch emptyDir at /tmp is
 * the only writable path; /dev/shm is replaced by an empty read-only mount), non-root, every capability dropped,
 * RuntimeDefault seccomp, requests and limits for cpu, memory and ephemeral storage, restartPolicy Never
 * (a sandbox that ends is replaced, never restarted), and stdin held open for the runner's attach stream
 * (`stdinOnce`: when the runner's stream closes, the isolate host sees end of input and exits).
 * `runnerInstance` is the creating process's id (LABELS.runnerInstance).
 */
export function sandboxPod(template: SandboxPodTemplate, name: string, runnerInstance: string): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: template.namespace,
      labels: {
        [LABELS.sandbox]: "true",
        [LABELS.runner]: template.runnerName,
        [LABELS.runnerInstance]: runnerInstance,
        [LABELS.state]: "warm",
        [LABELS.managedBy]: MANAGED_BY,
        "app.kubernetes.io/name": "gatehouse-sandbox",
      },
    },
    spec: {
      runtimeClassName: template.runtimeClassName,
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 0,
      ...(template.imagePullSecrets.length
        ? { imagePullSecrets: template.imagePullSecrets.map((secret) => ({ name: secret })) }
        : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: SANDBOX_UID,
        runAsGroup: SANDBOX_UID,
        fsGroup: SANDBOX_UID,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: CONTAINER,
          image: template.image,
          imagePullPolicy: template.imagePullPolicy,
          command: template.command,
          stdin: true,
          stdinOnce: true,
          tty: false,
          env: [
            { name: "GATEHOUSE_SCRATCH", value: SCRATCH_PATH },
            { name: "GATEHOUSE_INPUT_SILENCE_MS", value: String(template.inputSilenceMs) },
          ],
          resources: {
            requests: {
              cpu: template.cpuRequest,
              memory: `${template.memoryRequestMb}Mi`,
              "ephemeral-storage": `${template.ephemeralMb}Mi`,
            },
            limits: {
              cpu: template.cpuLimit,
              memory: `${template.memoryLimitMb}Mi`,
              "ephemeral-storage": `${template.ephemeralMb}Mi`,
            },
          },
          securityContext: {
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            privileged: false,
            capabilities: { drop: ["ALL"] },
          },
          // /dev/shm is writable in every container unless a mount replaces it: an empty read-only one.
          volumeMounts: [
            { name: "scratch", mountPath: SCRATCH_PATH },
            { name: "no-shm", mountPath: "/dev/shm", readOnly: true },
          ],
        },
      ],
      volumes: [
        { name: "scratch", emptyDir: { sizeLimit: `${template.ephemeralMb}Mi` } },
        { name: "no-shm", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
      ],
    },
  };
}
