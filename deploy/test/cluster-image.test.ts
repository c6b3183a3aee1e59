/**
 * deploy/cluster/image.sh builds container images without a registry or a Docker engine: umoci lays
 * out an OCI image from a rootfs directory and its config, and the script writes an OCI archive that
 * containerd names by its io.containerd.image.name annotation. These tests run the real script with
 * the real umoci (built into the cluster cache by scripts/setup.sh → deploy/cluster/build.sh tools)
 * and --no-import (no cluster needed; loading into containerd is covered by local-cluster.test.ts).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

const SCRIPT = join(import.meta.dirname, "../cluster/image.sh");
const work = mkdtempSync(join(tmpdir(), "gatehouse-image-test-"));
after(() => rmSync(work, { recursive: true, force: true }));

function run(args: string[]) {
  return spawnSync("bash", [SCRIPT, ...args], { encoding: "utf8", timeout: 120_000 });
}

type Json = Record<string, unknown>;
function blob(dir: string, digest: string): Buffer {
  return readFileSync(join(dir, "blobs", ...digest.split(":")));
}

test("image.sh writes an OCI archive of the rootfs with the entrypoint, user, env, workdir and the containerd name", () => {
  const rootfs = join(work, "rootfs");
  mkdirSync(join(rootfs, "app"), { recursive: true });
  writeFileSync(join(rootfs, "app", "run.sh"), "#!/bin/sh\necho hello\n");
  chmodSync(join(rootfs, "app", "run.sh"), 0o755);
  const out = join(work, "out", "demo.tar");
  const r = run([
    "--ref",
    "gatehouse.local/test/demo:1.2.3",
    "--rootfs",
    rootfs,
    "--no-import",
    "--out",
    out,
    "--entrypoint",
    "/app/run.sh",
    "--entrypoint",
    "--flag",
    "--cmd",
    "arg1",
    "--user",
    "10001:10001",
    "--env",
    "MODE=test",
    "--workdir",
    "/app",
    "--label",
    "org.example.k=v",
  ]);
  assert.equal(r.status, 0, `image.sh failed: ${r.stderr}`);
  assert.match(r.stdout, /wrote .*demo\.tar/);

  const layout = join(work, "layout");
  mkdirSync(layout);
  assert.equal(spawnSync("tar", ["-C", layout, "-xf", out]).status, 0);
  assert.deepEqual(JSON.parse(readFileSync(join(layout, "oci-layout"), "utf8")), {
    imageLayoutVersion: "1.0.0",
  });
  const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as { manifests: Json[] };
  assert.equal(index.manifests.length, 1);
  const entry = index.manifests[0] as { digest: string; annotations: Record<string, string> };
  assert.equal(entry.annotations["io.containerd.image.name"], "gatehouse.local/test/demo:1.2.3");
  assert.equal(entry.annotations["org.opencontainers.image.ref.name"], "1.2.3");

  const manifest = JSON.parse(blob(layout, entry.digest).toString()) as {
    config: { digest: string };
    layers: { digest: string; mediaType: string }[];
  };
  const config = JSON.parse(blob(layout, manifest.config.digest).toString()) as {
    os: string;
    architecture: string;
    config: Json;
  };
  assert.equal(config.os, "linux");
  assert.equal(config.architecture, "amd64");
  assert.deepEqual(config.config.Entrypoint, ["/app/run.sh", "--flag"]);
  assert.deepEqual(config.config.Cmd, ["arg1"]);
  assert.equal(config.config.User, "10001:10001");
  assert.equal(config.config.WorkingDir, "/app");
  assert.ok((config.config.Env as string[]).includes("MODE=test"));
  assert.deepEqual(config.config.Labels, { "org.example.k": "v" });

  assert.equal(manifest.layers.length, 1);
  const layerFile = join(layout, "blobs", ...manifest.layers[0]!.digest.split(":"));
  const listing = spawnSync("tar", ["-tvzf", layerFile], { encoding: "utf8" });
  assert.equal(listing.status, 0, listing.stderr);
  assert.match(listing.stdout, /^-rwxr-xr-x \S+ +\d+ .* app\/run\.sh$/m);
  assert.ok(readdirSync(join(layout, "blobs", "sha256")).length >= 3);
});

test("image.sh refuses bad input naming the flag and the fix", () => {
  const cases: [string[], RegExp][] = [
    [["--rootfs", work, "--no-import"], /--ref is required/],
    [
      ["--ref", "pause:3.10", "--rootfs", work, "--no-import"],
      /--ref pause:3\.10: expected DOMAIN\/NAME:TAG/,
    ],
    [["--ref", "gatehouse.local/x:1", "--no-import"], /--rootfs is required/],
    [
      ["--ref", "gatehouse.local/x:1", "--rootfs", join(work, "missing"), "--no-import"],
      /--rootfs .*missing: no such directory/,
    ],
    [
      ["--ref", "gatehouse.local/x:1", "--rootfs", work, "--user", "nobody", "--no-import"],
      /--user nobody: expected a numeric UID/,
    ],
    [
      ["--ref", "gatehouse.local/x:1", "--rootfs", work, "--env", "NOVALUE", "--no-import"],
      /--env NOVALUE: expected KEY=VALUE/,
    ],
    [["--ref", "gatehouse.local/x:1", "--rootfs", work, "--bogus"], /unknown argument --bogus/],
    [["--ref"], /--ref needs a value/],
  ];
  for (const [args, message] of cases) {
    const r = run(args);
    assert.equal(r.status, 2, `${args.join(" ")}: exit ${r.status}, stderr ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});
