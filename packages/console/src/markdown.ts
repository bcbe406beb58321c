// Model text as Markdown, safely: `marked` parses it, raw HTML in it is shown as text (never
// as markup), links keep only http(s) and mailto targets and open in a new tab without a
// referrer, and images become links (the console loads nothing the model names).
import { Marked, type Tokens } from "marked";

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;",
  );
}

const safeUrl = (url: string): string | undefined => {
  const u = url.trim();
  return /^(https?:|mailto:)/i.test(u) ? u : undefined;
};

const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    link({ href, tokens }: Tokens.Link) {
      const inner = this.parser.parseInline(tokens);
      const url = safeUrl(href);
      return url === undefined
        ? inner
        : `<a href="${escapeHtml(url)}" rel="noreferrer noopener" target="_blank">${inner}</a>`;
    },
    image({ href, text }: Tokens.Image) {
      const url = safeUrl(href);
      const label = escapeHtml(text || "image");
      return url === undefined
        ? `[${label}]`
        : `<a href="${escapeHtml(url)}" rel="noreferrer noopener" target="_blank">[image: ${label}]</a>`;
    },
  },
});

/** HTML for `text`; safe to set as innerHTML. */
export function renderMarkdown(text: string): string {
  return marked.parse(text, { async: false });
}
