import { transform } from "sucrase";

/** File name the snippet carries in stacks and error positions. */
export const SNIPPET_FILENAME = "snippet.ts";

/** A TypeScript syntax error found while stripping types; line/column are 1-based in the snippet. */
export class SnippetSyntaxError extends Error {
  override name = "SyntaxError";
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

/**
 * Strips TypeScript types from an ES module, keeping ESM syntax and line numbers (sucrase "typescript"
 * transform only). Unused imports are KEPT so that the import check sees every import the snippet wrote.
 * @throws SnippetSyntaxError with the snippet position when the source does not parse.
 */
export function stripTypes(code: string): string {
  try {
    return transform(code, {
      transforms: ["typescript"],
      keepUnusedImports: true,
      disableESTransforms: true,
      filePath: SNIPPET_FILENAME,
    }).code;
  } catch (error) {
    const e = error as { message?: string; loc?: { line?: number; column?: number } };
    const message = String(e.message ?? "could not parse the snippet")
      .replace(/^Error transforming \S+: /, "")
      .replace(/\s*\(\d+:\d+\)$/, "");
    const line = Number(e.loc?.line ?? 0);
    const column = line > 0 ? Math.max(1, Number(e.loc?.column ?? 1)) : 0;
    throw new SnippetSyntaxError(message, line, column);
  }
}
