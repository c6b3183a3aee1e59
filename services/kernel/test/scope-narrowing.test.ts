/** checkNarrowsRequest: accepting a connection request keeps or narrows its scope fragment, never widens it. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidArgument } from "../src/domain/errors.ts";
import { checkNarrowsRequest } from "../src/domain/scope-narrowing.ts";

const rows: [requested: string, accepted: string, refusal: RegExp | undefined][] = [
  // A request without fragment asked for everything: any scope is narrower or the same.
  ["mcp://files", "mcp://files", undefined],
  ["mcp://files", "mcp://files#tool=read_text_file", undefined],
  // The same scope, a subset of the tools, the tools in another order or spelling.
  ["mcp://files#tool=write_file", "mcp://files#tool=write_file", undefined],
  ["mcp://files#tool=a&tool=b", "mcp://files#tool=b", undefined],
  ["mcp://files#tool=a&tool=b", "mcp://files#tool=b&tool=%61", undefined],
  ["mcp://files#tool=a", "mcp://files#server=files&tool=a", undefined],
  // Widening: the fragment dropped, a parameter dropped, a value not requested.
  [
    "mcp://files#tool=write_file",
    "mcp://files",
    /drops the request's scope parameter "tool" \(requested tool="write_file"\)/,
  ],
  ["mcp://files#tool=a", "mcp://files#server=files", /drops the request's scope parameter "tool"/],
  [
    "mcp://files#tool=a",
    "mcp://files#tool=a&tool=b",
    /parameter "tool" has "b", not among the requested "a"/,
  ],
  // git: a deeper path under a requested one is narrower; a sibling or a parent is not.
  ["git+file:///r.git#branch=main&path=docs/", "git+file:///r.git#branch=main&path=docs/api/", undefined],
  ["git+file:///r.git#path=docs/", "git+file:///r.git#path=docs", undefined],
  ["git+file:///r.git#path=docs/", "git+file:///r.git#branch=main&path=docs/", undefined],
  [
    "git+file:///r.git#path=docs/",
    "git+file:///r.git#path=docsx/",
    /parameter "path" has "docsx\/", not among the requested "docs\/" \(or under one of them\)/,
  ],
  ["git+file:///r.git#path=docs/api/", "git+file:///r.git#path=docs/", /parameter "path" has "docs\/"/],
  ["git+file:///r.git#branch=main", "git+file:///r.git#branch=dev", /parameter "branch" has "dev"/],
  [
    "git+file:///r.git#branch=main&path=docs/",
    "git+file:///r.git#path=docs/",
    /drops the request's scope parameter "branch"/,
  ],
  // postgres: tables of a requested schema are narrower than the schema; tables elsewhere are not.
  [
    "postgres://crm/shop#schema=sales",
    "postgres://crm/shop#table=sales.orders&table=sales.customers",
    undefined,
  ],
  ["postgres://crm/shop#table=sales.orders", "postgres://crm/shop#table=sales.orders", undefined],
  [
    "postgres://crm/shop#schema=sales",
    "postgres://crm/shop#table=sales.orders&table=hr.salaries",
    /parameter "table" has "hr.salaries", not within the requested schema="sales"/,
  ],
  ["postgres://crm/shop#schema=sales", "postgres://crm/shop#table=salesx.orders", /not within the requested/],
  ["postgres://crm/shop#schema=sales", "postgres://crm/shop#table=salesx", /not within the requested/],
  ["postgres://crm/shop#schema=sales", "postgres://crm/shop", /drops the request's scope parameter "schema"/],
  [
    "postgres://crm/shop#table=sales.orders",
    "postgres://crm/shop#schema=sales",
    /drops the request's scope parameter "table"/,
  ],
];

test("an accepted url keeps every parameter of the request's fragment with values among the requested ones (deeper paths allowed); otherwise it is refused naming the parameter and gatehouse connect", () => {
  for (const [requested, accepted, refusal] of rows) {
    const what = `${requested} accepted as ${accepted}`;
    if (!refusal) {
      assert.doesNotThrow(() => checkNarrowsRequest(requested, accepted), what);
      continue;
    }
    assert.throws(
      () => checkNarrowsRequest(requested, accepted),
      (e: Error) => {
        assert.ok(e instanceof InvalidArgument, what);
        assert.match(e.message, refusal, what);
        assert.match(
          e.message,
          /may only narrow the request — to grant more, connect the resource with `gatehouse connect`/,
        );
        return true;
      },
      what,
    );
  }
});
