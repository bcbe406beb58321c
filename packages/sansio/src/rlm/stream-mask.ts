/**
 * The RLM stream mask (reference §2.5): text deltas of a model reply go through it on their way
 * to the visible stream. Everything from a completed start-tag line (`<lashlang>` alone on a
 * terminated line) onward is hidden; a partial last line that could still become the start tag
 * is held back until it is decided. Once the close-tag line (`</lashlang>` alone on a terminated
 * line) is complete the mask is `done`: the caller aborts the provider stream, and the reply
 * text is what the mask `accepted` (it ends with the close-tag line; anything after it in the
 * same delta is dropped).
 */
import { CLOSE_TAG, OPEN_TAG } from "./cell.ts";

export interface MaskStep {
  /** Text to show (the visible stream). */
  readonly visible: string;
  /** The part of the delta that belongs to the reply (all of it until the close-tag line ends). */
  readonly accepted: string;
}

export class StreamMask {
  private text = "";
  /** Offset up to which text was shown. */
  private shown = 0;
  /** Start of the line being scanned (not yet terminated). */
  private lineStart = 0;
  /** Start of the start-tag line, once it is complete. */
  private hideFrom: number | undefined;
  private closed = false;

  /** True once the close-tag line is complete: nothing more belongs to the reply. */
  get done(): boolean {
    return this.closed;
  }

  /** True once a start-tag line is complete (the rest of the reply is hidden). */
  get hiding(): boolean {
    return this.hideFrom !== undefined;
  }

  /** A retried attempt starts the reply over (the visible stream was reset by the host too). */
  reset(): void {
    this.text = "";
    this.shown = 0;
    this.lineStart = 0;
    this.hideFrom = undefined;
    this.closed = false;
  }

  push(delta: string): MaskStep {
    if (this.closed || delta === "") return { visible: "", accepted: "" };
    const base = this.text.length;
    this.text += delta;
    let accepted = delta;
    let nl = this.text.indexOf("\n", this.lineStart);
    while (nl >= 0) {
      const line = this.text.slice(this.lineStart, nl).trim();
      if (this.hideFrom === undefined) {
        if (line === OPEN_TAG) this.hideFrom = this.lineStart;
      } else if (line === CLOSE_TAG) {
        this.closed = true;
        accepted = delta.slice(0, nl + 1 - base);
        this.text = this.text.slice(0, nl + 1);
        this.lineStart = nl + 1;
        break;
      }
      this.lineStart = nl + 1;
      nl = this.text.indexOf("\n", this.lineStart);
    }
    return { visible: this.reveal(), accepted };
  }

  /** At the end of the stream: what was held back and is not hidden. */
  end(): string {
    if (this.hideFrom !== undefined) return this.reveal();
    const out = this.text.slice(this.shown);
    this.shown = this.text.length;
    return out;
  }

  private reveal(): string {
    let upTo: number;
    if (this.hideFrom !== undefined) upTo = this.hideFrom;
    else {
      // hold back a partial last line that could still become the start tag
      const partial = this.text.slice(this.lineStart).trim();
      upTo = OPEN_TAG.startsWith(partial) ? this.lineStart : this.text.length;
    }
    if (upTo <= this.shown) return "";
    const out = this.text.slice(this.shown, upTo);
    this.shown = upTo;
    return out;
  }
}

/** The visible part of a whole reply (a replayed one). */
export function maskedText(text: string): string {
  const m = new StreamMask();
  return m.push(text).visible + m.end();
}
