// Keys that reach the TUI in one terminal write. ink splits escape sequences, bracketed pastes,
// Backspace and Ctrl+C out of a chunk, but leaves other control bytes inside the text around
// them: `Ctrl+U` then `hello` typed (or sent) at once arrives as "\x15hello", which ink reports as
// one text input. `splitKeys` turns such an input back into the key events it holds, in order.
import type { Key } from "ink";

/** Control bytes that are keys of their own (not Tab, Enter or a newline, which pasted text holds). */
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f]/;

const plain: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/** The key events one ink input holds: itself, or the control keys and the text runs between them. */
export function splitKeys(input: string, key: Key): Array<readonly [string, Key]> {
  if (input.length <= 1 || key.ctrl || key.meta || !CONTROL.test(input)) return [[input, key]];
  const out: Array<readonly [string, Key]> = [];
  let run = "";
  for (const ch of input) {
    const code = ch.codePointAt(0)!;
    if (ch.length === 1 && CONTROL.test(ch)) {
      if (run) out.push([run, { ...plain }]);
      run = "";
      if (code === 0) out.push([" ", { ...plain, ctrl: true }]);
      else if (code === 8) out.push(["", { ...plain, backspace: true }]);
      else if (code <= 26) out.push([String.fromCharCode(code + 96), { ...plain, ctrl: true }]);
      // 0x1c–0x1f (Ctrl+\ ] ^ _) are not bound: dropped, never typed into the prompt
    } else run += ch;
  }
  if (run) out.push([run, { ...plain }]);
  return out;
}
