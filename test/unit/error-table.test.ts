/** The one error table, its copy in docs/reference/errors.md, and the codes other modules use from it. */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorTable, GsfError, PluginError, ProtocolErrorCodes, type ErrorSpec } from '../../src/errors.ts';
import { ProtocolError } from '../../src/session/protocol.ts';
import { native } from '../../src/native.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const USE: Record<ErrorSpec['use'], string> = {
  http: '', start: 'stops the start', plugin: 'plugin API, log', event: 'event log line', auth: 'AuthenticationClient system error',
  protocol: '`_error` frame', native: 'native addon',
};

function docRows(): string[][] {
  const doc = fs.readFileSync(path.join(root, 'docs', 'reference', 'errors.md'), 'utf8');
  const start = doc.indexOf('# Error codes\n');
  const section = doc.slice(start, doc.indexOf('\n## ', start));
  return section.split('\n')
    .filter((l) => l.startsWith('| `GSF_ERR_'))
    .map((l) => {
      const m = /^\| `(GSF_ERR_[A-Z_]+)` \| (.+?) \| `(.*)` \|$/.exec(l);
      if (!m) throw new Error(`docs/reference/errors.md error row not in the form | \`CODE\` | use | \`message\` |: ${l}`);
      return [m[1]!, m[2]!, m[3]!];
    });
}

test('the error table of docs/reference/errors.md is the code table, row by row', (t) => {
  const expected = Object.entries(ErrorTable).map(([code, e]: [string, ErrorSpec]) => [code, e.status > 0 ? String(e.status) : USE[e.use], e.message]);
  t.deepEqual(docRows(), expected);
});

test('HTTP codes have a status, others none', (t) => {
  for (const [code, e] of Object.entries(ErrorTable) as Array<[string, ErrorSpec]>) {
    t.is(e.use === 'http', e.status >= 400 && e.status < 600, code);
    if (e.use !== 'http') t.is(e.status, 0, code);
  }
});

test('protocol codes come from the table, under the names session code uses', (t) => {
  t.is(ProtocolError, ProtocolErrorCodes);
  for (const code of Object.values(ProtocolError)) t.is(ErrorTable[code].use, 'protocol', code);
  t.deepEqual(Object.values(ProtocolError).sort(),
    Object.entries(ErrorTable).filter(([, e]) => (e as ErrorSpec).use === 'protocol').map(([c]) => c).sort());
});

test('native codes: the ones native/core/errors.h defines and the addon throws', (t) => {
  const header = fs.readFileSync(path.join(root, 'native', 'core', 'errors.h'), 'utf8');
  const inHeader = [...header.matchAll(/"(GSF_ERR_[A-Z_]+)"/g)].map((m) => m[1]!).sort();
  const inTable = Object.entries(ErrorTable).filter(([, e]) => (e as ErrorSpec).use === 'native').map(([c]) => c).sort();
  t.deepEqual(inHeader, inTable);
  const argument = t.throws(() => native.take(100000, new Float64Array(9), new Uint8Array(8), 1)) as Error & { code: string };
  t.is(argument.code, 'GSF_ERR_NATIVE_ARGUMENT');
  t.regex(argument.message, /^gsf native: /);
  const state = t.throws(() => native.take(250, new Float64Array(9), new Uint8Array(8), 1)) as Error & { code: string };
  t.is(state.code, 'GSF_ERR_NATIVE_STATE');
  t.is(state.message, 'gsf native: slot is not registered');
});

test('GsfError bodies and PluginError wording', (t) => {
  const e = new GsfError('GSF_ERR_METHOD_NOT_ALLOWED', ['POST', '/x'], { details: { allowed: ['GET'] } });
  t.deepEqual(e.toBody(), { error: 'GSF_ERR_METHOD_NOT_ALLOWED', message: 'method POST not allowed for /x', allowed: ['GET'] });
  t.is(e.status, 405);
  const cause = new Error('kaboom');
  const p = new PluginError('probe', 'event', cause, { subject: 'probe.note' });
  t.is(p.message, "plugin 'probe' event 'probe.note' failed: kaboom");
  t.like(p, { code: 'GSF_ERR_HANDLER_FAILED', plugin: 'probe', stage: 'event', subject: 'probe.note', status: 0 });
  t.is(p.cause, cause);
  t.true(p instanceof GsfError);
  t.is(new PluginError('x', 'start hook', 'not an error').message, "plugin 'x' start hook failed: not an error");
  t.is(new PluginError('x', 'load', cause, { code: 'GSF_ERR_PLUGIN_LOAD' }).message, "plugin 'x' load failed: kaboom");
});
