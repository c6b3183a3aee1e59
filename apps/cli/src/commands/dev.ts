/** `gatehouse dev`: all services in one process on loopback, data under ./.gatehouse/. */
import { resolve } from "node:path";
import type { OidcOptions } from "@gatehouse/gateway";
import type { NotifyConfig } from "@gatehouse/notify";
import { canConnect, describeProcess, portHolder } from "@gatehouse/service-kit";
import type { Command } from "commander";
import { dataDir } from "../clients.ts";
import { loadDevStack } from "../load-dev-stack.ts";

export function registerDevCommand(program: Command): void {
  program
    .command("dev")
    .description("run every Gatehouse service in this process (gRPC on 127.0.0.1), data under ./.gatehouse/")
    .option("--registry <file>", "MCP server registry (YAML); default: memory + files servers from npm")
    .option(
      "--postgres-registry <file>",
      "run the PostgreSQL gatekeeper (postgres://<registered server>/<database> resources) on port n+6, with this YAML registry of servers; default: not run",
    )
    .option(
      "--sandbox <mode>",
      "auto (gVisor; refuses to start without runsc) | gvisor | none (insecure: the isolate is the only wall)",
      "auto",
    )
    .option("--insecure-no-gvisor", "same as --sandbox none")
    .option(
      "--port-base <n>",
      "kernel on n, approval n+1, mcp gatekeeper n+2, sandbox runner n+3, Temporal dev server n+4 (unless TEMPORAL_ADDRESS is set), git gatekeeper n+5, postgres gatekeeper n+6 (with --postgres-registry)",
      "7001",
    )
    .option("--web-port <n>", "the gateway (approver web app and HTTP API) on 127.0.0.1:<n>", "8780")
    .option(
      "--nats <url>",
      "send live notices through this NATS server (nats://host:port) instead of the in-process bus",
      process.env.NATS_URL,
    )
    .option(
      "--notify-smtp <url>",
      "email people when a turn's writes wait for review, through this SMTP server (smtp://host:port or smtps://host:port; docs/notifications.md)",
      process.env.NOTIFY_SMTP_URL,
    )
    .option("--notify-from <address>", "sender of those emails (with --notify-smtp)", process.env.NOTIFY_FROM)
    .option(
      "--notify-smtp-auth <file>",
      "YAML/JSON file {user, pass} for the SMTP server",
      process.env.NOTIFY_SMTP_AUTH_FILE,
    )
    .option(
      "--notify-webhooks <file>",
      "YAML/JSON registry of the webhooks people may choose: name -> {url, format: slack|teams|json}",
      process.env.NOTIFY_WEBHOOKS_FILE,
    )
    .option(
      "--event-store <url>",
      "event store: sqlite:<path> | postgres://user:pass@host:port/db (run `gatehouse store migrate` first) | kurrentdb://host:port; default sqlite:<data dir>/events.sqlite",
      process.env.EVENT_STORE_URL,
    )
    .action(
      async (opts: {
        registry?: string;
        postgresRegistry?: string;
        eventStore?: string;
        sandbox: string;
        insecureNoGvisor?: boolean;
        portBase: string;
        webPort: string;
        nats?: string;
        notifySmtp?: string;
        notifyFrom?: string;
        notifySmtpAuth?: string;
        notifyWebhooks?: string;
      }) => {
        const mode = opts.insecureNoGvisor ? "none" : opts.sandbox;
        if (!["auto", "gvisor", "none"].includes(mode)) {
          process.stderr.write(`gatehouse: --sandbox must be auto, gvisor or none (got "${mode}")\n`);
          process.exit(2);
        }
        const postgres = opts.postgresRegistry !== undefined;
        // n..n+5, and n+6 for the postgres gatekeeper.
        const lastOffset = postgres ? 6 : 5;
        const base = Number(opts.portBase);
        if (!Number.isInteger(base) || base < 1024 || base > 65535 - lastOffset) {
          process.stderr.write(
            `gatehouse: --port-base must be an integer between 1024 and ${65535 - lastOffset} (it uses n to n+${lastOffset}${postgres ? " with --postgres-registry" : ""}; got "${opts.portBase}")\n`,
          );
          process.exit(2);
        }
        const webPort = Number(opts.webPort);
        if (!Number.isInteger(webPort) || webPort < 1024 || webPort > 65535) {
          process.stderr.write("gatehouse: --web-port must be an integer between 1024 and 65535\n");
          process.exit(2);
        }
        if (postgres && webPort === base + 6) {
          process.stderr.write(
            `gatehouse: --web-port ${webPort} is the postgres gatekeeper's port (--port-base + 6 with --postgres-registry); pick another --web-port\n`,
          );
          process.exit(2);
        }
        if (opts.nats !== undefined && !/^nats:\/\/\S+$/.test(opts.nats)) {
          process.stderr.write(`gatehouse: --nats must be nats://host:port (got "${opts.nats}")\n`);
          process.exit(2);
        }
        // Every service is loaded only here (from source, through tsx), so the other commands start quickly.
        const { otherDevUsing, removeDevFile, startDevStack, writeDevFile } = await loadDevStack();
        // After loadDevStack: the compiled CLI loads workspace packages from source through tsx, registered there.
        const { redactUrl, storeUrlProblem } = await import("@gatehouse/event-store");
        if (opts.eventStore !== undefined) {
          const problem = storeUrlProblem(opts.eventStore);
          if (problem) {
            process.stderr.write(`gatehouse: --event-store: ${problem}\n`);
            process.exit(2);
          }
        }
        // Checked before anything starts, naming the flag: review links start with the web app's URL.
        let notify: NotifyConfig | undefined;
        if (opts.notifySmtp || opts.notifyWebhooks) {
          const { loadNotifyConfig } = await import("@gatehouse/notify");
          try {
            notify = loadNotifyConfig({
              smtpUrl: opts.notifySmtp,
              smtpAuthFile: opts.notifySmtpAuth,
              from: opts.notifyFrom,
              publicUrl: process.env.GATEWAY_PUBLIC_URL || `http://127.0.0.1:${webPort}`,
              webhooksFile: opts.notifyWebhooks,
            });
          } catch (err) {
            process.stderr.write(
              `gatehouse dev: ${(err as Error).message} (flags: smtpUrl = --notify-smtp, from = --notify-from, smtpAuth = --notify-smtp-auth, webhooks = --notify-webhooks, publicUrl = GATEWAY_PUBLIC_URL)\n`,
            );
            process.exit(2);
          }
        }
        const { loadRegistryFile } = await import("@gatehouse/gatekeeper-mcp");
        // Checked before anything starts: a bad registry leaves nothing running.
        const postgresRegistry =
          opts.postgresRegistry !== undefined ? await loadPostgresRegistry(opts.postgresRegistry) : undefined;
        const dir = resolve(dataDir());
        const other = otherDevUsing(dir);
        if (other) {
          process.stderr.write(
            `gatehouse dev: another gatehouse dev (pid ${other}) is using ${dir}; stop it, or set GATEHOUSE_DATA_DIR to another directory\n`,
          );
          process.exit(1);
        }
        const busy = await busyPorts([
          ["kernel", base],
          ["approval", base + 1],
          ["mcp gatekeeper", base + 2],
          ["sandbox runner", base + 3],
          // The Temporal dev server's port (n+4) is checked when it starts: a leftover of ours is stopped first.
          ["git gatekeeper", base + 5],
          ...(postgres ? [["postgres gatekeeper", base + 6] as [string, number]] : []),
          ["gateway", webPort],
        ]);
        if (busy) {
          process.stderr.write(`gatehouse dev: ${busy}; or pass --port-base <n> / --web-port <n>\n`);
          process.exit(1);
        }
        const { default: pino } = await import("pino");
        const logger = pino({ level: process.env.LOG_LEVEL ?? "info" });
        // Tracing (docs/observability.md): on when OTEL_EXPORTER_OTLP_ENDPOINT is set; each service in
        // this process reports under its own service.name. A wrong OTEL_* value stops here, naming it.
        const { startTracing, stopTracing } = await import("@gatehouse/telemetry");
        let tracing: string;
        try {
          tracing = (await startTracing({ process: "gatehouse-dev" })).summary;
        } catch (err) {
          process.stderr.write(`gatehouse dev: ${(err as Error).message}\n`);
          process.exit(2);
        }
        try {
          const registry = opts.registry ? await loadRegistryFile(opts.registry) : undefined;
          const stack = await startDevStack({
            dataDir: dir,
            registry,
            ...(postgresRegistry ? { postgresRegistry } : {}),
            sandbox: mode as "auto" | "gvisor" | "none",
            ports: {
              kernel: base,
              approval: base + 1,
              mcp: base + 2,
              runner: base + 3,
              temporal: base + 4,
              git: base + 5,
              postgres: base + 6,
              gateway: webPort,
            },
            ...(opts.nats ? { natsUrl: opts.nats } : {}),
            ...(opts.eventStore ? { eventStoreUrl: opts.eventStore } : {}),
            ...oidcFromEnv(process.env),
            ...(process.env.TEMPORAL_ADDRESS ? { temporalAddress: process.env.TEMPORAL_ADDRESS } : {}),
            ...(notify ? { notify } : {}),
            logger,
          });
          writeDevFile(dir, stack.addresses);
          process.stdout.write(
            `gatehouse dev: kernel ${stack.addresses.kernel}, approval ${stack.addresses.approval}, ` +
              `mcp gatekeeper ${stack.addresses.mcp}, git gatekeeper ${stack.addresses.git}, ` +
              `${stack.addresses.postgres ? `postgres gatekeeper ${stack.addresses.postgres}, ` : ""}sandbox runner ${stack.addresses.runner} (sandbox: ${stack.sandboxMode}), ` +
              `temporal ${stack.addresses.temporal}${process.env.TEMPORAL_ADDRESS ? "" : " (dev server, data in temporal.db)"}\n` +
              `data: ${dir}\n` +
              `event store: ${opts.eventStore ? redactUrl(opts.eventStore) : `sqlite:${dir}/events.sqlite`}\n` +
              `live notices: ${opts.nats ?? "in-process bus"}\n` +
              `review notifications: ${notify ? `${notify.smtpUrl ? "email" : "no email"}, webhooks: ${Object.keys(notify.webhooks).join(", ") || "none"}; people choose at ${stack.addresses.gateway}/api/me/notifications` : "off (--notify-smtp, --notify-webhooks)"}\n` +
              `${tracing}\n` +
              `built-in agent: ${stack.agent.enabled ? "on (AGENT_* variables)" : "off (set AGENT_PROVIDER and AGENT_MODEL, see docs/agent.md)"}; chats at ${stack.addresses.gateway}/api/workspaces/<ws>/chats\n` +
              `MCP endpoint for agents: ${stack.addresses.gateway}/mcp?workspace=<ws>  (header Authorization: Bearer <dev token>)\n` +
              `approver web app: ${stack.addresses.gateway}/  (dev tokens in ${dir}/dev-tokens.yaml)\n` +
              stack.devTokens
                .map(
                  (t) =>
                    `  sign in as ${t.subject} (${t.roles.join(", ")}): ${stack.addresses.gateway}/#token=${t.token}\n`,
                )
                .join("") +
              `  each person reaches only the workspaces they own or were added to: gatehouse workspace create --owner user:${stack.devTokens[0]?.subject ?? "<subject>"}, or gatehouse members add <workspace> user:<subject>\n`,
          );
          if (stack.sandboxMode !== "gvisor") {
            process.stderr.write(
              "WARNING: gVisor layer is OFF — the V8 isolate is the only wall around agent code\n",
            );
          }
          const stop = async () => {
            removeDevFile(dir);
            await stack.close();
            await stopTracing();
            process.exit(0);
          };
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
        } catch (err) {
          let message = (err as Error).message;
          const storeError = ["StoreUnavailable", "StoreSchemaMismatch"].includes((err as Error).name);
          if (!storeError && process.env.TEMPORAL_ADDRESS && /connect|deadline|UNAVAILABLE/i.test(message)) {
            message = `cannot reach Temporal at ${process.env.TEMPORAL_ADDRESS} (TEMPORAL_ADDRESS): ${message}; unset TEMPORAL_ADDRESS to run the bundled dev server`;
          }
          process.stderr.write(
            /EADDRINUSE|address already in use/i.test(message)
              ? `gatehouse dev: a port from ${base} to ${base + lastOffset}, or ${webPort}, is already in use; stop what holds it or pass --port-base <n> / --web-port <n>\n`
              : `gatehouse dev: ${message}\n`,
          );
          process.exit(1);
        }
      },
    );
}

