import assert from "node:assert/strict";
import { after, test } from "node:test";
import { createRemotes, InvalidResourceUrl, parseGitResource } from "../src/index.ts";
import { makeRepo } from "./helpers.ts";

const repo = makeRepo({ "README.md": "hi\n" });
const policy = { allowedRoots: [repo.root], remotes: [], cacheDir: `${repo.root}/cache` };
after(() => repo.cleanup());

test("a git+file URL under an allowed root parses, with branch and path fragments", () => {
  const r = parseGitResource(`${repo.url}#branch=main&path=docs/`, policy);
  assert.equal(r.repoPath, repo.bare);
  assert.equal(r.gitDir, repo.bare);
  assert.equal(r.branch, "main");
  assert.equal(r.pathPrefix, "docs/");
  assert.equal(r.normalizedUrl, `${repo.url}#branch=main&path=docs/`);
  const plain = parseGitResource(repo.url, policy);
  assert.equal(plain.branch, undefined);
  assert.equal(plain.pathPrefix, "");
  assert.equal(parseGitResource(`${repo.url}#path=docs`, policy).pathPrefix, "docs/");
});

test("fragments fail closed: unknown key, duplicate, empty value, escaping path — each named", () => {
  const cases: [string, RegExp][] = [
    ["#tool=x", /unknown fragment key "tool"/],
    ["#branch=main&branch=dev", /"branch" appears more than once/],
    ["#path=a/&path=b/", /"path" appears more than once/],
    ["#branch=", /"branch=" has an empty value/],
    ["#path=", /"path=" has an empty value/],
    ["#path=docs/../src", /"path=" must not contain '\.\.'/],
    ["#path=/etc", /"path=" must be relative/],
    ["#branch=-x", /"branch=" is not a valid branch name/],
    ["#", /fragment after '#' is empty/],
  ];
  for (const [frag, re] of cases) {
    assert.throws(
      () => parseGitResource(repo.url + frag, policy),
      (e: Error) => {
        assert.ok(e instanceof InvalidResourceUrl, `${frag}: ${e.name}`);
        assert.match(e.message, re, frag);
        return true;
      },
    );
  }
});

test("repositories outside the allowed roots and malformed local URLs are refused", () => {
  assert.throws(
    () => parseGitResource(repo.url, { ...policy, allowedRoots: ["/nonexistent-root"] }),
    /not under an allowed root/,
  );
  assert.throws(() => parseGitResource(`git+file://${repo.root}/../x`, policy), /no '\.\.' segments/);
  assert.throws(() => parseGitResource("git+file://host/x.git", policy), /empty host and an absolute path/);
  assert.throws(
    () => parseGitResource(`git+file://${repo.root}/missing.git`, policy),
    /not an existing directory/,
  );
  assert.throws(() => parseGitResource("file:///x", policy), InvalidResourceUrl);
});

test("remote URLs: allowed only under an admin prefix, never with a password, '..', a query or plain http off loopback", () => {
  const remotes = createRemotes({
    remotes: [{ url: "https://git.example.com/platform/" }, { url: "http://127.0.0.1:9/", restricted: true }],
  });
  const p = { ...policy, remotes };
  const r = parseGitResource("git+https://git.example.com/platform/app.git#branch=main", p);
  assert.equal(r.remote?.url, "https://git.example.com/platform/app.git");
  assert.equal(r.normalizedUrl, "git+https://git.example.com/platform/app.git#branch=main");
  assert.equal(r.restricted, false);
  assert.ok(r.gitDir.startsWith(`${policy.cacheDir}/mirrors/`), "served from a mirror in the cache dir");
  assert.equal(parseGitResource("git+http://127.0.0.1:9/x.git", p).restricted, true);
  const cases: [string, RegExp][] = [
    ["git+https://git.example.com/other/app.git", /no administrator-allowed remote covers/],
    ["git+https://git.example.com/platformx/app.git", /no administrator-allowed remote covers/],
    ["git+https://git.example.com/platform/../other/app.git", /must not contain '\.' or '\.\.'/],
    ["git+https://git.example.com/platform/%2e%2e/other.git", /must not contain/],
    ["git+https://bot:secret@git.example.com/platform/app.git", /must not carry a password/],
    ["git+https://git.example.com/platform/app.git?x=1", /without a query/],
    ["git+http://git.example.com/platform/app.git", /only on loopback/],
    ["git+ssh://git@git.example.com/platform/app.git", /no administrator-allowed remote covers/],
    ["svn://x/y", /scheme must be/],
  ];
  for (const [url, re] of cases) {
    assert.throws(
      () => parseGitResource(url, p),
      (e: Error) => {
        assert.ok(e instanceof InvalidResourceUrl, `${url}: ${e.name}`);
        assert.match(e.message, re, url);
        assert.ok(!e.message.includes("secret"), "a password never appears in an error");
        return true;
      },
    );
  }
});

test("the remotes file is validated with errors naming the field", () => {
  assert.throws(
    () => createRemotes({ remotes: [{ url: "ftp://x/" }] }),
    /remotes\.0\.url: url must be an https/,
  );
  assert.throws(
    () => createRemotes({ remotes: [{ url: "https://x/", username: "bot" }] }),
    /need both username and tokenFile/,
  );
  assert.throws(
    () => createRemotes({ remotes: [{ url: "ssh://git@x/" }] }),
    /ssh remotes need sshKeyFile and knownHostsFile/,
  );
  assert.throws(
    () =>
      createRemotes({ remotes: [{ url: "https://x/", username: "bot", tokenFile: "/nonexistent/token" }] }),
    /remotes\.0\.tokenFile cannot be read \(ENOENT\)/,
  );
  assert.throws(
    () => createRemotes({ remotes: [{ url: "https://x/", bogus: 1 }] } as never),
    /Unrecognized key/,
  );
});
