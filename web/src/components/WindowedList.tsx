import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, useEffect, useLayoutEffect, useRef, useState } from "react";

/** Estimated height of one action row in CSS pixels before it is measured. */
export const ROW_ESTIMATE_PX = 76;

interface WindowedProps<T> {
  items: readonly T[];
  itemKey: (item: T) => string | number;
  /** Draws one item (for rows, the row's `<li>`). */
  render: (item: T) => ReactNode;
  /** The item holding keyboard focus (−1 = none): brought on screen when it changes. */
  focusedIndex: number;
  /** Estimated height of an item in CSS pixels (it is measured once drawn). */
  estimate: (item: T) => number;
  /** Lists up to this many items are drawn whole. */
  windowFrom: number;
  /** "ul" draws a `<ul className="rows">` (action rows); "div" a plain block (groups). */
  as: "ul" | "div";
}

/**
 * A list drawn whole when short, else windowed against the page's scroll (@tanstack/react-virtual):
 * only the items near the screen are drawn and measured, so thousands of pending actions cost only
 * what is on screen. Nestable: a windowed list of turns can hold windowed lists of rows.
 */
export function WindowedList<T>(props: WindowedProps<T>) {
  const { items, render, as } = props;
  if (items.length <= props.windowFrom)
    return as === "ul" ? <ul className="rows">{items.map(render)}</ul> : <div>{items.map(render)}</div>;
  return <Windowed {...props} />;
}

function Windowed<T>({ items, itemKey, render, focusedIndex, estimate, as }: WindowedProps<T>) {
  const listRef = useRef<HTMLElement>(null);
  const [margin, setMargin] = useState(0);
  // The list's offset from the page top moves when content above it changes: re-read after each render.
  useLayoutEffect(() => {
    const top = Math.round((listRef.current?.getBoundingClientRect().top ?? 0) + window.scrollY);
    if (top !== margin) setMargin(top);
  });
  const virtualizer = useWindowVirtualizer({
    count: items.length,
    estimateSize: (i) => estimate(items[i] as T),
    overscan: 6,
    scrollMargin: margin,
    getItemKey: (i) => itemKey(items[i] as T),
  });
  // A drawn item is scrolled to by the page itself; one not drawn yet is brought in by the virtualizer.
  useEffect(() => {
    if (focusedIndex < 0) return;
    const drawnNow = virtualizer.getVirtualItems();
    const first = drawnNow[0]?.index ?? -1;
    const last = drawnNow[drawnNow.length - 1]?.index ?? -1;
    if (focusedIndex < first || focusedIndex > last)
      virtualizer.scrollToIndex(focusedIndex, { align: "auto" });
  }, [focusedIndex, virtualizer]);
  const drawn = virtualizer.getVirtualItems();
  const before = drawn.length > 0 ? (drawn[0]?.start ?? 0) - margin : 0;
  const after =
    drawn.length > 0 ? virtualizer.getTotalSize() - ((drawn[drawn.length - 1]?.end ?? 0) - margin) : 0;
  const style = { paddingTop: before, paddingBottom: Math.max(after, 0) };
  const slots = drawn.map((v) => (
    <div key={v.key} data-index={v.index} ref={virtualizer.measureElement} className="window-slot">
      {render(items[v.index] as T)}
    </div>
  ));
  return as === "ul" ? (
    <ul className="rows" ref={listRef as React.RefObject<HTMLUListElement>} style={style}>
      {slots}
    </ul>
  ) : (
    <div ref={listRef as React.RefObject<HTMLDivElement>} style={style}>
      {slots}
    </div>
  );
}
