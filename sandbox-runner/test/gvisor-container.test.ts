import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type BundleTemplate, prepareBundleTemplate, removeBundleTemplate } from "../src/gvisor/bundle.ts";
import { startContainer } from "../src/gvisor/container.ts";
import { findRunsc } from "../src/gvisor/detect.ts";
import { ensureIsolateHost } from "../src/isolate-host-path.ts";
import { listeningServer } from "./helpers.ts";

const runsc = findRunsc();

/** Runs a tiny node script in the same kind of container the isolate host gets; returns its stdout. */
async function probe(
  template: BundleTemplate,
  script: string,
): Promise<{ stdout: string; code: number | null }> {
  const container = await startContainer(runsc!, template, [template.nodePath, "-e", script]);
  try {
    container.child.stdin.end();
    let stdout = "";
    container.child.stdout.setEncoding("utf8");
    container.child.stdout.on("data", (d: string) => {
      stdout += d;
    });
    const code = await new Promise<number | null>((resolve) => container.child.on("close", resolve));
    return { stdout, code };
  } finally {
    await container.destroy();
  }
}

describe("gVisor container (the one each isolate host runs in)", {
  skip: runsc ? false : "runsc not on PATH",
}, () => {
  let template: BundleTemplate;
  before(async () => {
    template = await prepareBundleTemplate(await ensureIsolateHost());
  });
  after(async () => {
    await removeBundleTemplate(template);
  });

  test("a process in the container cannot connect to a server listening on the host's 127.0.0.1", async () => {
    const server = await listeningServer();
    try {
      // Control: the same script run on the host does connect.
      const script = `const s = require("net").connect(${server.port}, "127.0.0.1");
        s.on("connect", () => { console.log("CONNECTED"); s.destroy(); });
        s.on("error", (e) => console.log("ERROR " + e.code));`;
      const { execFileSync } = await import("node:child_process");
      assert.match(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }), /CONNECTED/);
      while (server.connections() < 1) await new Promise((r) => setTimeout(r, 10));
      const before = server.connections();
      const { stdout } = await probe(template, script);
      assert.match(stdout, /^ERROR /m, `container output: ${stdout}`);
      assert.doesNotMatch(stdout, /CONNECTED/);
      assert.equal(server.connections(), before, "the host server saw a connection from the container");
    } finally {
      await server.close();
    }
  });

  test("the container cannot read /etc/shadow or the repository, runs as uid 65534, has a read-only root and /scratch is its only writable dir", async () => {
    const { stdout } = await probe(
      template,
      `const fs = require("fs");
       const tryRead = (p) => { try { fs.readdirSync(p).length; return "readable"; } catch (e) { try { fs.readFileSync(p); return "readable"; } catch (e2) { return e2.code; } } };
       let write; try { fs.writeFileSync("/evil", "x"); write = "wrote"; } catch (e) { write = e.code; }
       console.log(JSON.stringify({ shadow: tryRead("/etc/shadow"), work: tryRead("/work"), repo: tryRead("/work/main/package.json"),
         uid: process.getuid(), gid: process.getgid(), root: fs.readdirSync("/").sort(), write,
         tmp: (() => { try { fs.writeFileSync("/tmp/evil", "x"); return "writable"; } catch (e) { return e.code; } })(),
         scratch: (fs.writeFileSync(process.env.GATEHOUSE_SCRATCH + "/ok", "x"), process.env.GATEHOUSE_SCRATCH) }));`,
    );
    const seen = JSON.parse(stdout.trim()) as Record<string, unknown>;
    assert.notEqual(seen.shadow, "readable");
    assert.notEqual(seen.work, "readable");
    assert.notEqual(seen.repo, "readable");
    assert.equal(seen.uid, 65534);
    assert.equal(seen.gid, 65534);
    assert.notEqual(seen.write, "wrote");
    assert.notEqual(seen.tmp, "writable", "/tmp must not be writable: /scratch is the only writable place");
    assert.equal(seen.scratch, "/scratch");
    assert.ok(!(seen.root as string[]).includes("work"), `root holds ${(seen.root as string[]).join(",")}`);
  });
});
