/**
 * Isolate host process entry (bundled to dist/isolate-host.cjs). Protocol: see ../protocol.ts.
 * Reads `{start}` then `{frame}` lines on stdin; writes `{frame}`, `{console}` and finally one `{result}`
 * on stdout, then exits. If stdin closes before the result, the process exits at once (the runner is gone).
 */

import { OutputBuffer } from "../output.ts";
import {
  encodeLine,
  type FromIsolateHost,
  type HostStart,
  LineSplitter,
  type ToIsolateHost,
} from "../protocol.ts";
import { executeSnippet } from "./execute.ts";

const MAX_LINE = 64 * 1024 * 1024;

function write(message: FromIsolateHost): void {
  process.stdout.write(encodeLine(message));
}

let started = false;
const early: Array<[string, string]> = [];
let deliver: ((binding: string, data: string) => void) | null = null;

function onStart(start: HostStart): void {
  const output = new OutputBuffer(start.limits.outputBytes);
  void executeSnippet(start, {
    sendFrame: (binding, data) => write({ frame: { binding, data } }),
    console: (level, text) => {
      const before = output.lines.length;
      output.add(level, text);
      for (const line of output.lines.slice(before)) write({ console: line });
    },
    onFrame: (fn) => {
      deliver = fn;
      for (const [binding, data] of early.splice(0)) fn(binding, data);
    },
  }).then((result) => {
    write({ result: { ...result, outputTruncated: output.truncated } });
    // stdout is a pipe (synchronous on Linux), so the result is out. Skip Node's teardown: after an
    // isolate hit its memory limit, isolated-vm's native teardown can crash at exit.
    (process as unknown as { reallyExit(code: number): never }).reallyExit(0);
  });
}

const splitter = new LineSplitter(
  (line) => {
    let message: ToIsolateHost;
    try {
      message = JSON.parse(line) as ToIsolateHost;
    } catch {
      process.stderr.write("isolate host: ignoring a line that is not JSON\n");
      return;
    }
    if ("start" in message && !started) {
      started = true;
      onStart(message.start);
    } else if ("frame" in message) {
      const { binding, data } = message.frame;
      if (deliver) deliver(binding, data);
      else early.push([binding, data]);
    }
  },
  MAX_LINE,
  () => {
    process.stderr.write("isolate host: inbound line too long, exiting\n");
    process.exit(2);
  },
);

process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => splitter.push(chunk));
process.stdin.on("end", () => process.exit(started ? 3 : 0));
