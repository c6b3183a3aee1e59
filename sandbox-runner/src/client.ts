import { type ExecuteResult, type Limits, SandboxRunnerClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { RpcSession, type RpcTransport } from "capnweb";

/** One binding served by the caller: `main` is what the sandbox's `env[name]` reaches (an RpcTarget or stub). */
export interface ServedBinding {
  main: unknown;
  methods?: string[];
}

/** Input of executeSnippet. */
export interface ExecuteSnippetRequest {
  executionId: string;
  /** The workspace the execution belongs to (its sandbox is never shared with another workspace). */
  workspaceId: string;
  code: string;
  /** Granted bindings by name; each gets its own capnweb session over the stream. */
  bindings?: Record<string, ServedBinding>;
  /** Zero / absent fields take the runner's defaults. */
  limits?: Partial<Limits>;
}

/** capnweb transport over one binding's frames of an Execute stream. */
class StreamTransport implements RpcTransport {
  private readonly queue: string[] = [];
  private readonly waiters: Array<{ resolve: (m: string) => void; reject: (e: Error) => void }> = [];
  private closed: Error | null = null;

  constructor(private readonly sendFrame: (data: string) => void) {}

  send(message: string): void {
    if (!this.closed) this.sendFrame(message);
  }

  receive(): Promise<string> {
    const next = this.queue.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  deliver(message: string): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(message);
    else this.queue.push(message);
  }

  close(reason: Error): void {
    this.closed = reason;
    for (const waiter of this.waiters.splice(0)) waiter.reject(reason);
  }
}

/**
 * Runs one snippet through a SandboxRunner at `address` ("host:port"), serving each binding's capnweb
 * session from this process (the role the kernel plays). Resolves with the ExecuteResult.
 * @throws the gRPC error (with .code/.details) when the runner refuses the call.
 */
export function executeSnippet(
  address: string | SandboxRunnerClient,
  request: ExecuteSnippetRequest,
): Promise<ExecuteResult> {
  const client =
    typeof address === "string" ? new SandboxRunnerClient(address, credentials.createInsecure()) : address;
  const ownClient = typeof address === "string";
  const call = client.execute();
  const transports = new Map<string, StreamTransport>();
  for (const [name, binding] of Object.entries(request.bindings ?? {})) {
    const transport = new StreamTransport((data) =>
      call.write({ msg: { $case: "frame", frame: { binding: name, data } } }),
    );
    transports.set(name, transport);
    new RpcSession(transport, binding.main);
  }
  return new Promise<ExecuteResult>((resolve, reject) => {
    let result: ExecuteResult | null = null;
    const finish = (error: Error | null) => {
      for (const t of transports.values()) t.close(new Error("execution finished"));
      if (ownClient) client.close();
      if (result) resolve(result);
      else reject(error ?? new Error("the runner ended the stream without a result"));
    };
    call.on("data", (message) => {
      const msg = message.msg;
      if (msg?.$case === "frame") transports.get(msg.frame.binding)?.deliver(msg.frame.data);
      else if (msg?.$case === "result") {
        result = msg.result;
        call.end();
      }
    });
    call.on("error", (error: Error) => finish(error));
    call.on("end", () => finish(null));
    call.write({
      msg: {
        $case: "start",
        start: {
          executionId: request.executionId,
          workspaceId: request.workspaceId,
          code: request.code,
          bindings: Object.entries(request.bindings ?? {}).map(([name, b]) => ({
            name,
            methods: b.methods ?? [],
          })),
          limits: { wallTimeMs: 0, heapMb: 0, outputBytes: 0, ...request.limits },
        },
      },
    });
  });
}
