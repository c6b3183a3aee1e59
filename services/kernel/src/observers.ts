/**
 * AddObserver (kernel.proto `Kernel.AddObserver`; docs/architecture.md "The approval contract"): a person may
 * observe a workspace only when the gatekeeper of EVERY binding allows it. Each gatekeeper applies
 * its own strategy (A private-only, B single-resource ACL check, C per-data-set tracking, D
 * low-stakes) in `Gatekeeper.CheckObserver`, given the person's own credential for that binding's
 * system.
 *
 * Order of work, so that nothing half-done is left behind:
 * 1. the request's fields are checked (INVALID_ARGUMENT naming the field);
 * 2. against the workspace's current state, every binding must have a credential and every
 *    credential must name a binding (INVALID_ARGUMENT naming them) — no gatekeeper is called yet;
 * 3. each binding's gatekeeper is asked (in parallel); any "not allowed" is PERMISSION_DENIED
 *    naming the binding(s) and the gatekeepers' reasons; a gatekeeper error names its binding;
 * 4. only when all allow, `ObserverAdded{observer, checks, addedBy}` is appended with the revision
 *    of the state checked as expected revision (`Workspaces.appendAtRevision`). If the workspace
 *    changed meanwhile, the checks are redone against the new state; a binding already checked
 *    (same name, URL and gatekeeper) is not asked twice.
 *
 * Credentials are passed to the gatekeepers and dropped: they are never logged, never appended
 * and never returned; a gatekeeper's reason or error that quotes one has it replaced by
 * "[credential]" before the kernel stores or returns it.
 */
import { type AddObserverRequest, type AddObserverResponse, ObserverAdded } from "@gatehouse/proto";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { InvalidArgument, PermissionDenied } from "./domain/errors.ts";
import type { BindingState } from "./domain/workspace.ts";
import type { GatekeeperClients } from "./gatekeepers.ts";
import type { Workspaces } from "./workspaces.ts";

/** "user:<id>": how people are named in events (observer, added_by). */
export const PERSON = /^user:[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;
const BINDING_NAME = /^[A-Z][A-Z0-9_]{0,62}$/;
/** Largest credential accepted per binding, bytes. */
export const MAX_CREDENTIAL_BYTES = 16 * 1024;
/** Longest gatekeeper reason kept in the event and the answer, characters. */
export const MAX_REASON_CHARS = 1000;
/** Deadline of one CheckObserver call, ms. */
const CHECK_DEADLINE_MS = 30_000;

/** What `addObserver` uses. */
export interface ObserverDeps {
  workspaces: Workspaces;
  gatekeepers: GatekeeperClients;
  logger: Logger;
}

/**
 * Replaces every occurrence of `credential` (and, for "user:secret" shaped credentials, of the
 * part after the first ":" when it is 8 characters or longer) in `text` with "[credential]".
 */
export function redactCredential(text: string, credential: string): string {
  const secrets = [credential];
  const colon = credential.indexOf(":");
  if (colon >= 0 && credential.length - colon - 1 >= 8) secrets.push(credential.slice(colon + 1));
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join("[credential]");
  return out;
}

function bounded(text: string): string {
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS - 1)}…` : text;
}

function checkFields(req: AddObserverRequest): void {
  if (!req.workspaceId) throw new InvalidArgument("workspace_id is required");
  if (!PERSON.test(req.observer)) {
    throw new InvalidArgument('observer must be "user:<id>" (letters, digits, ._@+-), e.g. "user:alice"');
  }
  if (!PERSON.test(req.addedBy)) {
    throw new InvalidArgument(
      'added_by must be "user:<id>" of the person sharing the workspace, e.g. "user:bob"',
    );
  }
  for (const [binding, credential] of Object.entries(req.credentials)) {
    if (!BINDING_NAME.test(binding)) {
      throw new InvalidArgument(
        `credentials has a key "${binding.slice(0, 64)}" that is not a binding name (upper-case, e.g. MEMORY)`,
      );
    }
    if (credential === "") {
      throw new InvalidArgument(
        `credentials[${binding}] is empty; give the observer's own credential for that binding's system`,
      );
    }
    if (Buffer.byteLength(credential) > MAX_CREDENTIAL_BYTES) {
      throw new InvalidArgument(`credentials[${binding}] is larger than ${MAX_CREDENTIAL_BYTES} bytes`);
    }
  }
}

function checkCoverage(workspaceId: string, bindings: BindingState[], credentials: Record<string, string>) {
  const missing = bindings.filter((b) => !(b.name in credentials)).map((b) => b.name);
  if (missing.length > 0) {
    throw new InvalidArgument(
      `credentials has no entry for binding(s) ${missing.join(", ")}; every binding's gatekeeper checks the observer with their own credential for it`,
    );
  }
  const names = new Set(bindings.map((b) => b.name));
  const extra = Object.keys(credentials).filter((k) => !names.has(k));
  if (extra.length > 0) {
    throw new InvalidArgument(
      `credentials name binding(s) ${extra.sort().join(", ")} that workspace ${workspaceId} does not have; remove them`,
    );
  }
}

