/**
 * Remote repositories the administrator allows, with the credentials only the gatekeeper holds.
 *
 * YAML shape (file named by GATEKEEPER_GIT_REMOTES):
 * ```yaml
 * remotes:
 *   - url: https://git.example.com/platform/   # every repository URL starting with this
 *     username: gatehouse-bot
 *     tokenFile: /var/run/secrets/git/token    # read at start-up; never logged or sent to agents
 *   - url: ssh://git@git.example.com/
 *     sshKeyFile: /var/run/secrets/git/id_ed25519
 *     knownHostsFile: /etc/gatekeeper-git/known_hosts
 *     restricted: true                          # every read is flagged containsRestrictedData
 * ```
 * `http://` is accepted only for loopback hosts (tests, a local git server). A repository URL
 * matches the entry with the longest `url` prefix; a URL no entry covers is refused.
 *
 * Credentials reach git through the child's environment only (GIT_CONFIG_KEY_n http.extraHeader
 * for https, GIT_SSH_COMMAND for ssh), never through its argument list (visible in `ps`) and
 * never in a URL.
 */
import { readFileSync } from "node:fs";
import { readYamlConfigFile } from "@gatehouse/gatekeeper-kit";
import { z } from "zod";

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d+)?$/;

/** True when `url` is http(s)/ssh, with http only on loopback and no userinfo password, query or fragment. */
function acceptableRemoteUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.password || u.search || u.hash) return false;
  if (u.protocol === "https:" || u.protocol === "ssh:") return u.host !== "";
  if (u.protocol === "http:") return LOOPBACK.test(u.host);
  return false;
}

const RemoteEntry = z
  .object({
    url: z
      .string()
      .refine(
        acceptableRemoteUrl,
        "url must be an https:// or ssh:// URL prefix (http:// only for loopback), without a password, query or fragment",
      ),
    username: z.string().min(1).optional(),
    tokenFile: z.string().startsWith("/", "tokenFile must be an absolute path").optional(),
    sshKeyFile: z.string().startsWith("/", "sshKeyFile must be an absolute path").optional(),
    knownHostsFile: z.string().startsWith("/", "knownHostsFile must be an absolute path").optional(),
    restricted: z.boolean().default(false),
  })
  .strict()
  .superRefine((e, ctx) => {
    const ssh = e.url.startsWith("ssh:");
    if (ssh && (e.tokenFile || e.username)) {
      ctx.addIssue({
        code: "custom",
        message: "ssh remotes take sshKeyFile/knownHostsFile, not username/tokenFile",
      });
    }
    if (ssh && (!e.sshKeyFile || !e.knownHostsFile)) {
      ctx.addIssue({
        code: "custom",
        message: "ssh remotes need sshKeyFile and knownHostsFile (host keys are always checked)",
      });
    }
    if (!ssh && (e.sshKeyFile || e.knownHostsFile)) {
      ctx.addIssue({
        code: "custom",
        message: "https remotes take username/tokenFile, not sshKeyFile/knownHostsFile",
      });
    }
    if (!ssh && Boolean(e.username) !== Boolean(e.tokenFile)) {
      ctx.addIssue({
        code: "custom",
        message:
          "https remotes need both username and tokenFile (or neither, for anonymous read-only access)",
      });
    }
  });

const RemotesFile = z.object({ remotes: z.array(RemoteEntry).default([]) }).strict();

/** Input shape of the remotes configuration (as in the YAML file). */
export type RemotesInput = z.input<typeof RemotesFile>;

/** The credential git uses for one remote. */
export type RemoteAuth =
  | { kind: "none" }
  | { kind: "basic"; username: string; token: string }
  | { kind: "ssh"; keyFile: string; knownHostsFile: string };

/** One allowed remote prefix. */
export interface RemoteRule {
  urlPrefix: string;
  auth: RemoteAuth;
  restricted: boolean;
}

/** Raised when the remotes configuration is invalid; the message names the field and the fix. */
export class RemotesInvalid extends Error {
  override name = "RemotesInvalid";
}

/**
 * Validates a remotes configuration and reads token files.
 * @throws RemotesInvalid naming each bad field (`remotes.0.url: ...`) or an unreadable token file.
 */
export function createRemotes(input: RemotesInput): RemoteRule[] {
  const parsed = RemotesFile.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new RemotesInvalid(`git remotes configuration is invalid: ${issues.join("; ")}`);
  }
  return parsed.data.remotes.map((e, i) => {
    let auth: RemoteAuth = { kind: "none" };
    if (e.sshKeyFile && e.knownHostsFile) {
      auth = { kind: "ssh", keyFile: e.sshKeyFile, knownHostsFile: e.knownHostsFile };
    } else if (e.username && e.tokenFile) {
      let token: string;
      try {
        token = readFileSync(e.tokenFile, "utf8").trim();
      } catch (err) {
        throw new RemotesInvalid(
          `remotes.${i}.tokenFile cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
        );
      }
      if (token === "") throw new RemotesInvalid(`remotes.${i}.tokenFile is empty`);
      auth = { kind: "basic", username: e.username, token };
    }
    return { urlPrefix: e.url, auth, restricted: e.restricted };
  });
}

/**
 * Reads and validates a YAML remotes file.
 * @throws RemotesInvalid when the file cannot be read, is not YAML, or fails validation.
 */
export function loadRemotesFile(path: string): RemoteRule[] {
  const doc = readYamlConfigFile(path, {
    what: "git remotes file",
    setting: "GATEKEEPER_GIT_REMOTES",
    fail: (m) => new RemotesInvalid(m),
  });
  return createRemotes(doc as RemotesInput);
}

/** The rule with the longest prefix covering `url`, or undefined. */
export function ruleFor(rules: readonly RemoteRule[], url: string): RemoteRule | undefined {
  let best: RemoteRule | undefined;
  for (const r of rules) {
    const prefix = r.urlPrefix;
    const covered =
      url === prefix || (url.startsWith(prefix) && (prefix.endsWith("/") || url[prefix.length] === "/"));
    if (covered && (!best || prefix.length > best.urlPrefix.length)) best = r;
  }
  return best;
}

/** True when `url` is a remote URL form this gatekeeper may talk to (see the module doc). */
export function isAcceptableRemoteUrl(url: string): boolean {
  return acceptableRemoteUrl(url);
}

/**
 * Environment for a git child process that talks to a remote with `auth`. Redirects are not
 * followed (a credential never goes to another host) and prompts are off.
 */
export function authEnv(auth: RemoteAuth): Record<string, string> {
  const config: [string, string][] = [
    ["http.followRedirects", "false"],
    // Only the transports remotes use; file:// and ext:: stay off.
    ["protocol.allow", "never"],
    ["protocol.https.allow", "always"],
    ["protocol.http.allow", "always"],
    ["protocol.ssh.allow", "always"],
  ];
  const env: Record<string, string> = {};
  if (auth.kind === "basic") {
    const basic = Buffer.from(`${auth.username}:${auth.token}`).toString("base64");
    config.push(["http.extraHeader", `Authorization: Basic ${basic}`]);
  } else if (auth.kind === "ssh") {
    const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
    env.GIT_SSH_COMMAND = [
      "ssh",
      `-i ${q(auth.keyFile)}`,
      "-o IdentitiesOnly=yes",
      "-o BatchMode=yes",
      "-o StrictHostKeyChecking=yes",
      `-o UserKnownHostsFile=${q(auth.knownHostsFile)}`,
    ].join(" ");
  }
  env.GIT_CONFIG_COUNT = String(config.length);
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}
