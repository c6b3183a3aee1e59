/**
 * Source evaluated INSIDE the isolate, before the snippet. Everything the snippet can reach beyond
 * the ECMAScript built-ins is granted here, and only here:
 *
 * - `Symbol.dispose` / `Symbol.asyncDispose` (registered symbols, as capnweb expects),
 * - `queueMicrotask(fn)` (a resolved-promise job; errors thrown by `fn` are swallowed),
 * - `console.{log,info,warn,error,debug}` forwarding text to the isolate host (capped there),
 * - `env` (the argument of the default export): a frozen plain object holding one capnweb stub per
 *   granted binding.
 *
 * Not granted: fetch, require, process, setTimeout/setInterval, TextEncoder, WebAssembly is left as V8
 * provides it (it cannot reach the host). capnweb itself is loaded inside a closure, so it is not a global.
 */

/** Script run before the capnweb IIFE: globals capnweb needs at load time. */
export const GLOBALS_SOURCE = `
"use strict";
if (typeof Symbol.dispose !== "symbol") Object.defineProperty(Symbol, "dispose", { value: Symbol.for("dispose") });
if (typeof Symbol.asyncDispose !== "symbol") Object.defineProperty(Symbol, "asyncDispose", { value: Symbol.for("asyncDispose") });
Object.defineProperty(globalThis, "queueMicrotask", {
  value: function queueMicrotask(fn) {
    if (typeof fn !== "function") throw new TypeError("queueMicrotask: argument must be a function");
    Promise.resolve().then(() => { try { fn(); } catch {} });
  },
  writable: true, configurable: true,
});
`;

/**
 * Script evaluating to the setup function. Called by the isolate host as
 * `setup(capnweb, sendRef, logRef, granted, outputCapChars)` and returns `{ deliver, run }`:
 * - granted: `[{name, methods}]`; `env[name]` is a frozen plain object with exactly those methods, each
 *   forwarding to the binding's capnweb main stub (so a method not on the interface is `undefined`
 *   and never produces a frame); each method first checks that its arguments are plain JSON (or
 *   stubs / pipelined results a binding returned) and throws a TypeError naming the argument and the
 *   path inside it otherwise (a Promise, thenable, stream, Map, Set, Date, typed array, class instance,
 *   function, bigint, symbol, non-finite number, cycle): no frame is sent for such a call
 * - capnweb: the capnweb namespace (loaded in a closure, never a global)
 * - sendRef: ivm.Reference `(binding: string, frame: string) => void` (frame out to the runner)
 * - logRef: ivm.Reference `(level: string, text: string) => void`
 * - deliver(binding, frame): hands one inbound capnweb frame to that binding's session
 * - run(namespace): calls the default export with env; resolves to a JSON string
 *   `{ok:true, returnJson}` or `{ok:false, error:{name,message,stack}}`
 */
