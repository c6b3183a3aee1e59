/**
 * The chart's `notifications` block (review notifications, docs/notifications.md), rendered with
 * `helm template` (no cluster): off by default (no NOTIFY_* env, no Secret, no egress); on, the kernel
 * gets the NOTIFY_* env and GATEWAY_PUBLIC_URL, the webhook registry as a Secret mounted as a file (read
 * back with the kernel's own loader, @gatehouse/notify), the SMTP credentials from an existing Secret,
 * and egress to exactly the listed receivers. Missing values are refused naming the key.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadNotifyConfig } from "@gatehouse/notify";
import { find, type K8sObject, render, template } from "./helm.ts";

const kernelPod = (objects: K8sObject[]) =>
  find(objects, "Deployment", "t-gatehouse-kernel").spec.template.spec;
const kernelEnv = (objects: K8sObject[]): Record<string, string> =>
  Object.fromEntries(
    kernelPod(objects).containers[0].env.map((e: { name: string; value?: string }) => [
      e.name,
      e.value ?? "",
    ]),
  );
const kernelIpEgress = (objects: K8sObject[]) =>
  (
    find(objects, "NetworkPolicy", "t-gatehouse-kernel").spec.egress as {
      to?: { ipBlock?: { cidr: string } }[];
      ports?: { port: number }[];
    }[]
  )
    .filter((r) => r.to?.some((t) => t.ipBlock))
    .map((r) => ({ cidrs: r.to?.map((t) => t.ipBlock?.cidr), ports: r.ports?.map((p) => p.port) }));

const ON = [
  "gateway.publicUrl=https://gatehouse.example.com",
  "notifications.smtp.url=smtp://mail.internal:587",
  "notifications.smtp.from=gatehouse@example.com",
  "notifications.smtp.auth.existingSecret=smtp-auth",
  "notifications.webhooks.payments-slack.url=https://hooks.slack.com/services/T0/B0/x",
  "notifications.webhooks.payments-slack.format=slack",
  "notifications.egress[0].cidr=10.0.9.25/32",
  "notifications.egress[0].ports[0]=587",
];

test("notifications off (the default): no NOTIFY_* env, no registry Secret, no mount, no egress beyond the chart's", async () => {
  const objects = await render(["minimal.yaml"]);
  assert.deepEqual(
    Object.keys(kernelEnv(objects)).filter((k) => k.startsWith("NOTIFY_")),
    [],
  );
  assert.equal(
    objects.some((o) => o.kind === "Secret" && o.metadata.name === "t-gatehouse-notify-webhooks"),
    false,
  );
  assert.equal(
    kernelPod(objects).volumes.some((v: { name: string }) => v.name === "notify"),
    false,
  );
  assert.deepEqual(kernelIpEgress(objects), []);
});

test("notifications on: the kernel's env, registry file and SMTP credentials are what the kernel's own loader accepts; egress to the listed receivers only", async () => {
  const objects = await render(["minimal.yaml"], ON);
  const env = kernelEnv(objects);
  assert.equal(env.GATEWAY_PUBLIC_URL, "https://gatehouse.example.com");
  assert.equal(env.NOTIFY_SMTP_URL, "smtp://mail.internal:587");
  assert.equal(env.NOTIFY_FROM, "gatehouse@example.com");
  assert.equal(env.NOTIFY_WEBHOOKS_FILE, "/etc/gatehouse/notify/webhooks.yaml");
  assert.equal(env.NOTIFY_SMTP_AUTH_FILE, "/etc/gatehouse/notify/smtp-auth.yaml");
  assert.equal(env.NOTIFY_TIMEOUT_MS, "5000");

  const volume = kernelPod(objects).volumes.find((v: { name: string }) => v.name === "notify");
  assert.equal(volume.projected.defaultMode, 0o440);
  assert.deepEqual(
    volume.projected.sources.map(
      (s: { secret: { name: string; items: { key: string; path: string }[] } }) => [
        s.secret.name,
        s.secret.items[0]?.path,
      ],
    ),
    [
      ["t-gatehouse-notify-webhooks", "webhooks.yaml"],
      ["smtp-auth", "smtp-auth.yaml"],
    ],
  );
  const mount = kernelPod(objects).containers[0].volumeMounts.find(
    (m: { name: string }) => m.name === "notify",
  );
  assert.deepEqual(mount, { name: "notify", mountPath: "/etc/gatehouse/notify", readOnly: true });
  assert.ok(
    !JSON.stringify(kernelPod(objects)).includes("hooks.slack.com"),
    "webhook URLs stay in the Secret, out of the pod spec",
  );

  // The registry Secret, written out as the kernel would read the mounted file.
  const secret = find(objects, "Secret", "t-gatehouse-notify-webhooks");
  const dir = mkdtempSync(join(tmpdir(), "chart-notify-"));
  try {
    const file = join(dir, "webhooks.yaml");
    writeFileSync(file, (secret.stringData as Record<string, string>)["webhooks.yaml"] ?? "");
    const config = loadNotifyConfig({
      smtpUrl: env.NOTIFY_SMTP_URL,
      from: env.NOTIFY_FROM,
      publicUrl: env.GATEWAY_PUBLIC_URL ?? "",
      webhooksFile: file,
      timeoutMs: Number(env.NOTIFY_TIMEOUT_MS),
    });
    assert.deepEqual(config.webhooks, {
      "payments-slack": { url: "https://hooks.slack.com/services/T0/B0/x", format: "slack" },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(kernelIpEgress(objects), [{ cidrs: ["10.0.9.25/32"], ports: [587] }]);
});

test("an existing Secret for the registry is mounted instead of rendering one", async () => {
  const objects = await render(
    ["minimal.yaml"],
    ["gateway.publicUrl=https://g.example.com", "notifications.webhooksSecret.existingSecret=my-hooks"],
  );
  assert.equal(kernelEnv(objects).NOTIFY_WEBHOOKS_FILE, "/etc/gatehouse/notify/webhooks.yaml");
  assert.equal(kernelEnv(objects).NOTIFY_SMTP_URL, undefined);
  assert.equal(
    objects.some((o) => o.kind === "Secret" && o.metadata.name === "t-gatehouse-notify-webhooks"),
    false,
  );
  const volume = kernelPod(objects).volumes.find((v: { name: string }) => v.name === "notify");
  assert.equal(volume.projected.sources[0].secret.name, "my-hooks");
});

test("missing or wrong values are refused naming the key", async () => {
  const noUrl = await template(["minimal.yaml"], ["notifications.smtp.url=smtp://m:25"]);
  assert.equal(noUrl.ok, false);
  assert.match(noUrl.stderr, /gateway\.publicUrl: notifications link to the review page/);
  assert.match(noUrl.stderr, /notifications\.smtp\.from: notifications\.smtp\.url needs a sender address/);

  const badFormat = await template(
    ["minimal.yaml"],
    [
      "gateway.publicUrl=https://g.example.com",
      "notifications.webhooks.x.url=https://h.example.com/",
      "notifications.webhooks.x.format=discord",
    ],
  );
  assert.equal(badFormat.ok, false);
  assert.match(badFormat.stderr, /\/notifications\/webhooks\/x\/format/);

  const credentialsInUrl = await template(
    ["minimal.yaml"],
    ["gateway.publicUrl=https://g.example.com", "notifications.smtp.url=smtp://u:p@m:25"],
  );
  assert.equal(credentialsInUrl.ok, false);
  assert.match(credentialsInUrl.stderr, /\/notifications\/smtp\/url/);
});
