import { describe, expect, it } from "vitest";
import { highlightCode, highlightDiff, renderMarkdown } from "../src/markdown.ts";

describe("renderMarkdown", () => {
  it("renders what models write", () => {
    const html = renderMarkdown(
      "## Plan\n\n1. **read** the `file`\n2. _edit_ it\n   - nested\n\n> quoted\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n```ts\nconst x = 1;\n```\n\nSee [docs](https://example.com/a?b=1&c=2).",
    );
    expect(html).toContain("<h3>Plan</h3>");
    expect(html).toContain(
      "<ol><li><strong>read</strong> the <code>file</code></li><li><em>edit</em> it<ul><li>nested</li></ul></li></ol>",
    );
    expect(html).toContain("<blockquote><p>quoted</p></blockquote>");
    expect(html).toContain('<td style="text-align:right">2</td>');
    expect(html).toContain('<pre class="code" data-lang="ts"><code>const x = 1;</code></pre>');
    expect(html).toContain(
      '<a href="https://example.com/a?b=1&amp;c=2" rel="noreferrer noopener" target="_blank">docs</a>',
    );
  });

  it("never lets markup or loads through", () => {
    const html = renderMarkdown(
      "<img src=x onerror=alert(1)> <script>alert(1)</script> ![i](https://evil.test/p.png) [x](javascript:alert(1)) `<b>`",
    );
    expect(html).not.toMatch(/<img|<script|javascript:/);
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).toContain("<code>&lt;b&gt;</code>");
  });

  it("colours diffs and code", () => {
    expect(highlightDiff("@@ -1 +1 @@\n-a\n+b")).toBe(
      '<span class="d-hunk">@@ -1 +1 @@</span>\n<span class="d-del">-a</span>\n<span class="d-add">+b</span>',
    );
    expect(highlightCode('if x { print("hi") } # note')).toBe(
      '<span class="h-kw">if</span> x { <span class="h-kw">print</span>(<span class="h-str">&quot;hi&quot;</span>) } <span class="h-com"># note</span>',
    );
  });
});
