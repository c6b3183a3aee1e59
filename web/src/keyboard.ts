/** Single-key shortcuts that stay quiet while the person types in a field. */
import { useEffect, useRef } from "react";

/** Handles a key (as `KeyboardEvent.key`, e.g. "j", "A", "Enter"); returns whether it did. */
export type KeyHandler = (key: string) => boolean;

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag !== "INPUT") return false;
  const type = (target as HTMLInputElement).type;
  return type !== "checkbox" && type !== "radio" && type !== "button" && type !== "range";
}

/** Passes pressed keys (no Ctrl/Alt/Meta, not while typing) to `onKey` while `enabled`. */
export function useKeyboard(onKey: KeyHandler, enabled = true): void {
  const latest = useRef(onKey);
  latest.current = onKey;
  useEffect(() => {
    if (!enabled) return;
    const listener = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.altKey || event.metaKey || event.defaultPrevented) return;
      if (isTyping(event.target)) return;
      if (latest.current(event.key)) event.preventDefault();
    };
    window.addEventListener("keydown", listener);
    return () => window.removeEventListener("keydown", listener);
  }, [enabled]);
}
