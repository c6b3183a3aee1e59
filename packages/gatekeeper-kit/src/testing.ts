/** Test doubles for gatekeeper tests (never imported by a service). */
export { FakeApprovalQueue } from "./testing/fake-approval-queue.ts";
export { selfSignedCertificate } from "./testing/self-signed.ts";
