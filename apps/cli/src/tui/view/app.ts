// The TUI root: <Static> transcript, live tail, queue, prompt, status bar, and
// every key binding.
import {
  Box,
  type DOMElement,
  type Key,
  measureElement,
  Static,
  Text,
  useAnimation,
  useApp,
  useInput,
  usePaste,
  useWindowSize,
} from "ink";
import React, {
  useCallback,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  useSyncExternalStore,
} from "react";
import type { ApprovalPrompt } from "../approval.ts";
import {
  applyEntry,
  commandMenu,
  FileIndex,
  fileMenu,
  type Menu,
  mentionAt,
  pastedImagePath,
  searchHistory,
} from "../assist.ts";
import { complete, parseCommand } from "../commands.ts";
import type { Picker, TuiController, TuiState } from "../controller.ts";
import { Editor, History } from "../editor.ts";
import { splitKeys } from "../keys.ts";
import type { Item } from "../model.ts";
import { textWidth, wrapLine } from "../wrap.ts";
import { ApprovalView } from "./approval.ts";
import { InputBox, PLACEHOLDER } from "./input.ts";
import { ItemView } from "./items.ts";
import { AttachedView, MenuView, SearchView } from "./menu.ts";
import { filterOptions, PickerView } from "./picker.ts";
import { StatusBar } from "./status.ts";
import { fmtDuration, h, SPINNER, truncate } from "./text.ts";

/**
 * The width of each row of the last frame drawn, top to bottom, and the terminal width it was
 * drawn at: when the terminal gets narrower it re-wraps those rows, and the frame then takes more
 * rows than ink erases (mount.ts erases the rest). Rows of the live items are counted as not
 * re-wrapped: erasing too much would erase transcript rows above the frame.
 */
export interface FrameShape {
  columns: number;
  widths: number[];
}

export interface AppProps {
  readonly controller: TuiController;
  /** Filled after every frame (mount.ts reads it on a resize). */
  readonly frameShape?: FrameShape;
  readonly history?: History;
  /** Called with every submitted prompt (history persistence). */
  readonly onSubmitted?: (text: string) => void;
}

const DOUBLE_PRESS_MS = 2000;

/**
 * The live items (streaming message, running tool cards). Their box shrinks when the whole frame
 * would be taller than the terminal (the frame's maxHeight) and then shows the newest rows: the
 * rows above are clipped, not drawn, so a frame never scrolls part of itself into the terminal's
 * scrollback. The clipped rows are shown in full when the item finishes and moves to <Static>.
 */
function LiveArea(props: {
  readonly state: TuiState;
  readonly width: number;
  readonly rows: number;
}): React.ReactElement {
  const { state, width } = props;
  const animate = state.running || state.live.some((i) => i.kind === "tool" && i.status === "running");
  const { frame } = useAnimation({ interval: 100, isActive: animate });
  const now = Date.now();
  const maxLines = Math.max(5, props.rows - 14);
  return h(
    React.Fragment,
    null,
    h(
      Box,
      { flexDirection: "column", flexShrink: 1, overflow: "hidden", justifyContent: "flex-end" },
      ...state.live.map((item) =>
        h(
          Box,
          { key: item.id, flexShrink: 0, flexDirection: "column" },
          h(ItemView, { item, width, expanded: state.expanded, frame, now, maxLines }),
        ),
      ),
    ),
    state.running
      ? h(
          Box,
          { marginTop: 1, flexShrink: 0 },
          h(
            Text,
            { wrap: "truncate-end" },
            h(Text, { color: state.cancelling ? "yellow" : "cyan" }, `${SPINNER[frame % SPINNER.length]} `),
            h(
              Text,
              { color: state.cancelling ? "yellow" : undefined },
              state.cancelling ? "Cancelling…" : activity(state),
            ),
            h(
              Text,
              { dimColor: true },
              ` ${fmtDuration(now - (state.turnStartedAt ?? now))}${state.cancelling ? "" : " · esc to cancel"}`,
            ),
          ),
        )
      : null,
  );
}

function activity(state: TuiState): string {
  if (state.approval) return "Waiting for your approval…";
  const last = state.live[state.live.length - 1];
  if (!last) return "Working…";
  if (last.kind === "reasoning" && !last.done) return "Thinking…";
  if (last.kind === "assistant" && !last.done) return "Responding…";
  const running = state.live.filter((i) => i.kind === "tool" && i.status === "running");
  if (running.length === 1 && running[0]?.kind === "tool") return `Running ${running[0].name}…`;
  if (running.length > 1) return `Running ${running.length} tools…`;
  return "Working…";
}

