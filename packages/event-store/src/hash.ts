import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import type { StoredMetadata } from "./port.ts";

// `canonicalize` is CommonJS whose typings declare an ESM default export; load it as CommonJS.
const canonicalize = createRequire(import.meta.url)("canonicalize") as (value: unknown) => string | undefined;

/**
 * RFC 8785 (JSON Canonicalization Scheme) text of a JSON value.
 * @throws Error when the value holds NaN/Infinity, a BigInt, a cycle, or is `undefined` at the top.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error("value is undefined, which has no JSON form");
  return text;
}

/**
 * The chain hash of one event (DESIGN.md "Events", events.proto EventMetadata):
 * `sha256hex(prevHash + canonical({type, data, metadata}))` where `metadata` is the stored
 * metadata without its `hash` field (it does include `prevHash`). Returns 64 lowercase hex chars.
 */
export function eventHash(type: string, data: unknown, metadata: Omit<StoredMetadata, "hash">): string {
  const { hash: _ignored, ...withoutHash } = metadata as StoredMetadata;
  const body = canonicalJson({ type, data, metadata: withoutHash });
  return createHash("sha256").update(metadata.prevHash).update(body).digest("hex");
}
