import crypto, { createHash } from "node:crypto";
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
 * The chain hash of one event (docs/architecture.md "Events: the source of truth", events.proto EventMetadata):
 * `sha256hex(prevHash + canonical({type, data, metadata}))` where `metadata` is the stored
 * metadata without its `hash` field (it does include `prevHash`). Returns 64 lowercase hex chars.
 */
export function eventHash(type: string, data: unknown, metadata: Omit<StoredMetadata, "hash">): string {
  const { hash: _ignored, ...withoutHash } = metadata as StoredMetadata;
  const body = canonicalJson({ type, data, metadata: withoutHash });
  return createHash("sha256").update(metadata.prevHash).update(body).digest("hex");
}

/** sha256 hex of a UTF-8 string: the one-shot `crypto.hash` where Node has it (20.12+), else createHash. */
const sha256Hex: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (text) =>
        (crypto as unknown as { hash(a: string, d: string, e: string): string }).hash("sha256", text, "hex")
    : (text) => createHash("sha256").update(text).digest("hex");

/** What {@link chainEvent} gives for one event about to be stored. */
export interface ChainedEvent {
  /** The event's chain hash: 64 lowercase hex chars, exactly {@link eventHash}'s. */
  hash: string;
  /** The metadata to store, as JSON text: the given metadata (canonical member order) plus `hash`. */
  metadataJson: string;
}

/**
 * {@link eventHash} for an event whose data is already canonical JSON text (`dataJson` must be
 * `canonicalJson(data)`, as appends prepare it), plus the metadata text to store — without
 * canonicalizing the data a second time or serializing the metadata twice. The canonical body is
 * assembled from its three members in RFC 8785 key order ("data" < "metadata" < "type"), which is
 * byte for byte what `canonicalJson({type, data, metadata})` gives; a `hash` in `metadata` is ignored.
 */
export function chainEvent(
  type: string,
  dataJson: string,
  metadata: Omit<StoredMetadata, "hash">,
): ChainedEvent {
  const { hash: _ignored, ...withoutHash } = metadata as StoredMetadata;
  const metaJson = canonicalJson(withoutHash);
  const hash = sha256Hex(
    `${metadata.prevHash}{"data":${dataJson},"metadata":${metaJson},"type":${canonicalJson(type)}}`,
  );
  const comma = metaJson.length > 2 ? "," : "";
  return { hash, metadataJson: `${metaJson.slice(0, -1)}${comma}"hash":"${hash}"}` };
}