/** What a key does to the approval prompt: a change, `cancel` (the turn), or nothing. */
function approvalAction(
  input: string,
  key: Key,
  prompt: ApprovalPrompt,
): (() => void) | "cancel" | undefined {
  if (prompt.mode === "choose") {
    if (key.escape) return "cancel";
    if (key.upArrow) return () => prompt.move(-1);
    if (key.downArrow || key.tab) return () => prompt.move(1);
    if (key.ctrl || key.meta) return undefined;
    // lower case: the selected call; upper case: every call not answered yet
    switch (input) {
      case "y":
      case "Y":
        return () => prompt.approveOnce(input === "Y");
      case "a":
      case "A":
        return () => prompt.approveSession(input === "A");
      case "n":
      case "N":
        return () => prompt.startDeny(input === "N");
      case "e":
        return () => prompt.startEdit();
      default:
        return undefined;
    }
  }
  // the reason or the arguments being typed
  const ed = prompt.editor;
  if (key.escape) return () => prompt.back();
  if (key.return) return key.shift || key.meta ? () => ed.newline() : () => prompt.submit();
  if (input === "\n" && !key.ctrl) return () => ed.newline();
  if (key.leftArrow) return key.meta || key.ctrl ? () => ed.wordLeft() : () => ed.left();
  if (key.rightArrow) return key.meta || key.ctrl ? () => ed.wordRight() : () => ed.right();
  if (key.upArrow) return () => ed.up();
  if (key.downArrow) return () => ed.down();
  if (key.home || (key.ctrl && input === "a")) return () => ed.home();
  if (key.end || (key.ctrl && input === "e")) return () => ed.end();
  if (key.backspace || (key.ctrl && input === "h"))
    return key.meta ? () => ed.deleteWordBack() : () => ed.backspace();
  if (key.delete) return () => ed.deleteForward();
  if (key.ctrl && input === "u") return () => ed.deleteToLineStart();
  if (key.ctrl && input === "k") return () => ed.deleteToLineEnd();
  if (key.ctrl && input === "w") return () => ed.deleteWordBack();
  if (key.ctrl || key.meta || !input) return undefined;
  // fast typing can arrive as one chunk ending in Enter
  if (input.length > 1 && /^[^\r\n]+\r$/.test(input))
    return () => {
      ed.insert(input.slice(0, -1));
      prompt.submit();
    };
  return () => ed.insert(input.replace(/\r\n?/g, "\n"));
}

function Queue(props: {
  readonly queue: readonly string[];
  readonly width: number;
}): React.ReactElement | null {
  if (props.queue.length === 0) return null;
  const shown = props.queue.slice(0, 3);
  return h(
    Box,
    { flexDirection: "column", marginTop: 1, flexShrink: 0 },
    ...shown.map((q, i) =>
      h(
        Text,
        { key: i, wrap: "truncate-end" },
        h(Text, { color: "yellow" }, "⏳ queued "),
        h(Text, { dimColor: true }, truncate(q.replace(/\s+/g, " "), props.width - 12)),
      ),
    ),
    props.queue.length > 3 ? h(Text, { dimColor: true }, `   +${props.queue.length - 3} more`) : null,
    h(Text, { dimColor: true }, "   sent when the turn ends · ↑ on an empty prompt edits the last one"),
  );
}

