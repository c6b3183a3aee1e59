/**
 * The `host:port` addresses every service's configuration takes (`*_ADDR`, `APPROVAL_ADDRESS`, ...):
 * one zod schema (host name, IPv4, or bracketed IPv6; port 0-65535) and one way to split them.
 */
import { z } from "zod";

/**
 * A zod schema for "host:port"; `example` goes into the error message, e.g. "127.0.0.1:7004".
 * Port 0 asks the OS for a free port.
 */
export function hostPort(example: string) {
  return z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[^\s:[\]]+):\d{1,5}$/, `must be host:port, e.g. ${example}`)
    .refine((a) => {
      const port = /:(\d{1,5})$/.exec(a)?.[1];
      return port === undefined || Number(port) <= 65535; // a malformed address is the regex's to name
    }, "the port must be at most 65535");
}

/** Splits a validated "host:port" ("[::1]:7004" gives host "::1"). */
export function splitHostPort(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i).replace(/^\[|\]$/g, ""), port: Number(addr.slice(i + 1)) };
}
