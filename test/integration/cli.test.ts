import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const gsf = path.join(root, 'bin', 'gsf.mjs');

function writeManifest(components: unknown[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-cli-'));
  const file = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(file, JSON.stringify({ components, plugins: [path.join(root, 'plugins', 'example')] }));
  return file;
}

function run(args: string[], cwd = root) {
  const child = spawn(process.execPath, [gsf, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited, out: () => out, err: () => err };
}

async function until(fn: () => string | undefined, ms: number): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('gsf start serves the API port, answers JSON errors, and stops on SIGTERM with exit 0', async (t) => {
  const manifest = writeManifest([
    { name: 'ApiService', arguments: { api_service_port: 0 } },
    { name: 'EventDispatcher', arguments: { event_threads_size: 2 } },
  ]);
  const p = run(['start', '--manifest', manifest]);
  try {
    const line = await until(() => p.out().split('\n').find((l) => l.includes('listening api=')), 30000);
    const m = /listening api=127\.0\.0\.1:(\d+) websocket=none/.exec(line);
    t.truthy(m, line);
    const base = `http://127.0.0.1:${m![1]}`;
    const status = await fetch(`${base}/v1/status`);
    t.is(status.status, 200);
    t.is(status.headers.get('content-type'), 'application/json');
    const body = await status.json() as { plugins: Array<{ name: string }>; event_threads_size: number };
    t.deepEqual(body.plugins.map((x) => x.name), ['example']);
    t.is(body.event_threads_size, 2);
    const missing = await fetch(`${base}/nope`);
    t.is(missing.status, 404);
    t.deepEqual(await missing.json(), { error: 'GSF_ERR_NOT_FOUND', message: 'no route for GET /nope' });
    const wrong = await fetch(`${base}/v1/status`, { method: 'POST', body: '{}' });
    t.is(wrong.status, 405);
    t.is(wrong.headers.get('allow'), 'GET, HEAD');
    t.deepEqual(await wrong.json(), { error: 'GSF_ERR_METHOD_NOT_ALLOWED', message: 'method POST not allowed for /v1/status', allowed: ['GET', 'HEAD'] });
  } finally {
    p.child.kill('SIGTERM');
  }
  t.is(await p.exited, 0);
  t.regex(p.out(), /SIGTERM received: stopping/);
  t.regex(p.out(), /\] stopped/);
});

test('gsf start refuses a bad manifest with the exact message and exit 1', async (t) => {
  const manifest = writeManifest([{ name: 'EventDispatcher', arguments: { event_threads_size: 0 } }]);
  const p = run(['start', '--manifest', manifest]);
  t.is(await p.exited, 1);
  t.is(p.err(), `gsf: TypeError: ${manifest}: EventDispatcher.event_threads_size must be a positive integer\n`);
});

test('a manifest that is not a small file (a device, a stray large file) is refused, not read until memory runs out', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-cli-big-'));
  const big = path.join(dir, 'big.json');
  fs.writeFileSync(big, Buffer.alloc(16 * 1024 * 1024 + 1, 0x20));
  const files = ['/dev/zero', big];
  const runs = files.map((file) => run(['start', '--manifest', file]));
  for (const [i, file] of files.entries()) {
    const p = runs[i]!;
    t.is(await p.exited, 1, file);
    t.is(p.err(), `gsf: TypeError: ${file}: is larger than 16 MiB, which no manifest is (is it the right file?)\n`);
  }
});

test('a manifest given by a relative path, or the default one, is named by its full path', async (t) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-cli-')));
  fs.mkdirSync(path.join(dir, 'sub'));
  fs.writeFileSync(path.join(dir, 'sub', 'M.json'), JSON.stringify({ components: [{ name: 'EventDispatcher', arguments: { event_threads_size: 0 } }] }));
  const relative = run(['start', '--manifest', 'sub/M.json'], dir);
  t.is(await relative.exited, 1);
  t.is(relative.err(), `gsf: TypeError: ${path.join(dir, 'sub', 'M.json')}: EventDispatcher.event_threads_size must be a positive integer\n`);
  const missing = run(['start'], dir);
  t.is(await missing.exited, 1);
  t.is(missing.err(), `gsf: TypeError: ${path.join(dir, 'MANIFEST.json')}: cannot be read (ENOENT)\n`);
});

