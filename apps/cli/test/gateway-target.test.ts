/**
 * GATEHOUSE_GATEWAY_URL + GATEHOUSE_TOKEN: unset URL = the services' gRPC; a URL that is not http(s) or
 * not a URL, and a URL without a token, are refused naming the variable and the fix; a trailing slash is
 * dropped. (The commands through a real gateway: e2e/cli/gateway-cli.test.ts.)
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { gatewayTarget, notThroughGateway } from "../src/gateway.ts";

test("no GATEHOUSE_GATEWAY_URL: no gateway (the CLI dials the services' gRPC)", () => {
  assert.equal(gatewayTarget({}), undefined);
  assert.equal(gatewayTarget({ GATEHOUSE_TOKEN: "t" }), undefined);
});

test("a gateway URL with a token; the trailing slash is dropped", () => {
  assert.deepEqual(
    gatewayTarget({ GATEHOUSE_GATEWAY_URL: "http://127.0.0.1:8780/", GATEHOUSE_TOKEN: "tok" }),
    {
      url: "http://127.0.0.1:8780",
      token: "tok",
    },
  );
  assert.equal(
    gatewayTarget({ GATEHOUSE_GATEWAY_URL: "https://gh.example/base/", GATEHOUSE_TOKEN: "tok" })?.url,
    "https://gh.example/base",
  );
});

test("a bad URL, another scheme or a missing token is refused naming what to set", () => {
  assert.throws(
    () => gatewayTarget({ GATEHOUSE_GATEWAY_URL: "ftp://gh.example", GATEHOUSE_TOKEN: "t" }),
    /GATEHOUSE_GATEWAY_URL=ftp:\/\/gh\.example must start with http:\/\/ or https:\/\//,
  );
  assert.throws(
    () => gatewayTarget({ GATEHOUSE_GATEWAY_URL: "127.0.0.1:8780", GATEHOUSE_TOKEN: "t" }),
    /GATEHOUSE_GATEWAY_URL=127\.0\.0\.1:8780 is not a URL: .*http:\/\/127\.0\.0\.1:8780/,
  );
  assert.throws(
    () => gatewayTarget({ GATEHOUSE_GATEWAY_URL: "http://127.0.0.1:8780" }),
    /GATEHOUSE_GATEWAY_URL is set but GATEHOUSE_TOKEN is not/,
  );
});

test("a command the gateway does not serve names the ones it does", () => {
  assert.match(
    notThroughGateway("log").message,
    /`gatehouse log` talks to the services' gRPC.*workspace create, connect, exec, approve, verify.*GATEHOUSE_KERNEL_ADDRESS/,
  );
});
