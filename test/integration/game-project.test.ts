/**
 * A game in its own project: gsf packed with `npm pack`, installed as a dependency of a new
 * project (its install script runs), and run with `npx gsf start` on the project's own
 * MANIFEST.json and plugins/, plus a plugin folder elsewhere on disk named by path.
 *
 * The native core is built once per run: the install takes this checkout's build through
 * GSF_NATIVE_PREBUILT when it was made from the same sources (native/install.mjs checks the
 * digest; otherwise it compiles), and the project starts with this checkout's dependencies
 * linked in, as a warm npm cache would give them, so that npm only adds gsf itself.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { GsfClient } from '../../src/sdk/index.ts';
import { writeOutsidePlugin } from './_outside-plugin.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

/**
 * The environment without what `npm test` sets for its own scripts (npm_*) and for gsf's tests
 * (GSF_NATIVE_TESTING), so the inner npm and gsf act as a user's would.
 */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env)
    .filter(([k]) => !k.toLowerCase().startsWith('npm_') && k !== 'GSF_NATIVE_TESTING'));
}

/** Process ids of every descendant of `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while we looked
    }
  }
  const out: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const children = parents.get(queue.shift()!) ?? [];
    out.push(...children);
    queue.push(...children);
  }
  return out;
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/** Hard links of every package in `from` (gsf's own dependencies, already installed) into `to`. */
async function linkDependencies(from: string, to: string): Promise<void> {
  fs.mkdirSync(to, { recursive: true });
  const packages = fs.readdirSync(from).filter((entry) => !entry.startsWith('.')).map((entry) => path.join(from, entry));
  await run('cp', ['-al', ...packages, to]);
}

async function until<T>(fn: () => T | undefined, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a new project installs gsf from its packed tarball and runs its own plugins with npx gsf start', async (t) => {
  t.timeout(12 * 60_000); // npm builds the addon from the tarball: minutes on a busy 2-core machine
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-game-project-'));
  const env = cleanEnv();
  try {
    const { stdout: packed } = await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, env });
    const tarball = path.join(work, packed.trim().split('\n').pop()!);
    t.true(fs.existsSync(tarball), packed);

    const game = path.join(work, 'my-game');
    fs.mkdirSync(path.join(game, 'plugins', 'lobby'), { recursive: true });
    // No "type": a CommonJS-scope project, the case that once needed a package.json trick.
    fs.writeFileSync(path.join(game, 'package.json'), JSON.stringify({
      name: 'my-game', version: '1.0.0', private: true,
      dependencies: { gsf: `file:${tarball}` },
      // npm 11 asks before running a dependency's install script; gsf's builds the native core.
      allowScripts: { [`file:${tarball}`]: true },
    }, null, 2));
    fs.writeFileSync(path.join(game, 'plugins', 'lobby', 'index.ts'), `import { definePlugin } from 'gsf';

export default definePlugin({
  name: 'lobby',
  version: '1.0.0',
  register(api) {
    api.counters.define('lobby', 'joins', 'Players who joined');
    api.sessions.onMessage<{ player: string }>('lobby.join', (body, msg) => {
      api.counters.increase('lobby', 'joins');
      msg.reply({ welcome: body.player });
    });
  },
});
`);
    const elsewhere = writeOutsidePlugin(path.join(work, 'shared-plugins', 'greeter'));
    fs.writeFileSync(path.join(game, 'MANIFEST.json'), JSON.stringify({
      components: [
        { name: 'EventDispatcher', arguments: { event_threads_size: 1 } },
        { name: 'ApiService', arguments: { api_service_port: 0 } },
        { name: 'CounterService', arguments: {} },
        { name: 'SessionService', arguments: { websocket_address: '127.0.0.1', websocket_port: 0 } },
      ],
      plugins: ['lobby', elsewhere],
    }, null, 2));

    await linkDependencies(path.join(root, 'node_modules'), path.join(game, 'node_modules'));
    const installEnv = { ...env, GSF_NATIVE_PREBUILT: path.join(root, 'build', 'addon') };
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--foreground-scripts'],
      { cwd: game, env: installEnv, maxBuffer: 16 << 20 });
    t.regex(install.stdout, /gsf: native addon taken from .* \(same sources\)|Linking CXX shared library Release\/gsf_native\.node/);
    t.true(fs.existsSync(path.join(game, 'node_modules', 'gsf', 'build', 'addon', 'Release', 'gsf_native.node')), 'the install built the native core');

    // Its own process group, so no process of it outlives the test.
    const npx = spawn('npx', ['gsf', 'start'], { cwd: game, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    npx.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    npx.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    const exited = new Promise<number | null>((resolve) => npx.on('close', (code) => resolve(code)));
    try {
      const line = await until(() => out.split('\n').find((l) => l.includes('listening api=')), 60_000, `the listening line (stderr: ${err})`);
      const m = /listening api=127\.0\.0\.1:(\d+) websocket=127\.0\.0\.1:(\d+)/.exec(line);
      t.truthy(m, line);
      t.regex(line, /"plugins":\["lobby@1\.0\.0","greeter@2\.1\.0"\]/);

      const client = await GsfClient.connect({ url: `ws://127.0.0.1:${m![2]}`, version: '1.0.0', codec: 'json' });
      t.deepEqual(await client.request('lobby.join', { player: 'ada' }), { welcome: 'ada' });
      t.deepEqual(await client.request('greeter.hello', { name: 'ada' }), { text: 'hello, ada', sameGsf: true });
      await client.close();
      const joins = await fetch(`http://127.0.0.1:${m![1]}/v1/counters/lobby/joins/`);
      t.deepEqual(await joins.json(), { category: 'lobby', counter: 'joins', value: 1 });
      const same = await fetch(`http://127.0.0.1:${m![1]}/v1/counters/greeter/same_gsf_on_main/`);
      t.deepEqual(await same.json(), { category: 'greeter', counter: 'same_gsf_on_main', value: 1 });

      // npx runs the command through a shell that does not pass SIGTERM on: signal the server itself.
      const server = descendants(npx.pid!).find((pid) => cmdline(pid).includes('gsf start') && cmdline(pid).startsWith('node'));
      t.truthy(server, descendants(npx.pid!).map(cmdline).join(' | '));
      process.kill(server!, 'SIGTERM');
      t.is(await exited, 0, `stderr: ${err}`);
      t.regex(out, /SIGTERM received: stopping/);
      t.regex(out, /\] stopped/);
    } finally {
      if (npx.exitCode === null) process.kill(-npx.pid!, 'SIGKILL');
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});