test('gsf start refuses a log file it cannot open, naming the manifest argument', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-cli-log-'));
  for (const [file, code] of [[path.join(dir, 'missing', 'x.log'), 'ENOENT'], [dir, 'EISDIR']] as const) {
    const manifest = writeManifest([{ name: 'ApiService', arguments: { api_service_port: 0 } }, { name: 'Logging', arguments: { log_file: file } }]);
    const p = run(['start', '--manifest', manifest]);
    t.is(await p.exited, 1);
    t.is(p.err(), `gsf: TypeError: ${manifest}: Logging.log_file '${file}' cannot be opened (${code})\n`);
  }
  const agent = path.join(dir, 'authenticator.MANIFEST.json');
  fs.writeFileSync(agent, JSON.stringify({ components: [{ name: 'Authenticator', arguments: { enabled: 1, port: 0 } }, { name: 'Logging', arguments: { log_file: 'no/such/dir/agent.log' } }] }));
  const a = run(['authenticator', '--manifest', agent]);
  t.is(await a.exited, 1);
  t.is(a.err(), `gsf: TypeError: ${agent}: Logging.log_file 'no/such/dir/agent.log' cannot be opened (ENOENT)\n`);
});

/**
 * Starts `gsf start` with one plugin whose onStart hook writes a marker file, then awaits
 * `hookTail` (a TypeScript expression); resolves once the hook has begun.
 */
async function startHeldBy(name: string, hookTail: string): Promise<ReturnType<typeof run>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gsf-cli-${name}-`));
  const marker = path.join(dir, 'starting');
  fs.mkdirSync(path.join(dir, name));
  fs.writeFileSync(path.join(dir, name, 'index.ts'), `import fs from 'node:fs';
