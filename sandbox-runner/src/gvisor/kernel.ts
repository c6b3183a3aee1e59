import { readFileSync } from "node:fs";

/**
 * The build string gVisor's kernel (the Sentry) reports in /proc/version and `uname -v`, whatever release
 * it claims ("Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016" from Debian's runsc,
 * "Linux version 4.19.0-gvisor #1 SMP …" from newer builds). Linux kernels carry their real build date.
 */
export const GVISOR_KERNEL_BUILD = "#1 SMP Sun Jan 10 15:06:54 PST 2016";

/** Whether a /proc/version text is gVisor's: it names gVisor, or carries gVisor's fixed build string. */
export function isGvisorKernel(procVersion: string): boolean {
  return /gvisor/i.test(procVersion) || procVersion.includes(GVISOR_KERNEL_BUILD);
}

/** What readKernel found: the first line of /proc/version ("" when unreadable) and whether it is gVisor's. */
export interface KernelIdentity {
  gvisor: boolean;
  procVersion: string;
}

/**
 * Reads the kernel this process runs on from `path` (default /proc/version). Under gVisor the Sentry
 * answers, so a process in a Pod of RuntimeClass gvisor sees gVisor's string and one on the host sees
 * the host's. Never throws: an unreadable file is reported as not gVisor.
 */
export function readKernel(path = "/proc/version"): KernelIdentity {
  let text = "";
  try {
    text = readFileSync(path, "utf8").split("\n")[0]!.trim();
  } catch {
    // not Linux, or /proc not mounted: nothing proves gVisor
  }
  return { gvisor: text !== "" && isGvisorKernel(text), procVersion: text };
}
