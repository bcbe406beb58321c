/**
 * A small, safe Markdown renderer for model text: every character of the input
 * is HTML-escaped before any markup is added, raw HTML is shown as text,
 * links keep only http(s)/mailto targets, and images become links (an export
 * page never loads anything). Covers what models write: headings, paragraphs,
 * emphasis, inline code, fenced code, lists (nested by indent), block quotes,
 * tables, rules and links.
 */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;",
  );
}

function safeUrl(url: string): string | undefined {
  const u = url.trim();
  return /^(https?:|mailto:)/i.test(u) ? u : undefined;
}

/** Inline markup on already-escaped text. */
function inline(raw: string): string {
  // split out code spans first so their content is left alone
  const parts = raw.split(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g);
  let out = "";
  for (let i = 0; i < parts.length; i++) {
    if (i % 3 === 0) out += spans(escapeHtml(parts[i]!));
    else if (i % 3 === 2)
      out += `<code>${escapeHtml(parts[i]!.trim() === "" ? parts[i]! : parts[i]!.replace(/^ (.*) $/, "$1"))}</code>`;
  }
  return out;
}

function spans(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+&quot;[^&]*&quot;)?\)/g, (_m, alt: string, url: string) => {
      const u = safeUrl(url.replace(/&amp;/g, "&"));
      return u
        ? `<a href="${escapeHtml(u)}" rel="noreferrer noopener" target="_blank">🖼 ${alt || "image"}</a>`
        : `🖼 ${alt}`;
    })
    .replace(/\[([^\]]+)\]\(([^)\s]+)(?:\s+&quot;[^&]*&quot;)?\)/g, (_m, text: string, url: string) => {
      const u = safeUrl(url.replace(/&amp;/g, "&"));
      return u ? `<a href="${escapeHtml(u)}" rel="noreferrer noopener" target="_blank">${text}</a>` : text;
    })
    .replace(
      /\*\*([^*\n]+?)\*\*|__([^_\n]+?)__/g,
      (_m, a?: string, b?: string) => `<strong>${a ?? b}</strong>`,
    )
    .replace(
      /(^|[^*\w])\*([^*\s][^*\n]*?)\*(?!\*)|(^|[^_\w])_([^_\s][^_\n]*?)_(?![_\w])/g,
      (_m, p1, a, p2, b) => (a !== undefined ? `${p1}<em>${a}</em>` : `${p2}<em>${b}</em>`),
    )
    .replace(/~~([^~\n]+)~~/g, "<del>$1</del>")
    .replace(/(^|[\s(])(https?:\/\/[^\s<)]+)/g, (_m, pre: string, url: string) => {
      if (/href="/.test(pre)) return _m;
      return `${pre}<a href="${url}" rel="noreferrer noopener" target="_blank">${url}</a>`;
    });
}

interface ListItem {
  indent: number;
  ordered: boolean;
  text: string[];
}

function renderList(items: ListItem[]): string {
  let out = "";
  const stack: { indent: number; ordered: boolean }[] = [];
  for (const item of items) {
    while (stack.length && item.indent < stack[stack.length - 1]!.indent) {
      out += stack.pop()!.ordered ? "</li></ol>" : "</li></ul>";
    }
    const top = stack[stack.length - 1];
    if (!top || item.indent > top.indent) {
      stack.push({ indent: item.indent, ordered: item.ordered });
      out += item.ordered ? "<ol><li>" : "<ul><li>";
    } else out += "</li><li>";
    const body = item.text.join("\n");
    const task = /^\[( |x|X)\] /.exec(body);
    out += task
      ? `<input type="checkbox" disabled${task[1] !== " " ? " checked" : ""}> ${inline(body.slice(4))}`
      : inline(body);
  }
  while (stack.length) out += stack.pop()!.ordered ? "</li></ol>" : "</li></ul>";
  return out;
}

function splitRow(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((c) => c.trim());
}

