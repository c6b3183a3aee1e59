/** `gatehouse bindings` lists each binding's action kinds: which tags `gatehouse rule` accepts, and why not the others. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Binding } from "@gatehouse/proto";
import { actionKindLines } from "../src/commands/workspace.ts";

const binding = (actionKinds: Binding["actionKinds"]): Binding => ({
  name: "FILES",
  url: "mcp://files",
  gatekeeper: "mcp",
  trust: "vetted",
  dts: "",
  methods: [],
  actionKinds,
});

test("published kinds: auto-approvable ones say a rule may approve them, the others why they always need a person", () => {
  const text = actionKindLines(
    binding({
      kinds: [
        {
          tag: "mcp.tool.create_directory",
          label: "Create directory",
          autoApprovable: true,
          notAutoApprovableReason: "",
        },
        {
          tag: "mcp.tool.write_file",
          label: "Write file",
          autoApprovable: false,
          notAutoApprovableReason: "annotations.destructiveHint=true (must be false)",
        },
      ],
    }),
  );
  assert.match(text, /gatehouse rule <workspace> FILES <tag>/);
  assert.match(text, /mcp\.tool\.create_directory — Create directory: a rule may auto-approve it/);
  assert.match(
    text,
    /mcp\.tool\.write_file — Write file: always needs a person \(annotations\.destructiveHint=true/,
  );
});

test("a binding without actions, and one introduced before kinds were published, say so", () => {
  assert.match(actionKindLines(binding({ kinds: [] })), /none \(every method reads\)/);
  assert.match(
    actionKindLines(binding(undefined)),
    /not published .*gatehouse disconnect <workspace> FILES and connect it again/,
  );
});
