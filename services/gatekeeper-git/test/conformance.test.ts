/**
 * The kit's gatekeeper conformance suite against the git gatekeeper and REAL git: a bare
 * repository served from a temp root (`makeRepo`), one harness (`startHarness`) for every case.
 * The binding is scoped to `docs/` (`#path=docs/`); writes are commits on main.
 */
import { gatekeeperConformance } from "@gatehouse/gatekeeper-kit/conformance";
import { makeRepo, sh, startHarness } from "./helpers.ts";

gatekeeperConformance({
  name: "git",
  async start() {
    const repo = makeRepo({ "docs/guide.md": "guide\n", "src/secret.ts": "secret\n" });
    const h = await startHarness([repo.root]);
    const url = `${repo.url}#path=docs/`;
    /** A fresh session: its RepoApi (closed with the harness). */
    const session = () => h.open(url).repo;
    return {
      approval: h.approval,
      client: () => h.client,
      workspaceId: "ws-1",
      binding: "REPO",
      url,
      trust: "byo",
      read: () => session().readFile({ path: "docs/guide.md" }),
      failingRead: () => session().readFile({ path: "docs/missing.md" }),
      outOfScopeIds: { existing: "src/secret.ts", missing: "src/missing.ts" },
      outOfScopeRead: (which) =>
        session().readFile({ path: which === "existing" ? "src/secret.ts" : "src/missing.ts" }),
      async stageWrite(marker) {
        const res = await session().commit({
          branch: "main",
          message: marker,
          changes: [{ path: `docs/${marker}.md`, content: `${marker}\n` }],
        });
        return res.id;
      },
      effects: async (marker) =>
        sh(repo.bare, "log", "--format=%s", "main")
          .split("\n")
          .filter((s) => s === marker).length,
      async overlay() {
        const r = session();
        const log = await r.log();
        return { log: log.commits, files: (await r.listFiles()).files };
      },
      restart: () => h.restart(),
      async close() {
        await h.close();
        repo.cleanup();
      },
    };
  },
});
