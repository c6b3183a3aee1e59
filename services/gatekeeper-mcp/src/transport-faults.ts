/**
 * How the MCP gatekeeper reads an error of a tool call or of opening an MCP session, by the apply
 * outcome taxonomy of @gatehouse/gatekeeper-kit (apply-outcome.ts):
 *
 * - The server ANSWERED: a JSON-RPC error answer (an McpError with the server's code), or an HTTP
 *   4xx answer to the POST (except 408): the call failed with the server's error.
 * - The answer was LOST (the request may have reached the server): the connection closed (the
 *   SDK's ConnectionClosed; a stdio server process that exited), the answer timed out
 *   (RequestTimeout), the answer stream broke (`ResponseStreamLost`), an HTTP 5xx or 408, and every
 *   network error the kit's `classifyTransportError` does not prove unsent.
 * - NOT SENT: a network error that proves the POST never left (refused, DNS, TLS, ...), and any
 *   failure to open the MCP session (`ConnectFailed`): the tool call comes after it.
 *
 * Messages name the endpoint as `endpointOf` shows it (an HTTP endpoint's origin, never its path
 * or credentials; a stdio server by its registry name) and the cause.
 */
import { basename } from "node:path";
import {
  classifyTransportError,
  endpointOrigin,
  faultMessage,
  type TransportFault,
} from "@gatehouse/gatekeeper-kit";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { ServerUnavailable } from "./errors.ts";
import type { ResolvedResource } from "./resource-url.ts";

/** The endpoint of `resource` as messages name it: `http://host:port`, or `stdio server "name"`. */
export function endpointOf(resource: ResolvedResource): string {
  return resource.target.kind === "http"
    ? endpointOrigin(resource.target.url)
    : `stdio server "${resource.serverName}"`;
}

/** How a tool call that threw ended: answered with an error, or a transport fault (sent or not). */
export type CallEnd = { answered: true; error: string } | { answered: false; fault: TransportFault };

/**
 * Reads the error a tool call threw (see the file comment). `error` of an answered call is the
 * server's message as the SDK reports it.
 */
export function classifyCallError(err: unknown): CallEnd {
  if (err instanceof McpError) {
    if (err.code === ErrorCode.ConnectionClosed)
      return { answered: false, fault: { sent: true, cause: "closed", detail: "ConnectionClosed" } };
    if (err.code === ErrorCode.RequestTimeout)
      return { answered: false, fault: { sent: true, cause: "timeout", detail: "RequestTimeout" } };
    return { answered: true, error: err.message };
  }
  if (err instanceof StreamableHTTPError) {
    const code = err.code ?? -1;
    if (code >= 400 && code < 500 && code !== 408) return { answered: true, error: err.message };
    return {
      answered: false,
      fault: { sent: true, cause: "other", detail: code > 0 ? `HTTP ${code}` : "unexpected answer" },
    };
  }
  return { answered: false, fault: classifyTransportError(err) };
}

/**
 * The message of a call that threw without an answer, e.g. for a read: names the endpoint, the
 * cause, and whether the request was sent.
 * @param what the call, e.g. `read search_files`.
 */
export function callErrorMessage(what: string, resource: ResolvedResource, err: unknown): string {
  if (err instanceof ConnectFailed) return err.messageFor(what);
  const end = classifyCallError(err);
  if (end.answered) return `${what} failed: the MCP server answered with an error: ${end.error}`;
  return faultMessage(what, endpointOf(resource), end.fault);
}

/**
 * Opening the MCP session with a server failed (spawning a stdio server, connecting, the
 * initialize handshake): no tool call was sent. A ServerUnavailable for sessions and reads; an
 * apply turns it into "not sent" with `messageFor`.
 */
export class ConnectFailed extends ServerUnavailable {
  override name = "ConnectFailed";
  constructor(
    /** The endpoint as `endpointOf` names it. */
    readonly endpoint: string,
    /** The network fault when one was found and proves nothing was sent; else null. */
    readonly fault: TransportFault | null,
    /** Why the session could not be opened and what to check (used when `fault` is null). */
    readonly reason: string,
    serverName: string,
  ) {
    super(ConnectFailed.text(`opening a session with MCP server "${serverName}"`, endpoint, fault, reason));
  }

  /** `what` (e.g. "calling create_file") at the endpoint was not sent, why, and what to check. */
  messageFor(what: string): string {
    return ConnectFailed.text(what, this.endpoint, this.fault, this.reason);
  }

  private static text(what: string, endpoint: string, fault: TransportFault | null, reason: string): string {
    return fault ? faultMessage(what, endpoint, fault) : `${what} at ${endpoint} was not sent: ${reason}`;
  }
}

/** The ConnectFailed for an error of opening `resource`'s MCP session. */
export function connectFailed(resource: ResolvedResource, err: unknown): ConnectFailed {
  const endpoint = endpointOf(resource);
  const stdio = resource.target.kind === "stdio";
  const fault = classifyTransportError(err);
  const make = (reason: string) => new ConnectFailed(endpoint, null, reason, resource.serverName);
  if (!stdio && !fault.sent) return new ConnectFailed(endpoint, fault, "", resource.serverName);
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
    return make(
      "the server did not answer the MCP initialize request in time; check that it is an MCP server and that it is healthy",
    );
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)
    return make(
      stdio
        ? "the server process exited before the MCP session opened; check the registry entry's command, args and env, and the server's own log"
        : "the connection closed before the MCP session opened; check that the server is running and healthy",
    );
  if (err instanceof StreamableHTTPError)
    return make(
      `the server answered HTTP ${err.code ?? "?"} to the MCP initialize request; check that the URL is the server's MCP endpoint and that the server accepts this gatekeeper`,
    );
  if (stdio && resource.target.kind === "stdio") {
    const code = fault.detail ? ` [${fault.detail}]` : "";
    return make(
      `the command "${basename(resource.target.server.command)}" could not be started${code}; check the registry entry's command and args`,
    );
  }
  const code = fault.detail ? ` [${fault.detail}]` : "";
  return make(
    `the MCP session could not be opened (${(err as Error)?.name ?? "error"}${code}); check that the server is running and healthy`,
  );
}
