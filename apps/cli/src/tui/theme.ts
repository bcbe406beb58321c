// Colour themes: dark (default), light and high-contrast. `LASH_THEME` or
// `/theme` picks one; `NO_COLOR` turns colour off altogether (index.ts).

export type ThemeName = "dark" | "light" | "high-contrast";
export const THEMES: readonly ThemeName[] = ["dark", "light", "high-contrast"];

export interface Palette {
  readonly heading: string;
  readonly code: string;
  readonly codeBlock: string;
  readonly keyword: string;
  readonly string: string;
  readonly number: string;
  readonly comment: string;
  readonly link: string;
  readonly quote: string;
  readonly bullet: string;
  readonly added: string;
  readonly removed: string;
  readonly hunk: string;
  /** Diff line and changed-word backgrounds (undefined: none). */
  readonly addedBg?: string;
  readonly removedBg?: string;
  readonly addedWordBg?: string;
  readonly removedWordBg?: string;
  /** Draw dim text at full strength (high contrast). */
  readonly noDim: boolean;
}

const PALETTES: Record<ThemeName, Palette> = {
  dark: {
    heading: "cyan",
    code: "yellow",
    codeBlock: "white",
    keyword: "magenta",
    string: "green",
    number: "yellow",
    comment: "gray",
    link: "blue",
    quote: "gray",
    bullet: "cyan",
    added: "green",
    removed: "red",
    hunk: "cyan",
    addedBg: "#12301c",
    removedBg: "#3a1417",
    addedWordBg: "#2f6b3d",
    removedWordBg: "#8a2c33",
    noDim: false,
  },
  light: {
    heading: "#0b5cad",
    code: "#8a4b00",
    codeBlock: "black",
    keyword: "#8b1fa9",
    string: "#116329",
    number: "#8a4b00",
    comment: "#6e7781",
    link: "#0b5cad",
    quote: "#57606a",
    bullet: "#0b5cad",
    added: "#116329",
    removed: "#a40e26",
    hunk: "#0b5cad",
    addedBg: "#dafbe1",
    removedBg: "#ffebe9",
    addedWordBg: "#aceebb",
    removedWordBg: "#ffc1c0",
    noDim: false,
  },
  "high-contrast": {
    heading: "cyanBright",
    code: "yellowBright",
    codeBlock: "whiteBright",
    keyword: "magentaBright",
    string: "greenBright",
    number: "yellowBright",
    comment: "whiteBright",
    link: "blueBright",
    quote: "whiteBright",
    bullet: "cyanBright",
    added: "greenBright",
    removed: "redBright",
    hunk: "cyanBright",
    addedWordBg: "green",
    removedWordBg: "red",
    noDim: true,
  },
};

let current: ThemeName = "dark";

export function palette(): Palette {
  return PALETTES[current];
}

export function themeName(): ThemeName {
  return current;
}

export function isTheme(name: string): name is ThemeName {
  return (THEMES as readonly string[]).includes(name);
}

/** Switch the theme for everything drawn from now on (markdown, code, diffs). */
export function setTheme(name: ThemeName): void {
  current = name;
}

/** The theme `LASH_THEME` names (dark when unset or unknown). */
export function themeFromEnv(env: NodeJS.ProcessEnv = process.env): ThemeName {
  const v = (env.LASH_THEME ?? "").trim().toLowerCase();
  return isTheme(v) ? v : "dark";
}