export const SETUP_SOURCE = `
(function setup(capnweb, sendRef, logRef, granted, outputCapChars) {
  "use strict";
  const stringify = JSON.stringify;
  const toStr = String;

  function format(value) {
    if (typeof value === "string") return value;
    if (typeof value === "function") return "[Function]";
    if (value instanceof Error) return typeof value.stack === "string" ? value.stack : toStr(value);
    try {
      const json = stringify(value);
      return json === undefined ? toStr(value) : json;
    } catch {
      try { return toStr(value); } catch { return "[unprintable]"; }
    }
  }

  // Forward at most outputCapChars + 1 characters: the isolate host counts UTF-8 bytes (>= characters),
  // so it always sees the overflow and appends the truncation marker itself.
  const budget = outputCapChars + 1;
  let usedChars = 0;
  let cut = false;
  function emit(level, args) {
    if (cut) return;
    let text = "";
    for (let i = 0; i < args.length; i++) text += (i ? " " : "") + format(args[i]);
    usedChars += text.length;
    if (usedChars > budget) {
      cut = true;
      text = text.slice(0, Math.max(0, text.length - (usedChars - budget)));
    }
    logRef.applyIgnored(undefined, [level, text]);
  }
  const consoleObject = {};
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    consoleObject[level] = (...args) => emit(level, args);
  }
  Object.defineProperty(globalThis, "console", { value: Object.freeze(consoleObject), writable: true, configurable: true });

  class HostTransport {
    constructor(name) { this.name = name; this.queue = []; this.waiters = []; this.closed = null; }
    send(message) { sendRef.applyIgnored(undefined, [this.name, message]); }
    receive() {
      if (this.queue.length > 0) return Promise.resolve(this.queue.shift());
      if (this.closed) return Promise.reject(this.closed);
      return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
    }
    deliver(message) {
      const waiter = this.waiters.shift();
      if (waiter) waiter.resolve(message); else this.queue.push(message);
    }
    abort(_reason) {}
  }

  // Arguments of a binding call must be plain JSON (or capnweb stubs/pipelined results the bindings
  // returned). Checked before capnweb sees them, so a Promise, stream, Map, class instance or function
  // is named with its path instead of failing inside capnweb's serializer. Intrinsics are captured
  // now, before the snippet can replace them (this is a courtesy to the snippet; gatekeepers validate).
  const getProto = Object.getPrototypeOf;
  const isArray = Array.isArray;
  const keysOf = Object.keys;
  const finite = Number.isFinite;
  const ObjectProto = Object.prototype;
  const PromiseProto = Promise.prototype;
  const StubProto = capnweb.RpcStub.prototype;
  const RpcPromiseProto = capnweb.RpcPromise.prototype;
  const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const MAX_DEPTH = 100;
  const TIPS = {
    Map: "pass Object.fromEntries(map) or [...map]",
    Set: "pass [...set]",
    Date: "pass date.toISOString()",
    RegExp: "pass its source as a string",
  };

  function kindOf(proto) {
    try {
      const c = proto && proto.constructor;
      return typeof c === "function" && typeof c.name === "string" && c.name !== "" ? c.name : "";
    } catch { return ""; }
  }

  // "is a Map" / "is an Error": the phrase naming a kind, with its article.
  function isA(kind) {
    return (/^[AEIO]/.test(kind) ? "is an " : "is a ") + kind; // "a Uint8Array", "a URL"
  }

  // Why the object value (prototype proto) is not a plain JSON object (a phrase), or "" when it is.
  function whyNot(value, proto) {
    if (proto === PromiseProto) return "is a Promise; await it first";
    let then;
    try { then = value.then; } catch { then = undefined; }
    if (typeof then === "function") return "is a thenable (an object with a then method); await it first";
    let streamy = false;
    try { streamy = typeof value.getReader === "function" || typeof value.getWriter === "function" || typeof value.pipeTo === "function"; } catch {}
    if (streamy) return "is a stream; read it into a string first";
    if (proto === ObjectProto) return "";
    if (proto === null) return "is an object with a null prototype; copy it into a {} literal";
    const kind = kindOf(proto);
    if (/Array$|^ArrayBuffer$|^DataView$/.test(kind) && kind !== "Array") return isA(kind) + "; pass the data as a string or an array of numbers";
    if (TIPS[kind]) return isA(kind) + "; " + TIPS[kind];
    return kind ? isA(kind) + " (a class instance); pass its data as a plain object" : "is not a plain object";
  }

  // The first non-JSON value inside value: {path, why}, or null. path is relative ("" = value itself).
  function findBad(value, path, stack) {
    switch (typeof value) {
      case "string": case "boolean": case "undefined": return null;
      case "number": return finite(value) ? null : { path, why: "is " + toStr(value) + ", not a JSON number" };
      case "bigint": return { path, why: "is a bigint; pass a number or a decimal string" };
      case "symbol": return { path, why: "is a symbol" };
    }
    if (value === null) return null;
    let proto;
    try { proto = getProto(value); } catch { return { path, why: "is an object that cannot be inspected" }; }
    if (proto === StubProto || proto === RpcPromiseProto) return null;
    if (typeof value === "function") return { path, why: "is a function; functions cannot be passed to a binding" };
    if (stack.includes(value)) return { path, why: "refers back to an enclosing value (a cycle)" };
    if (stack.length >= MAX_DEPTH) return { path, why: "nests more than " + MAX_DEPTH + " levels deep" };
    if (isArray(value) && proto === Array.prototype) {
      stack.push(value);
      for (let i = 0; i < value.length; i++) {
        const bad = findBad(value[i], path + "[" + i + "]", stack);
        if (bad) return bad;
      }
      stack.pop();
      return null;
    }
    const why = whyNot(value, proto);
    if (why) return { path, why };
    stack.push(value);
    for (const key of keysOf(value)) {
      const step = IDENT.test(key) ? (path ? "." : "") + key : "[" + stringify(key) + "]";
      const bad = findBad(value[key], path + step, stack);
      if (bad) return bad;
    }
    stack.pop();
    return null;
  }

  // Throws a TypeError naming the argument (1-based) and the path inside it when args are not plain JSON.
  function checkArgs(binding, method, args) {
    for (let i = 0; i < args.length; i++) {
      const bad = findBad(args[i], "", []);
      if (bad) {
        throw new TypeError("env." + binding + "." + method + ": argument " + (i + 1) +
          (bad.path ? " (" + bad.path + ")" : "") + " " + bad.why +
          "; binding arguments must be plain JSON (objects, arrays, strings, finite numbers, booleans, null)");
      }
    }
  }

  // capnweb rebuilds an error whose name is not a built-in class (a gatekeeper's StatementRefused,
  // ApprovalRefused, ...) as a plain Error; the gatekeeper kit sends its stack as exactly
  // "<name>: <message>", so the name is put back from there and nowhere else.
  function named(error) {
    if (error instanceof Error && error.name === "Error" && typeof error.stack === "string") {
      const m = /^([A-Za-z_$][\\w$]{0,63}): /.exec(error.stack);
      if (m && m[1] !== "Error" && error.stack === m[1] + ": " + error.message) {
        try { Object.defineProperty(error, "name", { value: m[1], configurable: true, writable: true }); } catch {}
      }
    }
    return error;
  }
  // A binding call's RpcPromise with then/catch/finally rejecting with the named error; every other
  // property (pipelined calls, capnweb's own markers) goes to the RpcPromise itself.
  const reflectGet = Reflect.get;
  const ProxyCtor = Proxy;
  function withNames(promise) {
    const then = (onFulfilled, onRejected) =>
      promise.then(onFulfilled, (e) => {
        const err = named(e);
        if (typeof onRejected === "function") return onRejected(err);
        throw err;
      });
    return new ProxyCtor(promise, {
      get(target, key) {
        if (key === "then") return then;
        if (key === "catch") return (onRejected) => then(undefined, onRejected);
        if (key === "finally")
          return (onFinally) =>
            then(
              (v) => Promise.resolve(typeof onFinally === "function" ? onFinally() : undefined).then(() => v),
              (e) => Promise.resolve(typeof onFinally === "function" ? onFinally() : undefined).then(() => { throw e; }),
            );
        return reflectGet(target, key);
      },
    });
  }

  const transports = new Map();
  const env = {};
  for (const binding of granted) {
    const name = binding.name;
    const transport = new HostTransport(name);
    transports.set(name, transport);
    const stub = new capnweb.RpcSession(transport).getRemoteMain();
    const facade = {};
    for (const method of binding.methods) {
      // Returns capnweb's RpcPromise behind withNames, so pipelined calls keep working.
      Object.defineProperty(facade, method, {
        value: (...args) => {
          checkArgs(name, method, args);
          return withNames(stub[method](...args));
        },
        enumerable: true,
      });
    }
    env[name] = Object.freeze(facade);
  }
  Object.freeze(env);

  function describe(error) {
    try {
      if (error !== null && typeof error === "object") {
        return {
          name: toStr(error.name === undefined ? "Error" : error.name),
          message: toStr(error.message === undefined ? "" : error.message),
          stack: typeof error.stack === "string" ? error.stack : "",
        };
      }
      return { name: "Error", message: "non-Error value thrown: " + format(error), stack: "" };
    } catch {
      return { name: "Error", message: "an unreadable value was thrown", stack: "" };
    }
  }

  function deliver(binding, message) {
    const transport = transports.get(binding);
    if (transport) transport.deliver(message);
  }

  async function run(namespace) {
    const main = namespace.default;
    if (typeof main !== "function") {
      return stringify({ ok: false, error: {
        name: "SnippetShapeError",
        message: "the snippet has no default export function; write \`export default async (env) => { ... }\`",
        stack: "" } });
    }
    let value;
    try {
      value = await main(env);
    } catch (error) {
      return stringify({ ok: false, error: describe(error) });
    }
    try {
      const json = value === undefined ? "" : stringify(value);
      return stringify({ ok: true, returnJson: json === undefined ? "" : json });
    } catch (error) {
      const d = describe(error);
      return stringify({ ok: false, error: { name: "ResultNotSerializableError",
        message: "the value returned by the snippet is not JSON-serializable (" + d.message + "); return plain data", stack: "" } });
    }
  }

  return { deliver, run };
})
`;
