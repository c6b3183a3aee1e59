// helm test: every service's /healthz answers 200 (TARGETS="name=http://host:port/healthz,…"), retried
// until TEST_DEADLINE_S (default 120) so a pod that is still starting is waited for, not reported.
const targets = (process.env.TARGETS ?? "")
  .split(",")
  .filter(Boolean)
  .map((t) => t.split("="));
const deadline = Date.now() + Number(process.env.TEST_DEADLINE_S ?? 120) * 1000;
let failed = 0;
for (const [name, url] of targets) {
  let last = "";
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
      if (res.status === 200) break;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (last && Date.now() > deadline) {
    failed++;
    console.log(
      `FAIL ${name}: ${url} -> ${last} (kubectl describe pod -l app.kubernetes.io/component=${name}: ErrImagePull/ErrImageNeverPull = its image is missing on the node; kubectl logs deploy/<release>-gatehouse-${name}: a service names the wrong setting)`,
    );
  } else {
    console.log(`ok   ${name}: ${url}`);
  }
}
process.exit(failed ? 1 : 0);
