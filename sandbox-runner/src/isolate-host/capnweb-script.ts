import capnwebSource from "virtual:capnweb-iife";
import type ivm from "isolated-vm";

/**
 * Web platform classes whose prototypes capnweb's serializer compares values against, which a V8
 * isolate does not have. Without them, serializing any argument that is not a plain object, array,
 * Date or byte array (a stub, a pipelined result) throws "ReferenceError: WritableStream is not
 * defined". Declared inside capnweb's closure only, as classes that cannot be constructed, so no
 * value ever matches them and the snippet never sees them.
 */
const ABSENT_WEB_CLASSES = [
  "WritableStream",
  "ReadableStream",
  "URL",
  "Headers",
  "Request",
  "Response",
  "Blob",
];
const SHIMS = ABSENT_WEB_CLASSES.map(
  (n) =>
    `const ${n} = typeof globalThis.${n} === "function" ? globalThis.${n} : class ${n} { constructor() { throw new TypeError("${n} is not available in the sandbox"); } };`,
).join("\n");

/** capnweb wrapped in a function so the IIFE's `var capnweb` stays local (the snippet never sees it). */
const WRAPPED = `(function(){${SHIMS}\n${capnwebSource}\nreturn capnweb;})()`;
const FILENAME = "capnweb.js";

let cachedData: ivm.ExternalCopy<ArrayBuffer> | undefined;

/**
 * Loads capnweb into `context` (of `isolate`) and returns a reference to its namespace object
 * (synchronously: it is trusted harness code).
 * The first call compiles from source and keeps V8's code cache; later calls (each in a fresh isolate)
 * compile from that cache, which saves about half of the load time. A rejected cache is replaced.
 */
export function loadCapnweb(isolate: ivm.Isolate, context: ivm.Context): ivm.Reference {
  // isolated-vm sets these at run time; its typings omit them on Script.
  const script = isolate.compileScriptSync(
    WRAPPED,
    cachedData ? { filename: FILENAME, cachedData } : { filename: FILENAME, produceCachedData: true },
  ) as ivm.Script & { cachedData?: ivm.ExternalCopy<ArrayBuffer>; cachedDataRejected?: boolean };
  if (!cachedData || script.cachedDataRejected) cachedData = script.cachedData;
  return script.runSync(context, { reference: true }) as ivm.Reference;
}
