/**
 * Names events are given come from data (an invoke's name, setEventName, a timer's name, default
 * `{parent}_#{n}` names), and each stays in the process for good (the profiler, the metrics and
 * every thread's cache keep one entry per name): they are at most 256 bytes, a chain that keeps
 * creating events stops growing its names there, and past 10,000 names new ones share
 * `(other event names)`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { startTestServer, waitFor, type TestServer } from './_server.ts';

const srcIndex = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'index.ts');

function plugin(notes: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-names-'));
  fs.writeFileSync(path.join(dir, 'index.ts'), `import fs from 'node:fs';
import { definePlugin } from ${JSON.stringify(srcIndex)};
const note = (r: unknown) => fs.appendFileSync(${JSON.stringify(notes)}, JSON.stringify(r) + '\\n');
export default definePlugin({
  name: 'names', version: '0.0.1',
  register(api) {
    api.event<number>('chain', (left, ev) => {
      if (left > 0) api.invoke('chain', left - 1, { tag: ev.tag });
      else note({ label: 'chain-end', name: ev.name });
    });
    api.event<{ label: string; name?: string; rename?: string; timer?: string }>('try', (p, ev) => {
      const attempt = (f: () => unknown) => { try { f(); return 'ok'; } catch (e) { return (e as { code?: string }).code ?? String(e); } };
      const r: Record<string, unknown> = { label: p.label };
      if (p.name !== undefined) r.invoke = attempt(() => api.invoke('named', { label: p.label }, { name: p.name }));
      if (p.rename !== undefined) r.rename = attempt(() => api.setEventName(p.rename!));
      if (p.timer !== undefined) r.timer = attempt(() => api.timers.after(60000, 'named', { label: 'never' }, { name: p.timer }));
      r.name = ev.name;
      note(r);
    });
    api.event<{ label: string; record?: boolean }>('named', (p, ev) => { if (p.record !== false) note({ label: p.label, name: ev.name }); });
  },
});
`);
  return dir;
}

let s: TestServer;
let notes: string;
test.before(async () => {
  notes = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-names-notes-')), 'notes.jsonl');
  s = await startTestServer({}, [plugin(notes)]);
});
test.after.always(async () => {
  await s?.stop();
});

function noted(label: string): Promise<Record<string, unknown>> {
  return waitFor(() => {
    if (!fs.existsSync(notes)) return undefined;
    return fs.readFileSync(notes, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => r.label === label);
  }, 20000, label);
}

test.serial('a chain that keeps creating events stops growing its default name at 256 bytes', async (t) => {
  s.server.invoke('chain', 500, { tag: 77 });
  // 'chain' + '_#1' × 83 is 254 bytes; one more link would pass 256, so the name stays.
  t.is((await noted('chain-end')).name, `chain${'_#1'.repeat(83)}`);
});

test.serial('a name over 256 bytes is refused by invoke, setEventName and timers; 256 bytes is taken', async (t) => {
  const long = 'é'.repeat(129); // 258 bytes
  const fits = `${'é'.repeat(127)}xx`; // 256 bytes
  s.server.invoke('try', { label: 'long', name: long, rename: long, timer: long });
  t.like(await noted('long'), { invoke: 'GSF_ERR_BAD_ARGUMENT', rename: 'GSF_ERR_BAD_ARGUMENT', timer: 'GSF_ERR_BAD_ARGUMENT', name: 'try' });
  s.server.invoke('try', { label: 'fits', name: fits, rename: fits });
  t.like(await noted('fits'), { invoke: 'ok', rename: 'ok', name: fits });
  t.is((await waitFor(() => fs.readFileSync(notes, 'utf8').includes(`"name":"${fits}"`) ? 'seen' : undefined, 20000, 'the named child')), 'seen');
  t.throws(() => s.server.invoke('named', { label: 'x' }, { name: long }), { code: 'GSF_ERR_BAD_ARGUMENT', message: /invoke: name must be at most 256 bytes in UTF-8/ });
});

test.serial('past 10,000 event names, new ones share "(other event names)"; names seen before keep theirs', async (t) => {
  for (let i = 0; i < 10_000; i++) s.server.invoke('named', { label: `n-${i}`, record: false }, { name: `n-${i}` });
  s.server.invoke('named', { label: 'late' }, { name: 'a name never seen' });
  s.server.invoke('named', { label: 'early again' }, { name: 'n-0' });
  s.server.invoke('named', { label: 'handler name' });
  t.is((await noted('late')).name, '(other event names)');
  t.is((await noted('early again')).name, 'n-0');
  t.is((await noted('handler name')).name, 'named');
});
