import { codePointLabel, splitInvisible } from "@gatehouse/gateway-contract/invisible";

/**
 * Agent- or gatekeeper-supplied text as it will apply: each character that does not show as
 * itself (direction controls, zero-width and other format or control characters) is rendered as
 * a marked token `<span class="invisible-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">⟨U+202E⟩</span>`,
 * so the element's text equals `showInvisible(text)` and nothing reorders or hides what is around it.
 * Plain text renders as itself.
 */
export function Visible({ text }: { text: string }) {
  const parts = splitInvisible(text);
  if (parts.every((p) => typeof p === "string")) return <>{text}</>;
  return (
    <>
      {parts.map((p) =>
        typeof p === "string" ? (
          p
        ) : (
          <span
            key={p.index}
            className="invisible-char"
            title={`${codePointLabel(p.codePoint)} ${p.name} (not visible in the text)`}
          >
            {p.token}
          </span>
        ),
      )}
    </>
  );
}
