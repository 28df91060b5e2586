/**
 * /metrics as a strict reader of the exposition format reads it: a plugin counter defined with an
 * initial value past 2^53 keeps it (stored as a floating-point value, as `update` stores one),
 * and is written as that value.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { startTestServer, writePlugin } from './_server.ts';
import { client } from './_http.ts';

/** A strict reader of the text format: problems found, and the samples by series. */
function strict(text: string): { errors: string[]; samples: Map<string, string> } {
  const errors: string[] = [];
  const samples = new Map<string, string>();
  const help = new Set<string>();
  const type = new Set<string>();
  if (!text.endsWith('\n')) errors.push('no final line feed');
  for (const line of text.slice(0, -1).split('\n')) {
    let m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ([\s\S]*)$/.exec(line);
    if (m) {
      const set = m[1] === 'HELP' ? help : type;
      if (set.has(m[2]!)) errors.push(`${m[1]} twice: ${m[2]}`);
      set.add(m[2]!);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (NaN|[+-]Inf|[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/.exec(line);
    if (!m) { errors.push(`bad line: ${JSON.stringify(line)}`); continue; }
    const key = `${m[1]}{${m[3] ?? ''}}`;
    if (samples.has(key)) errors.push(`duplicate series ${key}`);
    samples.set(key, m[4]!);
  }
  return { errors, samples };
}

test.serial('counters.define with an initial value past 2^53 keeps it, as update does; /metrics writes it', async (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-metrics-'));
  const dir = writePlugin(tmp, 'pm', `api.counters.define('pm', 'big', 'd', 1e20);`);
  const s = await startTestServer({}, [dir]);
  try {
    const r = await client(s.server.api.port).get('/metrics');
    t.is(r.status, 200);
    const { errors, samples } = strict(r.text);
    t.deepEqual(errors, []);
    // docs/reference/metrics.md: "update(c, n, 1e20) reads back 1e20, not a saturated int64".
    t.is(native.counterValue('pm', 'big'), 1e20);
    t.is(samples.get('gsf_plugin_value{category="pm",name="big"}'), '100000000000000000000');
  } finally {
    await s.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
});
