import assert from "node:assert/strict";
import { after, test } from "node:test";
import { InvalidResourceUrl, NotSupportedYet, parseGitResource } from "../src/index.ts";
import { makeRepo } from "./helpers.ts";

const repo = makeRepo({ "README.md": "hi\n" });
after(() => repo.cleanup());

test("a git+file URL under an allowed root parses, with branch and path fragments", () => {
  const r = parseGitResource(`${repo.url}#branch=main&path=docs/`, [repo.root]);
  assert.equal(r.repoPath, repo.bare);
  assert.equal(r.gitDir, repo.bare);
  assert.equal(r.branch, "main");
  assert.equal(r.pathPrefix, "docs/");
  assert.equal(r.normalizedUrl, `${repo.url}#branch=main&path=docs/`);
  const plain = parseGitResource(repo.url, [repo.root]);
  assert.equal(plain.branch, undefined);
  assert.equal(plain.pathPrefix, "");
  assert.equal(parseGitResource(`${repo.url}#path=docs`, [repo.root]).pathPrefix, "docs/");
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
      () => parseGitResource(repo.url + frag, [repo.root]),
      (e: Error) => {
        assert.ok(e instanceof InvalidResourceUrl, `${frag}: ${e.name}`);
        assert.match(e.message, re, frag);
        return true;
      },
    );
  }
});

test("repositories outside the allowed roots and malformed local URLs are refused", () => {
  assert.throws(() => parseGitResource(repo.url, ["/nonexistent-root"]), /not under an allowed root/);
  assert.throws(() => parseGitResource(`git+file://${repo.root}/../x`, [repo.root]), /no '\.\.' segments/);
  assert.throws(
    () => parseGitResource("git+file://host/x.git", [repo.root]),
    /empty host and an absolute path/,
  );
  assert.throws(
    () => parseGitResource(`git+file://${repo.root}/missing.git`, [repo.root]),
    /not an existing directory/,
  );
  assert.throws(() => parseGitResource("file:///x", [repo.root]), InvalidResourceUrl);
});

test("remote https/ssh repositories are recognised and refused as not supported yet", () => {
  for (const url of [
    "git+https://github.com/org/repo.git",
    "git+ssh://git@github.com/org/repo.git#branch=main",
  ]) {
    assert.throws(
      () => parseGitResource(url, [repo.root]),
      (e: Error) => {
        assert.ok(e instanceof NotSupportedYet);
        assert.match(e.message, /not supported yet/);
        return true;
      },
    );
  }
});
