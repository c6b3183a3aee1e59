/**
 * The administrator's registry of PostgreSQL servers: the only place connection details and
 * credentials live. A resource URL `postgres://<name>/<database>` names an entry here; nothing an
 * agent supplies can add a host.
 *
 * YAML shape (file named by the administrator, e.g. `--postgres-registry`; a Secret on Kubernetes):
 * ```yaml
 * servers:
 *   crm:
 *     host: db.internal
 *     port: 5432                    # default 5432
 *     databases: [crm, crm_staging] # the databases a resource URL may name
 *     readRole:                     # reads (query/listTables/describeTable) run as this role
 *       user: gatehouse_read
 *       passwordFile: /run/secrets/crm-read   # or passwordEnv: CRM_READ_PASSWORD
 *     writeRole:                    # simulations and applies run as this role
 *       user: gatehouse_write
 *       passwordEnv: CRM_WRITE_PASSWORD
 *     restrictedColumns: [public.customers.email]  # reading one marks the observation restricted
 *     allowDdl: false               # default false: CREATE/ALTER/DROP/TRUNCATE refused
 *     statementTimeoutMs: 5000      # default 5000
 * ```
 * A password is never written inline: only the path of a file holding it or the name of an
 * environment variable, so the registry itself can be logged or shown without leaking one.
 */
import { readFile } from "node:fs/promises";
import { readYamlConfigFile } from "@gatehouse/gatekeeper-kit";
import { z } from "zod";
import { RegistryInvalid } from "./errors.ts";
import { IDENTIFIER, REGISTERED_NAME } from "./resource-url.ts";

export { RegistryInvalid } from "./errors.ts";

const Identifier = z
  .string()
  .regex(IDENTIFIER, "must be a lower-case PostgreSQL identifier (a-z, 0-9, '_', '$'; at most 63)");

/** A registry entry name: what `postgres://<name>/…` refers to. */
export const ServerName = z
  .string()
  .regex(REGISTERED_NAME, "use lower-case letters, digits, '_' or '-', starting with a letter");

/**
 * A database role the gatekeeper logs in as. Exactly one of `passwordFile` (absolute path) or
 * `passwordEnv` (an environment variable name); an inline `password` is refused.
 */
export const RoleCredentials = z
  .object({
    user: z.string().min(1, "user must name a database role").max(63, "user is at most 63 characters"),
    passwordFile: z.string().startsWith("/", "passwordFile must be an absolute path").optional(),
    passwordEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "passwordEnv must be an environment variable name")
      .optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const n = (r.passwordFile !== undefined ? 1 : 0) + (r.passwordEnv !== undefined ? 1 : 0);
    if (n !== 1) {
      ctx.addIssue({
        code: "custom",
        message:
          "give exactly one of passwordFile (absolute path) or passwordEnv (variable name); never an inline password",
      });
    }
  });
export type RoleCredentials = z.infer<typeof RoleCredentials>;

/** A restricted column, `schema.table.column` in lower case. */
const RestrictedColumn = z.string().refine(
  (s) => {
    const parts = s.split(".");
    return parts.length === 3 && parts.every((p) => IDENTIFIER.test(p));
  },
  { message: "must be <schema>.<table>.<column> in lower-case identifiers" },
);

/** One registered PostgreSQL server. */
export const ServerConfig = z
  .object({
    host: z
      .string()
      .min(1, "host must name the server (DNS name, IP address or a Unix socket directory)")
      .refine(
        (h) => !/[\s/@?#]/.test(h) || h.startsWith("/"),
        "host must be a bare host name or a socket directory",
      ),
    port: z.number().int().min(1).max(65535).default(5432),
    databases: z.array(Identifier).min(1, "list at least one database a resource URL may name"),
    readRole: RoleCredentials,
    writeRole: RoleCredentials,
    restrictedColumns: z.array(RestrictedColumn).default([]),
    allowDdl: z.boolean().default(false),
    statementTimeoutMs: z.number().int().min(1).max(3_600_000).default(5000),
  })
  .strict();
export type ServerConfig = z.infer<typeof ServerConfig>;

/** The whole registry. */
export const RegistryConfig = z.object({ servers: z.record(ServerName, ServerConfig).default({}) }).strict();
export type RegistryConfig = z.infer<typeof RegistryConfig>;
/** Input accepted by `createRegistry` (defaults filled in). */
export type RegistryInput = z.input<typeof RegistryConfig>;

/**
 * Validates a registry given in code.
 * @throws RegistryInvalid naming each bad entry and field (e.g. `servers.crm.readRole: …`). An
 *   inline `password` is reported by its field name only; its value never appears in the message.
 */
export function createRegistry(input: RegistryInput): RegistryConfig {
  const parsed = RegistryConfig.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => {
      const path = i.path.join(".") || "(root)";
      // Zod's message for an unknown key names the key, not its value; keep it that way.
      const msg =
        i.code === "unrecognized_keys" && i.keys.includes("password")
          ? 'inline "password" is not allowed; use passwordFile or passwordEnv'
          : i.message;
      return `${path}: ${msg}`;
    });
    throw new RegistryInvalid(`postgres registry is invalid: ${issues.join("; ")}`);
  }
  return parsed.data;
}

/**
 * Reads and validates a YAML registry file.
 * @throws RegistryInvalid when the file cannot be read, is not YAML, or fails validation.
 */
export async function loadRegistryFile(path: string): Promise<RegistryConfig> {
  const doc = readYamlConfigFile(path, {
    what: "postgres registry file",
    fail: (m) => new RegistryInvalid(m),
  });
  return createRegistry(doc as RegistryInput);
}

/**
 * Looks up the server and database a parsed resource names.
 * @returns the entry, or `undefined` when the name is not registered or the database is not in
 *   its `databases` list (the caller words the refusal). Never throws.
 */
export function lookupServer(
  registry: RegistryConfig,
  name: string,
  database: string,
): ServerConfig | undefined {
  const server = Object.hasOwn(registry.servers, name) ? registry.servers[name] : undefined;
  return server?.databases.includes(database) ? server : undefined;
}

/**
 * Reads a role's password from its file (trailing newline trimmed) or environment variable.
 * @throws Error naming the file path or variable name (never the password) when it is missing or empty.
 */
export async function readPassword(role: RoleCredentials, env = process.env): Promise<string> {
  if (role.passwordFile !== undefined) {
    let text: string;
    try {
      text = await readFile(role.passwordFile, "utf8");
    } catch (err) {
      throw new Error(
        `cannot read the password file ${role.passwordFile} of role ${role.user} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
    const pw = text.replace(/\r?\n$/, "");
    if (pw === "") throw new Error(`the password file ${role.passwordFile} of role ${role.user} is empty`);
    return pw;
  }
  const pw = env[role.passwordEnv ?? ""];
  if (!pw)
    throw new Error(
      `the environment variable ${role.passwordEnv} (password of role ${role.user}) is not set`,
    );
  return pw;
}
