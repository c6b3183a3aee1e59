/**
 * A rehype plugin for the inert Markdown renderer: every text node (paragraphs, headings, table
 * cells, link text, code spans and code blocks) has its invisible characters (direction controls,
 * zero-width, other format and control characters; `findInvisible` of the gateway contract)
 * replaced by marked tokens `<span class="invisible-char" title="U+202E RIGHT-TO-LEFT OVERRIDE">⟨U+202E⟩</span>`,
 * so the rendered text equals `showInvisible` of what the description holds. Attribute values the
 * renderer shows (link URLs, image sources and alt text) go through `Visible` in markdown.tsx.
 * ```diff code blocks are left to the diff renderer, which marks each line itself.
 */
import { codePointLabel, splitInvisible } from "@gatehouse/gateway-contract/invisible";
import type { ElementContent, Root, RootContent } from "hast";

function isDiffCode(node: RootContent): boolean {
  if (node.type !== "element" || node.tagName !== "code") return false;
  const classes = node.properties.className;
  return Array.isArray(classes) && classes.includes("language-diff");
}

function marked(text: string): ElementContent[] {
  return splitInvisible(text).map((p) =>
    typeof p === "string"
      ? { type: "text", value: p }
      : {
          type: "element",
          tagName: "span",
          properties: {
            className: ["invisible-char"],
            title: `${codePointLabel(p.codePoint)} ${p.name} (not visible in the text)`,
          },
          children: [{ type: "text", value: p.token }],
        },
  );
}

function mark(parent: { children: RootContent[] }): void {
  parent.children = parent.children.flatMap((child): RootContent[] => {
    if (child.type === "text") return marked(child.value);
    if (child.type === "element" && !isDiffCode(child)) mark(child as { children: RootContent[] });
    return [child];
  });
}

/** The plugin (no options): `rehypePlugins={[rehypeInvisible]}`. */
export function rehypeInvisible() {
  return (tree: Root) => {
    mark(tree);
  };
}