/** The outcome of one binding's check. */
type Finding = { allowed: boolean; reason: string };

/**
 * A gatekeeper's error, named after the binding it was checking, as a gRPC-shaped error that the
 * kernel's status mapping passes through (UNAVAILABLE becomes FAILED_PRECONDITION there).
 * UNIMPLEMENTED (a gatekeeper without CheckObserver) becomes FAILED_PRECONDITION.
 */
function checkFailed(binding: BindingState, err: unknown, credential: string): Partial<ServiceError> {
  const e = err as Partial<ServiceError>;
  const isGrpc = typeof e?.code === "number";
  const code = !isGrpc || e.code === status.UNIMPLEMENTED ? status.FAILED_PRECONDITION : e.code!;
  const why = isGrpc ? redactCredential(e.details ?? "", credential) : (err as Error).message;
  const details = bounded(
    `binding ${binding.name}: the ${binding.gatekeeper} gatekeeper could not check the observer: ${why}`,
  );
  return { code, details, message: details, metadata: new Metadata() };
}

function askGatekeeper(
  deps: ObserverDeps,
  workspaceId: string,
  binding: BindingState,
  observer: string,
  credential: string,
): Promise<Finding> {
  return new Promise<Finding>((resolve, reject) => {
    try {
      const client = deps.gatekeepers.get(binding.gatekeeper);
      client.checkObserver(
        { url: binding.url, observer, credential, workspaceId, binding: binding.name },
        new Metadata(),
        { deadline: Date.now() + CHECK_DEADLINE_MS },
        (err, res) =>
          err
            ? reject(checkFailed(binding, err, credential))
            : resolve({ allowed: res.allowed, reason: bounded(redactCredential(res.reason, credential)) }),
      );
    } catch (err) {
      reject(checkFailed(binding, err, credential));
    }
  });
}

/** The check of a binding is reused across retries only while its name, URL and gatekeeper stay. */
function bindingKey(b: BindingState): string {
  return JSON.stringify([b.name, b.url, b.gatekeeper]);
}

/**
 * Lets `req.observer` observe workspace `req.workspaceId` when every binding's gatekeeper allows it.
 * A workspace without bindings has nothing to check: the observer is added with no checks.
 * Re-adding an observer records a fresh set of checks.
 * @returns `checks`: binding name → the gatekeeper's finding (e.g. "B: ...").
 * @throws InvalidArgument naming the field (workspace_id, observer, added_by, credentials[...]) or
 *   the binding(s) without a credential / the credential keys naming no binding;
 *   WorkspaceNotFound; PermissionDenied naming each refusing binding and its gatekeeper's reason;
 *   a gatekeeper's error prefixed with "binding NAME: ..." (nothing is appended in every case).
 */
export async function addObserver(deps: ObserverDeps, req: AddObserverRequest): Promise<AddObserverResponse> {
  checkFields(req);
  const checked = new Map<string, Finding>();
  const log = deps.logger.child({ component: "observers", workspaceId: req.workspaceId });
  const { result: checks, revision } = await deps.workspaces.appendAtRevision(
    req.workspaceId,
    req.addedBy,
    async (state) => {
      const bindings = [...state.bindings.values()].sort((a, b) => a.name.localeCompare(b.name));
      checkCoverage(req.workspaceId, bindings, req.credentials);
      const todo = bindings.filter((b) => !checked.has(bindingKey(b)));
      const settled = await Promise.allSettled(
        todo.map((b) => askGatekeeper(deps, req.workspaceId, b, req.observer, req.credentials[b.name]!)),
      );
      settled.forEach((s, i) => {
        if (s.status === "fulfilled") checked.set(bindingKey(todo[i]!), s.value);
      });
      const denied = bindings.filter((b) => checked.get(bindingKey(b))?.allowed === false);
      if (denied.length > 0) {
        log.info(
          { event: "observer.denied", observer: req.observer, bindings: denied.map((b) => b.name) },
          "a gatekeeper refused the observer; nothing appended",
        );
        const why = denied.map((b) => `binding ${b.name}: ${checked.get(bindingKey(b))!.reason}`);
        throw new PermissionDenied(
          `${req.observer} may not observe workspace ${req.workspaceId}: ${why.join("; ")}`,
        );
      }
      const failed = settled.find((s) => s.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
      const checks: Record<string, string> = {};
      for (const b of bindings) checks[b.name] = checked.get(bindingKey(b))!.reason;
      const event: ObserverAdded = { observer: req.observer, checks, addedBy: req.addedBy };
      return { type: "ObserverAdded", data: ObserverAdded.toJSON(event), result: checks };
    },
    "the workspace changed too often while adding the observer; try again",
  );
  log.info(
    {
      event: "observer.added",
      observer: req.observer,
      addedBy: req.addedBy,
      bindings: Object.keys(checks),
      revision,
    },
    "observer added",
  );
  return { checks };
}
