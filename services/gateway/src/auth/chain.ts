/** Several authenticators behind one (dev tokens first, then OIDC). */
import { type Authenticator, Forbidden, type Person, Unauthenticated } from "./person.ts";

/** Tries each authenticator in order; the first that accepts wins, a Forbidden stops the chain. */
export class AuthenticatorChain implements Authenticator {
  constructor(private readonly chain: Authenticator[]) {}

  /** See {@link Authenticator.authenticate}; the error is the last authenticator's. */
  async authenticate(token: string): Promise<Person> {
    let last: unknown = new Unauthenticated("no authenticator is configured");
    for (const a of this.chain) {
      try {
        return await a.authenticate(token);
      } catch (err) {
        if (err instanceof Forbidden) throw err;
        last = err;
      }
    }
    throw last;
  }
}
