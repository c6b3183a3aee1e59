/**
 * OIDC bearer tokens (RFC 6750) verified as JWTs against the issuer's JWKS (RFC 7517), with the
 * issuer's keys found by OpenID Connect Discovery 1.0 §4 (`/.well-known/openid-configuration`)
 * unless a JWKS URL is configured. Checks signature, `iss`, `aud`, `exp`/`nbf` (30 s leeway).
 */
import type { Role } from "@gatehouse/gateway-contract";
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose";
import { type Authenticator, Forbidden, type Person, Unauthenticated } from "./person.ts";

/** Options of {@link OidcAuthenticator}. */
export interface OidcOptions {
  /** The issuer URL exactly as in the tokens' `iss`. */
  issuer: string;
  /** Expected `aud` (the gateway's client id / API audience). */
  audience: string;
  /** JWKS URL; default: `jwks_uri` from the issuer's discovery document. */
  jwksUrl?: string;
  /** Claim carrying roles or groups (string or string array); default "roles". */
  rolesClaim?: string;
  /** Claim value → Gatehouse role; default: the values "approver", "auditor", "admin" map to themselves. */
  roleMap?: Record<string, Role>;
  /**
   * The web app's public client id for browser sign-in (authorization code + PKCE); absent: the
   * web app offers no SSO button. The web app sends the ID token, so `audience` should equal it.
   */
  clientId?: string;
  /** Scopes the web app asks for (space-separated; default "openid profile email"). */
  scope?: string;
}

const DEFAULT_ROLE_MAP: Record<string, Role> = { approver: "approver", auditor: "auditor", admin: "admin" };

/** Verifies OIDC JWT bearer tokens and maps a claim to Gatehouse roles. */
export class OidcAuthenticator implements Authenticator {
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  private readonly roleMap: Record<string, Role>;
  private readonly rolesClaim: string;

  constructor(private readonly options: OidcOptions) {
    this.roleMap = options.roleMap ?? DEFAULT_ROLE_MAP;
    this.rolesClaim = options.rolesClaim ?? "roles";
    if (options.jwksUrl) this.jwks = createRemoteJWKSet(new URL(options.jwksUrl));
  }

  /** See {@link Authenticator.authenticate}. */
  async authenticate(token: string): Promise<Person> {
    const jwks = await this.keySet();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        clockTolerance: 30,
      }));
    } catch (err) {
      throw new Unauthenticated(`the bearer token was refused: ${describeJoseError(err)}`);
    }
    if (!payload.sub) throw new Unauthenticated("the bearer token has no subject (sub)");
    const claim = payload[this.rolesClaim];
    const values = typeof claim === "string" ? [claim] : Array.isArray(claim) ? claim.map(String) : [];
    const roles = [...new Set(values.map((v) => this.roleMap[v]).filter((r): r is Role => r !== undefined))];
    if (roles.length === 0) {
      throw new Forbidden(
        `${payload.sub} has no Gatehouse role: the token's "${this.rolesClaim}" claim must contain one of ${Object.keys(this.roleMap).join(", ")}`,
      );
    }
    const name =
      typeof payload.name === "string"
        ? payload.name
        : typeof payload.email === "string"
          ? payload.email
          : payload.sub;
    return { subject: payload.sub, name, roles };
  }

  private async keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.jwks) return this.jwks;
    const url = `${this.options.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
    let jwksUri: unknown;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000), redirect: "error" });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      jwksUri = ((await res.json()) as { jwks_uri?: unknown }).jwks_uri;
    } catch (err) {
      throw new Unauthenticated(
        `cannot verify tokens: the issuer's discovery document ${url} is unavailable (${(err as Error).message})`,
      );
    }
    if (typeof jwksUri !== "string")
      throw new Unauthenticated(`cannot verify tokens: ${url} has no jwks_uri`);
    this.jwks = createRemoteJWKSet(new URL(jwksUri));
    return this.jwks;
  }
}

function describeJoseError(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "it has expired";
  if (err instanceof errors.JWTClaimValidationFailed) return `claim "${err.claim}" is wrong (${err.reason})`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return "its signature does not verify";
  if (err instanceof errors.JWKSNoMatchingKey) return "no key of the issuer matches it";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid)
    return "it is not a well-formed JWT";
  if (err instanceof errors.JOSEAlgNotAllowed) return "its algorithm is not allowed";
  return err instanceof Error ? err.message : String(err);
}
