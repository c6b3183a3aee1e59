/**
 * Remote repositories over ssh, against a real OpenSSH server started by the test on loopback
 * (its own host key, config and authorized key; the current user logs in with a key only the
 * gatekeeper holds). Host keys are always checked: a wrong known_hosts entry refuses the remote.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { freePort, waitUntil } from "@gatehouse/service-kit";
import { createRemotes } from "../src/index.ts";
import { type Harness, makeRepo, startHarness, type TestRepo } from "./helpers.ts";

const SSHD = "/usr/sbin/sshd";

let repo: TestRepo;
let sshd: ChildProcess | undefined;
let port = 0;
let keys: { client: string; knownHosts: string; wrongKnownHosts: string };

before(async () => {
  assert.ok(existsSync(SSHD), "openssh-server is not installed; run npm run setup");
  repo = makeRepo({ "README.md": "one\n" });
  const d = join(repo.root, "ssh");
  mkdirSync(d, { mode: 0o700 });
  const keygen = (file: string) => execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", file]);
  keygen(join(d, "host"));
  keygen(join(d, "other-host"));
  keygen(join(d, "client"));
  execFileSync("cp", [join(d, "client.pub"), join(d, "authorized_keys")]);
  port = await freePort();
  // sshd refuses to start without its privilege separation directory.
  if (!existsSync("/run/sshd")) mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  writeFileSync(
    join(d, "sshd_config"),
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(d, "host")}`,
      `AuthorizedKeysFile ${join(d, "authorized_keys")}`,
      `PidFile ${join(d, "sshd.pid")}`,
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      "StrictModes no",
      "UsePAM no",
      "",
    ].join("\n"),
  );
  sshd = spawn(SSHD, ["-D", "-e", "-f", join(d, "sshd_config")], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  sshd.stderr?.on("data", (c) => {
    err += c;
  });
  const hostPub = execFileSync("cat", [join(d, "host.pub")], { encoding: "utf8" })
    .trim()
    .split(" ");
  const otherPub = execFileSync("cat", [join(d, "other-host.pub")], { encoding: "utf8" })
    .trim()
    .split(" ");
  writeFileSync(join(d, "known_hosts"), `[127.0.0.1]:${port} ${hostPub[0]} ${hostPub[1]}\n`);
  writeFileSync(join(d, "wrong_known_hosts"), `[127.0.0.1]:${port} ${otherPub[0]} ${otherPub[1]}\n`);
  keys = {
    client: join(d, "client"),
    knownHosts: join(d, "known_hosts"),
    wrongKnownHosts: join(d, "wrong_known_hosts"),
  };
  await waitUntil("sshd's listening line", () => {
    if (sshd?.exitCode != null) throw new Error(`sshd exited with ${sshd.exitCode}: ${err}`);
    return err.includes("Server listening");
  });
});

after(() => {
  sshd?.kill("SIGTERM");
  repo?.cleanup();
});

async function harness(knownHosts: string, cache: string): Promise<Harness> {
  return startHarness([repo.root], undefined, {
    remotes: createRemotes({
      remotes: [
        {
          url: `ssh://${userInfo().username}@127.0.0.1:${port}/`,
          sshKeyFile: keys.client,
          knownHostsFile: knownHosts,
        },
      ],
    }),
    cacheDir: join(repo.root, cache),
    fetchIntervalMs: 0,
  });
}

test("ssh remote: reads through the mirror, a commit is pushed over ssh only when applied", async () => {
  const h = await harness(keys.knownHosts, "cache-ok");
  try {
    const url = `git+ssh://${userInfo().username}@127.0.0.1:${port}${repo.bare}`;
    const { repo: r } = h.open(url);
    assert.equal(await r.readFile({ path: "README.md" }), "one\n");
    const c = await r.commit({
      branch: "main",
      message: "over ssh",
      changes: [{ path: "README.md", content: "two\n" }],
    });
    assert.equal(c.id, "~1");
    assert.deepEqual(repo.subjects(), ["initial"]);
    assert.equal(h.approval.submissions[0]?.description.egress, true);
    const res = await h.apply(url, "~1");
    assert.equal(res.ok, true, res.error);
    assert.deepEqual(repo.subjects(), ["over ssh", "initial"]);
    assert.equal(repo.show("main", "README.md"), "two");
  } finally {
    await h.close();
  }
});

test("ssh remote: a host key that does not match known_hosts refuses the remote", async () => {
  const h = await harness(keys.wrongKnownHosts, "cache-wrong");
  try {
    const url = `git+ssh://${userInfo().username}@127.0.0.1:${port}${repo.bare}`;
    await assert.rejects(
      new Promise((ok, ko) => h.client.resolveResource({ url, name: "" }, (e, x) => (e ? ko(e) : ok(x)))),
      /could not be fetched with the gatekeeper's credentials/,
    );
  } finally {
    await h.close();
  }
});
