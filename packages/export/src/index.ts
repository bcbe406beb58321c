import type { HtmlOptions } from "./html.ts";
import { renderSessionHtml } from "./html.ts";
import { type ExportSource, loadSession } from "./load.ts";
import { type MarkdownOptions, renderSessionMarkdown } from "./md.ts";
import type { ExportedSession } from "./schema.ts";

export { type ArtifactSource, artifactIdsOf, inlineArtifacts, loadArtifacts } from "./artifacts.ts";
export { EXPORT_USAGE, type ExportCliContext, type ExportIo, runExportCli, runImportCli } from "./cli.ts";
export { type HtmlOptions, renderSessionHtml } from "./html.ts";
export { ImportError, type ImportOptions, type ImportResult, importSession, parseExport } from "./import.ts";
export { type ExportSource, loadSession } from "./load.ts";
export { escapeHtml, highlightCode, highlightDiff, renderMarkdown } from "./markdown.ts";
export { type MarkdownOptions, renderSessionMarkdown } from "./md.ts";
export * from "./schema.ts";

export type ExportFormat = "html" | "json" | "md";
export const EXPORT_FORMATS: readonly ExportFormat[] = ["html", "json", "md"];

export interface ExportOptions {
  readonly html?: HtmlOptions;
  readonly markdown?: MarkdownOptions;
}

/** Render an already loaded export in one format. */
export function renderExport(
  exported: ExportedSession,
  format: ExportFormat,
  options: ExportOptions = {},
): string {
  switch (format) {
    case "html":
      return renderSessionHtml(exported, options.html);
    case "md":
      return renderSessionMarkdown(exported, options.markdown);
    case "json":
      return `${JSON.stringify(exported, null, 2)}\n`;
  }
}

/**
 * Export a session (with every branch and its subagent sessions when the
 * source is a store) as a self-contained HTML page, schema-versioned JSON
 * (`importSession` reads it back) or a Markdown transcript.
 */
export async function exportSession(
  source: ExportSource,
  sessionId: string,
  format: ExportFormat,
  options: ExportOptions = {},
): Promise<string> {
  return renderExport(await loadSession(source, sessionId), format, options);
}
