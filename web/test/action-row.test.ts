/**
 * The inbox row (src/components/ActionRow.tsx) rendered to HTML with react-dom/server: it leads with
 * the gatekeeper's summary (the title follows), falls back to the title when the summary is empty,
 * badges risks (kind shown, reasons in the hover title) and pre-flight warnings, keeps invisible
 * characters visible, and links to the detail page with a plain hash href (no router lookup per row).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Action } from "@gatehouse/gateway-contract";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { ActionRow } from "../src/components/ActionRow.tsx";

const action = (over: Partial<Action>): Action =>
  ({
    id: 7,
    workspaceId: "ws 1",
    title: "Call write_file on files",
    status: "pending",
    binding: "FILES",
    actionKind: { tag: "write_file", label: "write file" },
    caller: { kind: "agent", id: "a1" },
    delivery: "await",
    dependsOn: [],
    egress: false,
    outcomeUnknown: false,
    reason: "",
    submittedAt: "",
    decidedAt: "",
    summary: "",
    fields: [],
    risks: [],
    preflightWarnings: [],
    preview: "",
    ...over,
  }) as unknown as Action;

const html = (a: Action) => renderToStaticMarkup(createElement(ActionRow, { action: a }));

test("a row leads with the gatekeeper's summary and keeps the title after it", () => {
  const out = html(action({ summary: "Write 12 lines to docs/a.md" }));
  assert.match(out, /data-testid="row-summary">Write 12 lines to docs\/a\.md</);
  assert.ok(out.indexOf("Write 12 lines") < out.indexOf("Call write_file on files"), "summary before title");
});

test("a row without a summary shows the title, and no summary element", () => {
  const out = html(action({}));
  assert.match(out, /Call write_file on files/);
  assert.doesNotMatch(out, /row-summary/);
  assert.doesNotMatch(out, /risk-badge|preflight-badge/);
});

test("risks show as a badge naming the first kind, every reason in its hover title; warnings as their own badge", () => {
  const out = html(
    action({
      risks: [
        { kind: "destructive", reason: "DROP TABLE customers" },
        { kind: "content", reason: "invisible character U+200B" },
      ],
      preflightWarnings: ["parent directory docs/ does not exist"],
    }),
  );
  assert.match(out, /data-testid="risk-badge" title="destructive: DROP TABLE customers\ncontent: invisible/);
  assert.match(out, />destructive \+1</);
  assert.match(
    out,
    /data-testid="preflight-badge" title="parent directory docs\/ does not exist">pre-flight warning</,
  );
});

test("a summary's invisible characters show as tokens", () => {
  const out = html(action({ summary: "Write a\u200Bb.md" }));
  assert.match(out, /⟨U\+200B⟩/);
});

test("the row's link is a plain hash href to the action's detail page", () => {
  assert.match(html(action({})), /href="#\/ws\/ws%201\/actions\/7"/);
});
