/**
 * `api.timers` arguments a plugin gets wrong: each is GSF_ERR_BAD_ARGUMENT (the plugin API's
 * code) with a message that names the argument, never the addon's GSF_ERR_NATIVE_ARGUMENT,
 * whether the call is made in an event or in `register`.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, waitFor } from './_server.ts';

/** A plugin `targs` whose `register` runs `registerBody`; its event `targs.calls` notes what each call did. */
function plugin(registerBody = ''): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-targs-')), 'targs');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'index.ts'), `import fs from 'node:fs';
import { definePlugin, GsfError } from 'gsf';

export default definePlugin({
  name: 'targs',
  version: '0.0.1',
  register(api) {
    ${registerBody}
    api.event('targs.note', () => {});
    api.event<{ file: string }>('targs.calls', (p) => {
      const t = api.timers as unknown as Record<string, (...args: unknown[]) => unknown>;
      const calls: Array<[string, () => unknown]> = [
        ["cancel('1')", () => t.cancel!('1')],
        ['cancel()', () => t.cancel!()],
        ['cancel(null)', () => t.cancel!(null)],
        ['cancel(1n)', () => t.cancel!(1n)],
        ['cancel({})', () => t.cancel!({})],
        ['cancel(1.5)', () => t.cancel!(1.5)],
        ['cancel(-1)', () => t.cancel!(-1)],
        ['cancel(NaN)', () => t.cancel!(NaN)],
        ['cancel(2 ** 53)', () => t.cancel!(2 ** 53)],
        ['cancel(0)', () => t.cancel!(0)],
        ['cancel(2 ** 40)', () => t.cancel!(2 ** 40)],
        ["after('5')", () => t.after!('5', 'targs.note')],
        ["every('5')", () => t.every!('5', 'targs.note')],
        ['after(5, name 7)', () => t.after!(5, 'targs.note', null, { name: 7 })],
      ];
      const out: string[] = [];
      for (const [label, call] of calls) {
        try {
          out.push(\`\${label} => \${JSON.stringify(call())}\`);
        } catch (err) {
          out.push(\`\${label} => \${err instanceof GsfError ? err.code : 'not a GsfError'}: \${(err as Error).message}\`);
        }
      }
      fs.writeFileSync(p.file, out.join('\\n'));
    });
  },
});
`);
  return dir;
}

const ID = 'timers.cancel: id must be a timer id (a non-negative safe integer, as after and every return), got';

test.serial('timers.cancel refuses what is not a timer id with GSF_ERR_BAD_ARGUMENT; after and every name what they got', async (t) => {
  const s = await startTestServer({}, [plugin()]);
  try {
    const file = path.join(s.dir, 'calls.txt');
    s.server.invoke('targs.calls', { file });
    await waitFor(() => fs.existsSync(file), 10000, 'the calls');
    t.deepEqual(fs.readFileSync(file, 'utf8').split('\n'), [
      `cancel('1') => GSF_ERR_BAD_ARGUMENT: ${ID} a string ('1')`,
      `cancel() => GSF_ERR_BAD_ARGUMENT: ${ID} undefined`,
      `cancel(null) => GSF_ERR_BAD_ARGUMENT: ${ID} null`,
      `cancel(1n) => GSF_ERR_BAD_ARGUMENT: ${ID} a bigint`,
      `cancel({}) => GSF_ERR_BAD_ARGUMENT: ${ID} an object`,
      `cancel(1.5) => GSF_ERR_BAD_ARGUMENT: ${ID} 1.5`,
      `cancel(-1) => GSF_ERR_BAD_ARGUMENT: ${ID} -1`,
      `cancel(NaN) => GSF_ERR_BAD_ARGUMENT: ${ID} NaN`,
      `cancel(2 ** 53) => GSF_ERR_BAD_ARGUMENT: ${ID} 9007199254740992`,
      // 0 is what after and every return for no timer; an id no timer has is false.
      'cancel(0) => false',
      'cancel(2 ** 40) => false',
      "after('5') => GSF_ERR_BAD_ARGUMENT: timer delay must be a non-negative number of ms, got a string ('5')",
      "every('5') => GSF_ERR_BAD_ARGUMENT: timers.every: interval must be > 0 ms, got a string ('5')",
      "after(5, name 7) => GSF_ERR_BAD_ARGUMENT: timer 'targs.note': name must be a non-empty string",
    ]);
  } finally {
    await s.stop();
  }
});

test.serial('a timer declared in register with a bad argument fails that plugin\'s register, naming it', async (t) => {
  for (const [body, why] of [
    ["api.timers.after('5', 'targs.note');", "timer delay must be a non-negative number of ms, got a string ('5')"],
    ["api.timers.after(5, 'targs.note', null, { name: '' });", "timer 'targs.note': name must be a non-empty string"],
    ["api.timers.cancel('1');", `${ID} a string ('1')`],
  ] as const) {
    const err = await t.throwsAsync(startTestServer({}, [plugin(body)]));
    t.is(err?.message, `plugin 'targs' register failed: ${why}`, body);
    t.is((err?.cause as { code?: string } | undefined)?.code, 'GSF_ERR_BAD_ARGUMENT', body);
  }
});
