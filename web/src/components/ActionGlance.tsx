import type { Action } from "@gatehouse/gateway-contract";
import { Visible } from "./Visible.tsx";

/**
 * What an action does, in a few lines for the first screen (phones included): the gatekeeper's
 * summary, its risks with reasons, pre-flight warnings, the key fields (name: value, one line each)
 * and the first lines of its main text. Renders nothing when the gatekeeper gave none of these.
 * All text is untrusted and shown through {@link Visible} (invisible characters as tokens).
 */
export function ActionGlance({ action }: { action: Action }) {
  const risks = action.risks ?? [];
  const warnings = action.preflightWarnings ?? [];
  const fields = action.fields ?? [];
  const preview = action.preview ?? "";
  if (!action.summary && risks.length === 0 && warnings.length === 0 && fields.length === 0 && !preview)
    return null;
  return (
    <section className="glance" data-testid="glance">
      {action.summary && (
        <p className="glance-summary" data-testid="glance-summary">
          <Visible text={action.summary} />
        </p>
      )}
      {risks.length > 0 && (
        <ul className="glance-risks" data-testid="glance-risks">
          {risks.map((r, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: risks are a fixed list per description
            <li key={i}>
              <span className="flag risk">{r.kind}</span> <Visible text={r.reason} />
            </li>
          ))}
        </ul>
      )}
      {warnings.length > 0 && (
        <ul className="glance-warnings" data-testid="glance-warnings">
          {warnings.map((w, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: warnings are a fixed list per description
            <li key={i}>
              <span className="flag warn">pre-flight</span> <Visible text={w} />
            </li>
          ))}
        </ul>
      )}
      {fields.length > 0 && (
        <dl className="glance-fields" data-testid="glance-fields">
          {fields.map((f) => (
            <div key={f.name}>
              <dt>
                <Visible text={f.name} />
              </dt>
              <dd>
                <Visible text={f.value} />
              </dd>
            </div>
          ))}
        </dl>
      )}
      {preview && (
        <pre className="glance-preview" data-testid="glance-preview">
          <Visible text={preview} />
        </pre>
      )}
    </section>
  );
}
