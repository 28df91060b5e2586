/**
 * A headless Chromium for browser tests, with nothing installed by hand: first the binary that
 * the `@sparticuz/chromium` devDependency ships (unpacked to the temp directory on first use),
 * then a system Chromium. If neither starts, the error names the commands that install one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestFn } from 'ava';
import { chromium, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

/** System browsers tried after the npm one; `GSF_CHROMIUM` names another. */
const SYSTEM_CHROMIUMS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
// Loopback only: keep Chromium from reaching for the network on its own.
const QUIET_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
/** The commands that bring a Chromium these tests can start, quoted in the failure message. */
export const INSTALL_CHROMIUM = 'npm install --no-audit --no-fund (brings the @sparticuz/chromium devDependency) '
  + 'or, on Debian: apt-get install -y chromium';

interface Candidate {
  name: string;
  executablePath(): Promise<string>;
  args: string[];
}

async function npmChromium(): Promise<Candidate> {
  const { default: sparticuz } = await import('@sparticuz/chromium');
  // Its flags keep GPU work in process and on software rendering, as a machine without a display needs.
  // `--single-process` is left out: a context with several tabs needs a renderer per tab.
  const args = sparticuz.args.filter((a) => a !== '--single-process' && !a.startsWith('--headless'));
  return { name: '@sparticuz/chromium', executablePath: () => unpackedOnce(() => sparticuz.executablePath()), args: [...args, ...QUIET_ARGS] };
}

/**
 * Runs `unpack` under a lock shared by the test processes: `@sparticuz/chromium` unpacks its
 * binary into the temp directory, and another process that looks meanwhile finds a part-written
 * file and takes it as unpacked. The lock is a folder (mkdir is atomic); whoever waits for it
 * then finds the files whole.
 */
async function unpackedOnce(unpack: () => Promise<string>): Promise<string> {
  const lock = path.join(os.tmpdir(), 'gsf-chromium-unpack.lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (Date.now() > deadline) throw new Error(`${lock} was held for 2 minutes: a test process unpacking Chromium died (remove the folder)`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await unpack();
  } finally {
    fs.rmdirSync(lock);
  }
}

function systemChromiums(): Candidate[] {
  const paths = [process.env.GSF_CHROMIUM, ...SYSTEM_CHROMIUMS].filter((p): p is string => !!p);
  return paths.filter((p) => fs.existsSync(p)).map((p) => ({ name: p, executablePath: async () => p, args: QUIET_ARGS }));
}

/** Starts a persistent headless context in `userDataDir` with the first Chromium that launches. */
export async function launchChromium(userDataDir: string, options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; browser: string }> {
  const failures: string[] = [];
  const candidates: Array<() => Promise<Candidate[]>> = [
    async () => [await npmChromium()],
    async () => systemChromiums(),
  ];
  for (const list of candidates) {
    let found: Candidate[];
    try {
      found = await list();
    } catch (err) {
      failures.push(`@sparticuz/chromium: ${(err as Error).message.split('\n')[0]}`);
      continue;
    }
    for (const c of found) {
      try {
        const executablePath = await c.executablePath();
        // A fixed locale: under LANG=C, Chromium's default ("en-US@posix") is a tag Intl rejects.
        const context = await chromium.launchPersistentContext(userDataDir, { ...options, executablePath, headless: true, locale: options.locale ?? 'en-US', args: c.args });
        return { context, browser: c.name };
      } catch (err) {
        failures.push(`${c.name}: ${(err as Error).message.split('\n')[0]}`);
      }
    }
  }
  if (failures.length === 1) failures.push(`no system Chromium at ${SYSTEM_CHROMIUMS.join(', ')} (or GSF_CHROMIUM)`);
  throw new Error(`no headless Chromium could start (${failures.join('; ')}). Install one with: ${INSTALL_CHROMIUM}`);
}

/**
 * One Chromium for a test file: started before its tests, closed (its profile removed) after.
 * `openTab` opens a tab that records page errors and console errors, less those `ignore` accepts.
 */
export function chromiumForFile(test: TestFn, options: BrowserContextOptions, ignore: (text: string) => boolean = () => false):
  { openTab(): Promise<{ page: Page; errors: string[] }> } {
  let userDataDir = '';
  let context: BrowserContext | null = null;
  test.before(async () => {
    userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-chromium-'));
    context = (await launchChromium(userDataDir, options)).context;
  });
  test.after.always(async () => {
    await context?.close();
    if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
  });
  return {
    async openTab() {
      const page = await context!.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
      page.on('console', (msg) => {
        if (msg.type() === 'error' && !ignore(msg.text())) errors.push(`console: ${msg.text()}`);
      });
      return { page, errors };
    },
  };
}

/**
 * Whether the characters of `word` in the first text node of element `selector` are laid out
 * left to right (a bidi override in data around it must not turn the page's own words).
 */
export async function readsLeftToRight(page: Page, selector: string, word: string): Promise<boolean> {
  // A string, not a function: the TypeScript loader wraps named closures in a helper the page lacks.
  return page.evaluate(`(() => {
    const node = document.querySelector(${JSON.stringify(selector)}).firstChild;
    const w = ${JSON.stringify(word)};
    const at = node.textContent.indexOf(w);
    if (at < 0) throw new Error('no ' + w + ' in ' + node.textContent);
    const left = (i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1); return r.getBoundingClientRect().left; };
    for (let i = at; i < at + w.length - 1; i++) if (!(left(i) < left(i + 1))) return false;
    return true;
  })()`);
}
