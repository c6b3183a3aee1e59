/**
 * restoreOverlayOnce after a restart: pending writes rejoin the overlay, used ids stay reserved,
 * and applied provisional ids get back the permanent id their result names (through the
 * gatekeeper's parser); results the parser does not know, or that clash, are left unaliased.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PendingOverlay } from "../src/overlay.ts";
import { ProvisionalIds } from "../src/provisional-ids.ts";
import { restoreOverlayOnce } from "../src/restore.ts";

const listing = {
  actions: [],
  usedLocalIds: ["~1", "~2", "~3", "~4"],
  applied: [
    { localId: "~1", resultJson: JSON.stringify({ id: "real-1" }) },
    { localId: "~2", resultJson: "not json" },
    { localId: "~3", resultJson: JSON.stringify({ id: "real-1" }) },
  ],
};

test("applied provisional ids are aliased to what their results name; unknown or clashing results are skipped", async () => {
  const state = { overlay: new PendingOverlay<string>(), ids: new ProvisionalIds() };
  const parse = (_localId: string, json: string) => {
    try {
      return (JSON.parse(json) as { id?: string }).id;
    } catch {
      return undefined;
    }
  };
  await restoreOverlayOnce(
    state,
    { listUnappliedForCaller: async () => listing },
    "token",
    () => undefined,
    parse,
  );
  assert.equal(state.ids.permanentOf("~1"), "real-1");
  assert.equal(state.ids.resolve("~1"), "real-1");
  assert.equal(state.ids.permanentOf("~2"), undefined, "a result the parser does not know");
  assert.equal(state.ids.permanentOf("~3"), undefined, "a result naming another id's permanent id");
  assert.equal(state.ids.next(), "~5", "used ids are never handed out again");
});

test("without a parser (or with an older approval service that lists no applied ids) only the reservations are restored", async () => {
  const state = { overlay: new PendingOverlay<string>(), ids: new ProvisionalIds() };
  await restoreOverlayOnce(
    state,
    { listUnappliedForCaller: async () => ({ actions: [], usedLocalIds: ["~2"] }) },
    "token",
    () => undefined,
  );
  assert.equal(state.ids.permanentOf("~1"), undefined);
  assert.equal(state.ids.next(), "~3");
});
