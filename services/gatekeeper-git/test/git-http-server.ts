/**
 * A real git smart-HTTP server for tests: node:http in front of `git http-backend` (CGI) on
 * loopback, with HTTP basic auth checked against a users table. Every request needs a valid
 * user (401 otherwise), so a wrong or missing credential cannot read or push. Requests are
 * counted per user so tests can see who talked to the server.
 */
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export interface GitHttpServer {
  /** Base URL, e.g. "http://127.0.0.1:43123/" (repositories are paths under the root). */
  url: string;
  /** Requests seen per authenticated user; "(anonymous)" and "(bad)" for refused ones. */
  requests: Map<string, number>;
  close(): Promise<void>;
}

function userOf(req: IncomingMessage, users: Record<string, string>): string | undefined {
  const h = req.headers.authorization;
  if (!h?.startsWith("Basic ")) return undefined;
  const [name, ...rest] = Buffer.from(h.slice(6), "base64").toString("utf8").split(":");
  return name !== undefined && users[name] !== undefined && users[name] === rest.join(":") ? name : undefined;
}

function runBackend(root: string, user: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://x");
  const child = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ""),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      REMOTE_USER: user,
      REMOTE_ADDR: "127.0.0.1",
      ...(req.headers["content-encoding"]
        ? { HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"]) }
        : {}),
      ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
    },
    stdio: ["pipe", "pipe", "ignore"],
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on("data", (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
      const i = line.indexOf(":");
      const k = line.slice(0, i).trim();
      const v = line.slice(i + 1).trim();
      if (k.toLowerCase() === "status") status = Number(v.split(" ")[0]);
      else res.setHeader(k, v);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  child.on("close", () => res.end());
}

/** Serves the bare repositories under `root` to `users` (name -> token). */
export async function startGitHttpServer(
  root: string,
  users: Record<string, string>,
): Promise<GitHttpServer> {
  const requests = new Map<string, number>();
  const count = (k: string) => requests.set(k, (requests.get(k) ?? 0) + 1);
  const server: Server = createServer((req, res) => {
    const user = userOf(req, users);
    if (!user) {
      count(req.headers.authorization ? "(bad)" : "(anonymous)");
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' });
      res.end();
      return;
    }
    count(user);
    runBackend(root, user, req, res);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