import { definePlugin } from ${JSON.stringify(path.join(root, 'src', 'index.ts'))};
export default definePlugin({ name: '${name}', version: '1.0.0', register(api) {
  api.onStart(async () => { fs.writeFileSync(${JSON.stringify(marker)}, ''); await ${hookTail}; });
} });
`);
  const manifest = path.join(dir, 'MANIFEST.json');
  fs.writeFileSync(manifest, JSON.stringify({ components: [{ name: 'ApiService', arguments: { api_service_port: 0 } }], plugins: [path.join(dir, name)] }));
  const p = run(['start', '--manifest', manifest]);
  await until(() => (fs.existsSync(marker) ? 'started' : undefined), 30000);
  return p;
}

test('a SIGTERM during the start stops the server once it is up (exit 0), not half-started', async (t) => {
  const p = await startHeldBy('slow', 'new Promise((r) => setTimeout(r, 1500))');
  p.child.kill('SIGTERM');
  t.is(await p.exited, 0);
  t.regex(p.out(), /SIGTERM received: stopping/);
  t.regex(p.out(), /\] stopped/);
  t.is(p.err(), 'gsf: SIGTERM during the start: the server stops once it is up (a second signal exits at once)\n');
});

test('a start held by an onStart hook that never settles: the first SIGTERM says it waits, a second exits 1 at once', async (t) => {
  const p = await startHeldBy('stuck', 'new Promise(() => undefined)');
  p.child.kill('SIGTERM');
  await until(() => (p.err().includes('during the start') ? 'said' : undefined), 10000);
  p.child.kill('SIGINT');
  t.is(await p.exited, 1);
  t.is(p.err(), 'gsf: SIGTERM during the start: the server stops once it is up (a second signal exits at once)\n'
    + 'gsf: SIGINT again during the start: exiting at once\n');
});

test('gsf start and gsf authenticator refuse an option they do not take, with usage and exit 2', async (t) => {
  const cases = [
    [['start', '--manfest', 'x.json'], "gsf start: unknown option '--manfest' (start takes --manifest <value>, --watch)"],
    [['start', 'MANIFEST.json'], "gsf start: unknown argument 'MANIFEST.json' (start takes --manifest <value>, --watch)"],
    [['start', '--watch=false'], 'gsf start: --watch takes no value'],
    [['start', '--manifest='], 'gsf start: --manifest needs a value'],
    [['start', '--manifest'], 'gsf start: --manifest needs a value'],
    [['start', '--manifest', '--watch'], 'gsf start: --manifest needs a value'],
    // An empty argument, as a script's unset variable gives (`--manifest "$GAME_MANIFEST"`).
    [['start', '--manifest', ''], 'gsf start: --manifest needs a value'],
    [['authenticator', '--manifest', ''], 'gsf authenticator: --manifest needs a value'],
    [['authenticator', '--watch'], "gsf authenticator: unknown option '--watch' (authenticator takes --manifest <value>)"],
    // Given twice, whichever was meant: refused rather than the first (or the last) taken.
    [['start', '--manifest', 'a.json', '--manifest=b.json'], 'gsf start: --manifest is given more than once'],
    [['start', '--watch', '--watch'], 'gsf start: --watch is given more than once'],
    [['authenticator', '--manifest=a.json', '--manifest', 'a.json'], 'gsf authenticator: --manifest is given more than once'],
  ] as const;
  // All at once: each is a gsf process of its own.
  const runs = cases.map(([args]) => run([...args]));
  for (const [i, [args, message]] of cases.entries()) {
    const p = runs[i]!;
    t.is(await p.exited, 2, args.join(' '));
    t.true(p.err().startsWith(`${message}\nusage: gsf <command>`), p.err());
  }
});

test('--help or -h after a command prints the usage on standard output and exits 0, as gsf --help does', async (t) => {
  const cases = [['start', '--help'], ['start', '--manifest', 'x.json', '-h'], ['objects', '--help'], ['objects', 'types', '--help'], ['authenticator', '--help'],
    ['bench', '--help'], ['bench', 'events', '-h']];
  const runs = cases.map((args) => run(args));
  for (const [i, args] of cases.entries()) {
    const p = runs[i]!;
    t.is(await p.exited, 0, args.join(' '));
    t.is(p.err(), '', args.join(' '));
    t.regex(p.out(), args[0] === 'objects' ? /^usage: gsf objects types / : /^usage: gsf <command>/, args.join(' '));
  }
});

test('gsf with an unknown command prints usage and exits 2, and so does bench with an unknown benchmark', async (t) => {
  const [p, bench, objects] = [run(['launch']), run(['bench', 'events', 'nope']), run(['objects', 'typse'])];
  t.is(await p.exited, 2);
  t.regex(p.err(), /^gsf: unknown command 'launch'\nusage: gsf <command>/);
  t.is(await objects.exited, 2);
  t.regex(objects.err(), /^gsf: unknown objects command 'typse'\nusage: gsf objects types /);
  // Checked before any benchmark runs: events, named first, did not start.
  t.is(await bench.exited, 2);
  t.regex(bench.err(), /^gsf: unknown benchmark 'nope' \(known: events, auth, /);
  t.is(bench.out(), '');
});

test('gsf bench refuses an option its benchmarks do not take, or one without its value, before any runs', async (t) => {
  const cases: Array<[string[], string]> = [
    [['bench', 'events', '--thread=1', '--rounds=1'], "gsf bench: unknown option '--thread=1' (events takes --threads=…, --modes=…, --rounds=…)\n"],
    [['bench', 'events', '--modes=trivial', '--rounds'], 'gsf bench: --rounds needs a value (--rounds=…)\n'],
    [['bench', 'events', '--threads='], 'gsf bench: --threads needs a value (--threads=…)\n'],
    [['bench', 'sessions', '--light=1'], "gsf bench: unknown option '--light=1' (sessions takes --io-threads=…, --light, --peak-only)\n"],
    [['bench', 'api', '--threads=2'], "gsf bench: unknown option '--threads=2' (api takes none)\n"],
  ];
  const runs = cases.map(([args]) => run(args));
  for (const [i, [args, message]] of cases.entries()) {
    const p = runs[i]!;
    t.is(await p.exited, 2, args.join(' '));
    t.is(p.err(), message, args.join(' '));
    t.is(p.out(), '', args.join(' '));
  }
});
