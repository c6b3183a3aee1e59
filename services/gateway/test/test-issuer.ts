/**
 * A test OIDC issuer on loopback (not a fake of the gateway's code: a real HTTP server publishing a
 * discovery document and a JWKS, and real RS256-signed JWTs), standing in for the company's identity
 * provider, which cannot run here.
 */
import { createServer, type Server } from "node:http";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";

export interface TestIssuer {
  issuer: string;
  jwksUrl: string;
  /** Signs a token; `options.key: "other"` signs with a key the JWKS does not publish. */
  sign(
    claims: JWTPayload,
    options?: { expiresIn?: string; key?: "other"; audience?: string; issuer?: string },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startTestIssuer(audience: string): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const other = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  let base = "";
  const server: Server = createServer((req, res) => {
    if (req.url === "/.well-known/openid-configuration") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks` }));
    } else if (req.url === "/jwks") {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  return {
    issuer: base,
    jwksUrl: `${base}/jwks`,
    async sign(claims, options = {}) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setIssuer(options.issuer ?? base)
        .setAudience(options.audience ?? audience)
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? "5m")
        .sign(options.key === "other" ? other.privateKey : privateKey);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
