/**
 * Reads as observations (docs/architecture.md "The approval contract"): the data is fetched, then
 * `AuthorizeObservation` is appended, and only then is the data returned. A fetch that fails
 * records nothing; an approval refusal withholds the data. Paged reads authorize EACH page
 * separately, so a 10k-entry listing never returns an unrecorded page.
 */
import type { ObservationDescription } from "@gatehouse/proto";
import type { ApprovalQueue } from "./approval-client.ts";

/** An observation description without its page number (the helper sets it). */
export type PageDescription = Omit<ObservationDescription, "page">;

/** One page as returned to the caller, with the log id that recorded it. */
export interface ObservedPage<T> {
  data: T;
  /** 0-based page number, as recorded. */
  page: number;
  /** Log id of the ObservationRecorded event. */
  observationId: number;
}

/**
 * Fetches page `page` (0-based) with `fetchPage`, records it, then returns it.
 * `desc` is fixed, or computed from the fetched data (e.g. "Listed 500 files (page 3)"), so the
 * description says what was actually read.
 * @throws whatever `fetchPage` throws (nothing recorded); ApprovalRefused (data withheld);
 *         RangeError when `page` is not a non-negative integer (nothing fetched).
 */
export async function observePage<T>(
  approval: Pick<ApprovalQueue, "authorizeObservation">,
  callerToken: string,
  desc: PageDescription | ((data: T) => PageDescription),
  page: number,
  fetchPage: (page: number) => Promise<T>,
): Promise<ObservedPage<T>> {
  if (!Number.isSafeInteger(page) || page < 0) {
    throw new RangeError(`page must be a non-negative integer (0-based), got ${page}`);
  }
  const data = await fetchPage(page);
  const d = typeof desc === "function" ? desc(data) : desc;
  const observationId = await approval.authorizeObservation(callerToken, { ...d, page });
  return { data, page, observationId };
}

/** A slice of a list for paging: `items` of page `page` and whether more follow. */
export interface PageSlice<T> {
  items: T[];
  page: number;
  /** True when a later page holds more items. */
  more: boolean;
}

/**
 * Page `page` (0-based) of `items` with `pageSize` items per page (a positive integer).
 * @throws RangeError for a bad page or page size.
 */
export function pageOf<T>(items: readonly T[], page: number, pageSize: number): PageSlice<T> {
  if (!Number.isSafeInteger(pageSize) || pageSize <= 0) {
    throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
  }
  if (!Number.isSafeInteger(page) || page < 0) {
    throw new RangeError(`page must be a non-negative integer (0-based), got ${page}`);
  }
  const start = page * pageSize;
  return { items: items.slice(start, start + pageSize), page, more: start + pageSize < items.length };
}