/** Markdown → HTML (safe to embed). `highlight` may colour fenced code by language. */
export function renderMarkdown(
  text: string,
  highlight: (code: string, lang: string) => string = (c) => escapeHtml(c),
): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let para: string[] = [];
  const flushPara = () => {
    if (para.length) out.push(`<p>${para.map(inline).join("<br>")}</p>`);
    para = [];
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = /^(\s*)(```+|~~~+)\s*([\w+#.-]*)/.exec(line);
    if (fence) {
      flushPara();
      const close = fence[2]!;
      const lang = fence[3] ?? "";
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trimStart().startsWith(close)) body.push(lines[i++]!);
      i++;
      const code = body.join("\n");
      out.push(
        `<pre class="code"${lang ? ` data-lang="${escapeHtml(lang)}"` : ""}><code>${
          lang === "diff" ? highlightDiff(code) : highlight(code, lang)
        }</code></pre>`,
      );
      continue;
    }
    if (line.trim() === "") {
      flushPara();
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flushPara();
      const level = Math.min(6, heading[1]!.length + 1);
      out.push(`<h${level}>${inline(heading[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flushPara();
      out.push("<hr>");
      i++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      flushPara();
      const body: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i]!)) body.push(lines[i++]!.replace(/^\s*>\s?/, ""));
      out.push(`<blockquote>${renderMarkdown(body.join("\n"), highlight)}</blockquote>`);
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1]!)) {
      flushPara();
      const head = splitRow(line);
      const aligns = splitRow(lines[i + 1]!).map((c) =>
        c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : "",
      );
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]!)) rows.push(splitRow(lines[i++]!));
      const cell = (tag: string, c: string, k: number) =>
        `<${tag}${aligns[k] ? ` style="text-align:${aligns[k]}"` : ""}>${inline(c)}</${tag}>`;
      out.push(
        `<table><thead><tr>${head.map((c, k) => cell("th", c, k)).join("")}</tr></thead><tbody>${rows
          .map((r) => `<tr>${r.map((c, k) => cell("td", c, k)).join("")}</tr>`)
          .join("")}</tbody></table>`,
      );
      continue;
    }
    const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      flushPara();
      const items: ListItem[] = [];
      while (i < lines.length) {
        const l = lines[i]!;
        const m = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(l);
        if (m) {
          items.push({ indent: m[1]!.length, ordered: /\d/.test(m[2]!), text: [m[3]!] });
          i++;
        } else if (l.trim() !== "" && /^\s+/.test(l) && items.length) {
          items[items.length - 1]!.text.push(l.trim());
          i++;
        } else break;
      }
      out.push(renderList(items));
      continue;
    }
    para.push(line);
    i++;
  }
  flushPara();
  return out.join("\n");
}

/** A unified diff with added/removed/hunk lines marked for colouring. */
export function highlightDiff(diff: string): string {
  return diff
    .split("\n")
    .map((l) => {
      const e = escapeHtml(l);
      if (l.startsWith("+++") || l.startsWith("---")) return `<span class="d-file">${e}</span>`;
      if (l.startsWith("@@")) return `<span class="d-hunk">${e}</span>`;
      if (l.startsWith("+")) return `<span class="d-add">${e}</span>`;
      if (l.startsWith("-")) return `<span class="d-del">${e}</span>`;
      return e;
    })
    .join("\n");
}

const LASH_KEYWORDS = new Set([
  "if",
  "else",
  "for",
  "in",
  "await",
  "cancel",
  "submit",
  "print",
  "call",
  "and",
  "or",
  "not",
  "true",
  "false",
  "null",
  "let",
  "finish",
  "start",
]);

/** Syntax colouring for Lashlang (and, roughly, any C-like code): keywords, strings, numbers, comments, calls. */
export function highlightCode(code: string, _lang = "lashlang"): string {
  const re =
    /(\/\/[^\n]*|#[^\n]*)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][\w]*)(?=\s*\()|([A-Za-z_][\w]*)/g;
  let out = "";
  let last = 0;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    out += escapeHtml(code.slice(last, m.index));
    last = m.index + m[0].length;
    const e = escapeHtml(m[0]);
    if (m[1]) out += `<span class="h-com">${e}</span>`;
    else if (m[2]) out += `<span class="h-str">${e}</span>`;
    else if (m[3]) out += `<span class="h-num">${e}</span>`;
    else if (m[4])
      out += LASH_KEYWORDS.has(m[4]) ? `<span class="h-kw">${e}</span>` : `<span class="h-fn">${e}</span>`;
    else if (m[5]) out += LASH_KEYWORDS.has(m[5]) ? `<span class="h-kw">${e}</span>` : e;
  }
  return out + escapeHtml(code.slice(last));
}
