import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { test } from "node:test";
import { canConnect, FREE_PORT_RANGE, freePort, waitForPort } from "../src/index.ts";

test("a free port can be bound; canConnect and waitForPort see a listener only once it listens", async () => {
  const port = await freePort();
  assert.equal(await canConnect(port), false);
  await assert.rejects(
    waitForPort(port, { name: "nothing", timeoutMs: 150 }),
    /nothing did not listen on 127\.0\.0\.1:\d+ within 150 ms/,
  );
  const server = createServer();
  setTimeout(() => server.listen(port, "127.0.0.1"), 100);
  await waitForPort(port, { name: "late server", timeoutMs: 60_000 });
  assert.equal(await canConnect(port), true);
  await new Promise<void>((r) => server.close(() => r()));
});

test("waitForPort fails at once with the reason when the process behind it stopped", async () => {
  const port = await freePort();
  await assert.rejects(
    waitForPort(port, { name: "child", stillRunning: () => "child exited with 1" }),
    /^Error: child exited with 1$/,
  );
});

test("freePort draws outside the kernel's ephemeral range, so an outgoing connection cannot take the port before the server binds it", async () => {
  const [low = 0, high = 0] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
    .trim()
    .split(/\s+/)
    .map(Number);
  const ports = new Set<number>();
  for (let i = 0; i < 20; i++) ports.add(await freePort());
  for (const port of ports) {
    assert.ok(port < low || port > high, `port ${port} is in the ephemeral range ${low}-${high}`);
    assert.ok(
      port >= FREE_PORT_RANGE.low && port <= FREE_PORT_RANGE.high,
      `port ${port} outside ${FREE_PORT_RANGE.low}-${FREE_PORT_RANGE.high}`,
    );
  }
  // Random draws: 20 calls do not all return the same port (listen(0) twice in a row often does).
  assert.ok(ports.size > 1);
});