export function App(props: AppProps): React.ReactElement {
  const { controller } = props;
  const state = useSyncExternalStore(controller.subscribe, controller.getState);
  const { columns, rows } = useWindowSize();
  const width = Math.max(20, columns || 80);
  const { exit } = useApp();
  const editorRef = useRef<Editor>(new Editor());
  const historyRef = useRef<History>(props.history ?? new History());
  const [, setTick] = useState(0);
  const rerender = useCallback(() => setTick((n) => n + 1), []);
  const lastCtrlC = useRef(0);
  // the picker's cursor and filter live in refs: keys that arrive in one write (Down then Enter)
  // are handled one after the other before React renders again, so each must see the last one's effect
  const pickIndexRef = useRef(0);
  const filterRef = useRef("");
  const setPickIndex = (f: (i: number) => number) => {
    pickIndexRef.current = f(pickIndexRef.current);
    rerender();
  };
  const setFilter = (f: (s: string) => string) => {
    filterRef.current = f(filterRef.current);
    rerender();
  };
  const pickerRef = useRef<Picker | undefined>(undefined);
  const filesRef = useRef<FileIndex>(new FileIndex(controller.ctx.settings.cwd));
  const fileMenuRef = useRef<{ sig: string; menu: Menu | undefined } | undefined>(undefined);
  const [menuIndex, setMenuIndex] = useState(0);
  const menuDismissed = useRef<string | undefined>(undefined);
  const menuKey = useRef("");
  const [search, setSearch] = useState<{ query: string; skip: number } | undefined>(undefined);

  // leaving: one last frame without the prompt box and status bar, then unmount
  const [leaving, setLeaving] = useState(false);
  useEffect(() => {
    if (leaving) exit();
  }, [leaving, exit]);
  useEffect(() => {
    controller.onExit = () => setLeaving(true);
    controller.onRestoreDraft = (text) => {
      const ed = editorRef.current;
      const cur = ed.text;
      ed.clear();
      ed.insert(cur ? `${text}\n${cur}` : text);
      rerender();
    };
    return () => {
      controller.onExit = undefined;
      controller.onRestoreDraft = undefined;
    };
  }, [controller, rerender]);

  // reset the picker cursor when a new picker opens
  const syncPicker = (picker: Picker | undefined) => {
    if (picker === pickerRef.current) return;
    pickerRef.current = picker;
    if (picker) {
      pickIndexRef.current = picker.initial;
      filterRef.current = "";
    }
  };
  syncPicker(state.picker);

  // the completion menu: `/` commands while the prompt is a bare /word, files after an `@`
  const ed0 = editorRef.current;
  let menu: Menu | undefined;
  if (!state.picker && !search && menuDismissed.current !== ed0.text) {
    menu = commandMenu(ed0.text);
    if (!menu && mentionAt(ed0.text, ed0.cursor)) {
      const files = filesRef.current;
      if (files.list === undefined) void files.load().then(() => rerender());
      // ranked once per text/cursor (not again for spinner frames)
      const sig = `${files.version}\0${ed0.cursor}\0${ed0.text}`;
      if (fileMenuRef.current?.sig !== sig)
        fileMenuRef.current = { sig, menu: fileMenu(ed0.text, ed0.cursor, files) };
      menu = fileMenuRef.current.menu;
    }
  }
  const menuSig = menu ? `${menu.kind}:${menu.entries.map((e) => e.insert).join("|")}` : "";
  if (menuSig !== menuKey.current) {
    menuKey.current = menuSig;
    if (menuIndex !== 0) setMenuIndex(0);
  }
  const menuAt = menu ? Math.min(menuIndex, menu.entries.length - 1) : 0;
  const searchHit = search ? searchHistory(historyRef.current.texts(), search.query, search.skip) : undefined;

  const submit = useCallback(() => {
    const ed = editorRef.current;
    const value = ed.value();
    if (!value.trim()) return;
    historyRef.current.push(ed.draft());
    props.onSubmitted?.(ed.text.includes("[pasted ") ? value : ed.text);
    ed.clear();
    rerender();
    // `!command` runs a shell; `!!text` sends `!text` to the model
    if (value.startsWith("!") && !value.startsWith("!!")) {
      controller.runShell(value.slice(1));
      return;
    }
    if (value.startsWith("!!")) {
      controller.submit(value.slice(1));
      return;
    }
    const parsed = parseCommand(value);
    if (parsed.kind === "command") void controller.command(parsed.command);
    else if (parsed.kind === "unknown")
      controller.transcript.notice(
        "warn",
        `unknown command /${parsed.name}${parsed.suggestion ? ` — did you mean /${parsed.suggestion}?` : ""} (/help lists them)`,
      );
    else controller.submit(value);
    if (parsed.kind === "unknown") controller.flushNow();
  }, [controller, props.onSubmitted, rerender]);

  const handlePicker = (input: string, key: Key, picker: Picker) => {
    const options = filterOptions(picker, filterRef.current);
    if (key.escape || (key.ctrl && input === "c")) return controller.closePicker();
    if (key.upArrow) return setPickIndex((i) => Math.max(0, i - 1));
    if (key.downArrow) return setPickIndex((i) => Math.min(options.length - 1, i + 1));
    if (key.pageUp) return setPickIndex((i) => Math.max(0, i - 10));
    if (key.pageDown) return setPickIndex((i) => Math.min(options.length - 1, i + 10));
    if (key.return || key.tab) {
      const o = options[Math.min(pickIndexRef.current, options.length - 1)];
      if (o) void controller.pick(picker, o, key.tab);
      return;
    }
    if (key.backspace || key.delete) {
      setFilter((f) => f.slice(0, -1));
      setPickIndex(() => 0);
      return;
    }
    if (input && !key.ctrl && !key.meta && input >= " ") {
      setFilter((f) => f + input);
      setPickIndex(() => 0);
    }
  };

  useInput((input, key) => {
    for (const [i, k] of splitKeys(input, key)) handleKey(i, k);
  });

  /** Keys while an approval request is on screen (see view/approval.ts for what they do). */
  const handleApproval = (input: string, key: Key, prompt: ApprovalPrompt, cancelling: boolean) => {
    if (key.ctrl && input === "c") {
      if (cancelling) {
        const now = Date.now();
        if (now - lastCtrlC.current < DOUBLE_PRESS_MS) return controller.forceExit();
        lastCtrlC.current = now;
        controller.setHint("still cancelling — press Ctrl+C again to leave now", DOUBLE_PRESS_MS);
        return;
      }
      controller.cancel();
      return;
    }
    const act = approvalAction(input, key, prompt);
    if (act === "cancel") controller.cancel();
    else if (act) {
      act();
      controller.approvalChanged();
    }
  };

  const handleKey = (input: string, key: Key) => {
    const ed = editorRef.current;
    // the controller's current state, not this render's: an earlier key of the same write may have changed it
    const state = controller.getState();
    if (state.approval) return handleApproval(input, key, state.approval, state.cancelling);
    const picker = state.picker;
    syncPicker(picker);
    if (picker) return handlePicker(input, key, picker);

    // Ctrl+R reverse history search
    if (search) {
      if (key.escape || (key.ctrl && (input === "c" || input === "g"))) return setSearch(undefined);
      if (key.ctrl && input === "r") {
        const older = searchHistory(historyRef.current.texts(), search.query, search.skip + 1);
        return setSearch({ ...search, skip: older ? search.skip + 1 : search.skip });
      }
      if (key.return || key.tab || key.rightArrow || key.leftArrow) {
        if (searchHit) {
          ed.clear();
          ed.insert(searchHit.text);
        }
        setSearch(undefined);
        return;
      }
      if (key.backspace || key.delete) return setSearch({ query: search.query.slice(0, -1), skip: 0 });
      if (input && !key.ctrl && !key.meta && input >= " ")
        return setSearch({ query: search.query + input, skip: 0 });
      return;
    }
    if (key.ctrl && input === "r") return setSearch({ query: "", skip: 0 });
    if (key.ctrl && input === "x") {
      controller.dropContext();
      return;
    }

    // the completion menu
    if (menu) {
      const entry = menu.entries[menuAt];
      if (key.upArrow) return setMenuIndex(Math.max(0, menuAt - 1));
      if (key.downArrow) return setMenuIndex(Math.min(menu.entries.length - 1, menuAt + 1));
      if (key.escape) {
        menuDismissed.current = ed.text;
        return rerender();
      }
      // Enter on a complete command runs it as typed; on an @path already complete it sends
      const exact =
        key.return &&
        (menu.kind === "command"
          ? parseCommand(ed.text).kind === "command"
          : ed.text.slice(menu.start, menu.end) === entry?.insert.trimEnd());
      if (entry && !exact && (key.tab || (key.return && !key.shift && !key.meta))) {
        const next = applyEntry(ed.text, menu, entry);
        const noArgs = menu.kind === "command" && !entry.insert.endsWith(" ");
        ed.clear();
        ed.insert(next.text);
        ed.cursor = next.cursor;
        if (key.return && noArgs) return submit();
        return rerender();
      }
    }

    // cancel / quit
    if (key.ctrl && input === "c") {
      if (state.cancelling) {
        // the cancel is taking long (a tool that ignores it): a second press leaves anyway
        const now = Date.now();
        if (now - lastCtrlC.current < DOUBLE_PRESS_MS) return controller.forceExit();
        lastCtrlC.current = now;
        controller.setHint("still cancelling — press Ctrl+C again to leave now", DOUBLE_PRESS_MS);
        return;
      }
      if (controller.cancel()) return;
      if (!ed.isEmpty) {
        ed.clear();
        rerender();
        return;
      }
      const now = Date.now();
      if (now - lastCtrlC.current < DOUBLE_PRESS_MS) {
        void controller.quit();
        return;
      }
      lastCtrlC.current = now;
      controller.setHint("press Ctrl+C again to quit", DOUBLE_PRESS_MS);
      return;
    }
    if (key.escape) {
      controller.cancel();
      return;
    }
    if (key.ctrl && input === "d") {
      if (ed.isEmpty) void controller.quit();
      else {
        ed.deleteForward();
        rerender();
      }
      return;
    }
    if (key.ctrl && input === "o") return controller.toggleExpanded();
    if (key.ctrl && input === "l") return controller.repaint();

    // submit / newline
    if (key.return) {
      if (key.shift || key.meta) ed.newline();
      else if (ed.text[ed.cursor - 1] === "\\") {
        ed.backspace();
        ed.newline();
      } else return submit();
      return rerender();
    }
    if (input === "\n" && !key.ctrl) {
      ed.newline();
      return rerender();
    }

    // history and movement
    if (key.upArrow) {
      if (ed.isEmpty && state.queue.length > 0) {
        const q = controller.unqueue();
        if (q !== undefined) ed.insert(q);
      } else if (!ed.up()) {
        const prev = historyRef.current.prev(ed.draft());
        if (prev) ed.load(prev);
      }
      return rerender();
    }
    if (key.downArrow) {
      if (!ed.down()) {
        const next = historyRef.current.next();
        if (next) ed.load(next);
      }
      return rerender();
    }
    if (key.leftArrow) {
      if (key.meta || key.ctrl) ed.wordLeft();
      else ed.left();
      return rerender();
    }
    if (key.rightArrow) {
      if (key.meta || key.ctrl) ed.wordRight();
      else ed.right();
      return rerender();
    }
    if (key.home || (key.ctrl && input === "a")) {
      ed.home();
      return rerender();
    }
    if (key.end || (key.ctrl && input === "e")) {
      ed.end();
      return rerender();
    }
    if (key.meta && input === "b") {
      ed.wordLeft();
      return rerender();
    }
    if (key.meta && input === "f") {
      ed.wordRight();
      return rerender();
    }

    // deletion
    if (key.backspace || (key.ctrl && input === "h")) {
      if (key.meta) ed.deleteWordBack();
      else ed.backspace();
      return rerender();
    }
    if (key.delete) {
      ed.deleteForward();
      return rerender();
    }
    if (key.ctrl && input === "u") {
      ed.deleteToLineStart();
      return rerender();
    }
    if (key.ctrl && input === "k") {
      ed.deleteToLineEnd();
      return rerender();
    }
    if (key.ctrl && input === "w") {
      ed.deleteWordBack();
      return rerender();
    }

    if (key.tab) {
      const m = /^\/(\S*)$/.exec(ed.text);
      if (m) {
        const names = complete(m[1]!);
        if (names.length === 1) {
          ed.clear();
          ed.insert(`/${names[0]} `);
          rerender();
        } else if (names.length > 1) controller.setHint(names.map((n) => `/${n}`).join("  "), 4000);
      }
      return;
    }

    if (key.ctrl || key.meta || !input) return;
    // fast typing can arrive as one chunk ending in Enter ("text\r"): type it, then submit
    if (input.length > 1 && /^[^\r\n]+\r$/.test(input)) {
      ed.insert(input.slice(0, -1));
      if (ed.text[ed.cursor - 1] === "\\") {
        ed.backspace();
        ed.newline();
        return rerender();
      }
      return submit();
    }
    // a multi-line chunk without bracketed paste is a paste
    if (input.length > 1 && /[\r\n]/.test(input)) ed.paste(input);
    else ed.insert(input);
    rerender();
  };

  usePaste((text) => {
    const approval = controller.getState().approval;
    if (approval) {
      // pasted into the reason or the arguments as typed (never collapsed: it is JSON or a sentence)
      if (approval.mode !== "choose") {
        approval.editor.insert(text.replace(/\r\n?/g, "\n"));
        controller.approvalChanged();
      }
      return;
    }
    if (controller.getState().picker) return;
    // a dropped/pasted image file path becomes an @mention (attached as an image when sent)
    const image = pastedImagePath(text);
    if (image) editorRef.current.insert(`@${image} `);
    else editorRef.current.paste(text);
    rerender();
  });

  const renderItem = useCallback(
    (item: Item) => h(ItemView, { key: item.id, item, width, expanded: state.expanded }),
    [width, state.expanded],
  );

  const frameRef = useRef<DOMElement>(null);
  const promptRef = useRef<DOMElement>(null);
  const menuRef = useRef<DOMElement>(null);
  const frameShape = props.frameShape;
  useLayoutEffect(() => {
    if (!frameShape || !frameRef.current || !promptRef.current) return;
    const total = measureElement(frameRef.current).height;
    const prompt = measureElement(promptRef.current).height;
    const st = controller.getState();
    const bottom: number[] = [];
    // the picker's box starts with its margin row; the prompt box's margin is outside it
    if (st.picker || st.approval) for (let i = 0; i < prompt; i++) bottom.push(i === 0 ? 0 : width);
    else {
      const ed = editorRef.current;
      const rowsOf = ed.isEmpty
        ? [Math.min(width, 4 + textWidth(PLACEHOLDER[st.running ? 1 : 0]))]
        : ed.text
            .split("\n")
            .flatMap((l) => wrapLine([{ text: `› ${l} ` }], width).map((r) => textWidth(r[0]?.text ?? "")));
      bottom.push(0, width, ...rowsOf.slice(0, Math.max(0, prompt - 2)), width);
      while (bottom.length < prompt + 1) bottom.splice(-1, 0, width);
    }
    // the completion menu's rows (below the prompt) are counted as not re-wrapped, like live rows
    if (menuRef.current) for (let i = measureElement(menuRef.current).height; i > 0; i--) bottom.push(1);
    if (st.hint)
      for (const r of wrapLine([{ text: st.hint }], width)) bottom.push(textWidth(r[0]?.text ?? ""));
    bottom.push(width); // the status bar
    const above = Math.max(0, total - bottom.length);
    frameShape.columns = width;
    frameShape.widths = [...new Array<number>(above).fill(1), ...bottom];
  });

  const pickIndex = pickIndexRef.current;
  const filter = filterRef.current;
  const pickerOptions = state.picker ? filterOptions(state.picker, filter) : [];
  if (leaving)
    return h(Static<Item>, {
      key: `static-${state.staticKey}`,
      items: state.committed as Item[],
      children: renderItem,
    });
  return h(
    React.Fragment,
    null,
    h(Static<Item>, {
      key: `static-${state.staticKey}`,
      items: state.committed as Item[],
      children: renderItem,
    }),
    // the live frame is never as tall as the terminal: a taller frame would scroll its top rows
    // into the scrollback, where ink can no longer erase them (copies of the frame pile up there).
    // Its width is the terminal's as ink knows it: on a resize ink draws the frame again before
    // React has the new width, and a frame wider than the terminal would wrap (a doubled prompt box).
    h(
      Box,
      { ref: frameRef, flexDirection: "column", maxHeight: Math.max(6, (rows || 40) - 1) },
      h(LiveArea, { state, width, rows: rows || 40 }),
      h(Queue, { queue: state.queue, width }),
      h(AttachedView, { attached: state.attached, width }),
      state.approval
        ? h(
            Box,
            { ref: promptRef, marginTop: 1, flexShrink: 0, flexDirection: "column" },
            h(ApprovalView, {
              prompt: state.approval,
              waiting: state.approvalsWaiting,
              sessionId: state.sessionId,
              width,
              rows: rows || 40,
            }),
          )
        : state.picker
          ? h(
              Box,
              { ref: promptRef, flexShrink: 0, flexDirection: "column" },
              h(PickerView, {
                picker: state.picker,
                options: pickerOptions,
                index: Math.min(pickIndex, Math.max(0, pickerOptions.length - 1)),
                filter,
                width,
              }),
            )
          : search
            ? h(
                Box,
                { ref: promptRef, marginTop: 1, flexShrink: 0, flexDirection: "column" },
                h(SearchView, { query: search.query, match: searchHit?.text, width }),
              )
            : h(
                Box,
                { ref: promptRef, marginTop: 1, flexShrink: 0, flexDirection: "column" },
                h(InputBox, { editor: editorRef.current, running: state.running, width, focused: true }),
              ),
      menu && !state.picker && !search && !state.approval
        ? h(
            Box,
            { ref: menuRef, flexShrink: 0, flexDirection: "column" },
            h(MenuView, { menu, index: menuAt, width }),
          )
        : null,
      state.hint ? h(Box, { flexShrink: 0 }, h(Text, { color: "yellow" }, state.hint)) : null,
      h(Box, { flexShrink: 0, flexDirection: "column" }, h(StatusBar, { state, width })),
    ),
  );
}
