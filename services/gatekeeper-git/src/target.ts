/**
 * The capnweb main object of a git binding session. capnweb exposes an RpcTarget's prototype
 * methods only, so exactly these five are callable; the service is held in a private field.
 */
import { RpcTarget } from "capnweb";
import type { CommitResult, FilePage, GitBindingService, GrepPage, LogPage } from "./binding-service.ts";

/** Method names of a git binding, in .d.ts order. */
export const GIT_METHODS = ["listFiles", "readFile", "log", "grep", "commit"] as const;

export class GitRepoTarget extends RpcTarget {
  readonly #svc: GitBindingService;
  constructor(svc: GitBindingService) {
    super();
    this.#svc = svc;
  }
  listFiles(args?: unknown): Promise<FilePage> {
    return this.#svc.listFiles(args);
  }
  readFile(args?: unknown): Promise<string> {
    return this.#svc.readFile(args);
  }
  log(args?: unknown): Promise<LogPage> {
    return this.#svc.log(args);
  }
  grep(args?: unknown): Promise<GrepPage> {
    return this.#svc.grep(args);
  }
  commit(args?: unknown): Promise<CommitResult> {
    return this.#svc.commit(args);
  }
}
