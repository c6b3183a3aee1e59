/**
 * Inert Markdown for untrusted descriptions. Raw HTML is never parsed (it shows as text, no
 * rehype-raw), links are never followed (the text and its URL are shown, there is no <a href>),
 * images are never loaded (alt text and URL are shown), and unsafe URLs such as `javascript:` are
 * dropped by react-markdown's URL filter before display. ```diff fences get per-line colouring.
 * Characters that do not show as themselves (direction controls, zero-width, other format and
 * control characters) are shown as marked `⟨U+202E⟩` tokens everywhere: text, code spans, code
 * blocks, diffs, link text and the URLs shown (`rehypeInvisible`, `Visible`).
 */
import type { ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { Visible } from "./components/Visible.tsx";
import { rehypeInvisible } from "./rehypeInvisible.ts";

function diffLineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  return "diff-context";
}

function DiffCode({ text }: { text: string }) {
  const lines = text.replace(/\n$/, "").split("\n");
  return (
    <code className="language-diff">
      {lines.map((line, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: lines of a fixed text; equal lines are distinct rows
        <span key={index} className={`diff-line ${diffLineClass(line)}`}>
          <Visible text={line} />
          {"\n"}
        </span>
      ))}
    </code>
  );
}

const unsafe = "(URL removed: not a safe scheme)";

const components: Components = {
  a: ({ href, children }) => (
    <span className="md-link" title="Links in descriptions are not followed">
      <span className="md-link-text">{children}</span>{" "}
      <code className="md-url">
        <Visible text={href || unsafe} />
      </code>
    </span>
  ),
  img: ({ alt, src }) => (
    <span className="md-image" title="Images in descriptions are not loaded">
      [image: <Visible text={alt || "no description"} />]{" "}
      <code className="md-url">
        <Visible text={typeof src === "string" && src ? src : unsafe} />
      </code>
    </span>
  ),
  code: ({ className, children }) => {
    const language = /language-([\w-]+)/.exec(className ?? "")?.[1];
    if (language === "diff") return <DiffCode text={String(children ?? "")} />;
    return <code className={className}>{children as ReactNode}</code>;
  },
};

/** Renders untrusted Markdown inertly (see the module comment). */
export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeInvisible]} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
}
