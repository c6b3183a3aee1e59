import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { type ReactNode, useEffect, useLayoutEffect, useRef, useState } from "react";

/** Lists up to this many rows are rendered whole; longer ones render only the rows near the screen. */
export const WINDOW_FROM = 100;
/** Estimated row height in CSS pixels before a row is measured. */
const ROW_ESTIMATE_PX = 76;

/**
 * A `<ul className="rows">` of `items`, each drawn by `render` (which returns the row's `<li>`).
 * Short lists (≤ {@link WINDOW_FROM}) render every row; longer lists are windowed against the page's
 * scroll (@tanstack/react-virtual), rows measured as drawn, so thousands of pending actions cost
 * only the rows on screen. `focusedIndex` (−1 = none) is scrolled into view when it changes, also
 * when that row is not drawn yet.
 */
export function WindowedRows<T>({
  items,
  itemKey,
  render,
  focusedIndex,
}: {
  items: readonly T[];
  itemKey: (item: T) => string | number;
  render: (item: T) => ReactNode;
  focusedIndex: number;
}) {
  if (items.length <= WINDOW_FROM) return <ul className="rows">{items.map(render)}</ul>;
  return <Windowed items={items} itemKey={itemKey} render={render} focusedIndex={focusedIndex} />;
}

function Windowed<T>({
  items,
  itemKey,
  render,
  focusedIndex,
}: {
  items: readonly T[];
  itemKey: (item: T) => string | number;
  render: (item: T) => ReactNode;
  focusedIndex: number;
}) {
  const listRef = useRef<HTMLUListElement>(null);
  const [margin, setMargin] = useState(0);
  // The list's offset from the page top moves when content above it changes: re-read after each render.
  useLayoutEffect(() => {
    const top = Math.round((listRef.current?.getBoundingClientRect().top ?? 0) + window.scrollY);
    if (top !== margin) setMargin(top);
  });
  const virtualizer = useWindowVirtualizer({
    count: items.length,
    estimateSize: () => ROW_ESTIMATE_PX,
    overscan: 8,
    scrollMargin: margin,
    getItemKey: (i) => itemKey(items[i] as T),
  });
  // A drawn row is scrolled to by the page itself; one not drawn yet is brought in by the virtualizer.
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
  return (
    <ul className="rows" ref={listRef} style={{ paddingTop: before, paddingBottom: Math.max(after, 0) }}>
      {drawn.map((v) => (
        <div key={v.key} data-index={v.index} ref={virtualizer.measureElement} className="row-slot">
          {render(items[v.index] as T)}
        </div>
      ))}
    </ul>
  );
}
