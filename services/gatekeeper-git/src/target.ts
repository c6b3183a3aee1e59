/**
 * The capnweb main object of a git binding session. capnweb exposes an RpcTarget's prototype
 * methods only, so exactly the methods below are callable; the service is held in a private field.
 */
import { RpcTarget } from "capnweb";
import type {
  DiffPage,
  FileChunk,
  FilePage,
  GitBindingService,
  GrepPage,
  LogPage,
  WriteResult,
} from "./binding-service.ts";

/** Method names of a git binding, in .d.ts order. */
export const GIT_METHODS = [
  "listFiles",
  "readFile",
  "readFilePage",
  "log",
  "grep",
  "diff",
  "commit",
  "createBranch",
  "push",
] as const;

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
  readFilePage(args?: unknown): Promise<FileChunk> {
    return this.#svc.readFilePage(args);
  }
  log(args?: unknown): Promise<LogPage> {
    return this.#svc.log(args);
  }
  grep(args?: unknown): Promise<GrepPage> {
    return this.#svc.grep(args);
  }
  diff(args?: unknown): Promise<DiffPage> {
    return this.#svc.diff(args);
  }
  commit(args?: unknown): Promise<WriteResult> {
    return this.#svc.commit(args);
  }
  createBranch(args?: unknown): Promise<WriteResult> {
    return this.#svc.createBranch(args);
  }
  push(args?: unknown): Promise<WriteResult> {
    return this.#svc.push(args);
  }
}