/**
 * The PostgreSQL gatekeeper's registry named by `--postgres-registry` (services/gatekeeper-postgres/src/registry.ts).
 * Exits 2 naming the file and the problem when it cannot be read, is not YAML or fails validation
 * (nothing has started yet). Call after loadDevStack (the compiled CLI loads the package from source).
 */
async function loadPostgresRegistry(file: string) {
  const { loadRegistryFile } = await import("@gatehouse/gatekeeper-postgres");
  const path = resolve(file);
  try {
    return await loadRegistryFile(path);
  } catch (err) {
    const message = (err as Error).message;
    // The file's path is named once: in the message when it says it, else before it.
    const flag = message.includes(path) ? "--postgres-registry" : `--postgres-registry ${path}`;
    process.stderr.write(`gatehouse dev: ${flag}: ${message}\n`);
    process.exit(2);
  }
}

/**
 * The first of `ports` (name, port on 127.0.0.1) that something listens on, as "port 7001 (kernel)
 * is already in use by pid 1234 (node …); stop it (kill 1234)", or undefined when all are free.
 */
async function busyPorts(ports: Array<[string, number]>): Promise<string | undefined> {
  for (const [name, port] of ports) {
    if (!(await canConnect(port))) continue;
    const holder = await portHolder(port);
    return holder
      ? `port ${port} (${name}) is already in use by ${describeProcess(holder)}; stop it (kill ${holder.pid})`
      : `port ${port} (${name}) is already in use; \`ss -ltnp 'sport = :${port}'\` names what holds it`;
  }
  return undefined;
}

/**
 * Single sign-on for `gatehouse dev` from the gateway's variables: OIDC_ISSUER with OIDC_CLIENT_ID
 * (the web app's public client; also the audience unless OIDC_AUDIENCE is set), OIDC_SCOPE,
 * OIDC_ROLES_CLAIM. Absent OIDC_ISSUER: dev tokens only.
 * @throws Error naming the missing variable.
 */
function oidcFromEnv(env: NodeJS.ProcessEnv): { oidc?: OidcOptions } {
  if (!env.OIDC_ISSUER) return {};
  const clientId = env.OIDC_CLIENT_ID;
  const audience = env.OIDC_AUDIENCE ?? clientId;
  if (!audience)
    throw new Error("OIDC_ISSUER is set: also set OIDC_CLIENT_ID (the web app's client id) or OIDC_AUDIENCE");
  return {
    oidc: {
      issuer: env.OIDC_ISSUER,
      audience,
      ...(clientId ? { clientId } : {}),
      ...(env.OIDC_SCOPE ? { scope: env.OIDC_SCOPE } : {}),
      ...(env.OIDC_ROLES_CLAIM ? { rolesClaim: env.OIDC_ROLES_CLAIM } : {}),
    },
  };
}
