/**
 * docs/guides/objects.md, field types: a `datetime` field's default is an ISO-8601 string. One
 * naming a day the month does not have (February 30th) is refused like any other invalid date;
 * it used to be taken and to become another day (2030-03-02), which every stored object read.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runObjectsCommand } from '../../src/objects-command.ts';
import { describeError } from '../../src/errors.ts';

/** `gsf objects types` on a project holding `declarations`: exit code and error text. */
function types(declarations: Record<string, unknown>): { code: number; err: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-datetime-'));
  fs.writeFileSync(path.join(dir, 'MANIFEST.json'), JSON.stringify({ components: [] }));
  fs.mkdirSync(path.join(dir, 'objects'));
  fs.writeFileSync(path.join(dir, 'objects', 'a.json'), JSON.stringify(declarations));
  const before = process.cwd();
  process.chdir(dir);
  try {
    return { code: runObjectsCommand(['types'], () => undefined, () => undefined), err: '' };
  } catch (err) {
    return { code: 1, err: describeError(err) };
  } finally {
    process.chdir(before);
  }
}

const withDefault = (d: string) => ({ Evt: { fields: { at: { type: 'datetime', default: d } } } });

for (const text of ['2030-13-01', '2030-02-30', '2030-02-29', '2030-04-31', '2030-00-10', 'March 1, 2030', '2030-1-1']) {
  test.serial(`'${text}' is refused as a datetime default`, (t) => {
    const r = types(withDefault(text));
    t.is(r.code, 1, `'${text}' was accepted`);
    t.regex(r.err, /type Evt: field at: default must be a valid Date/);
  });
}

for (const text of ['2030-02-28', '2028-02-29', '2030-12-31T23:59:59.999Z', '2030-01-31T10:00:00+02:00']) {
  test.serial(`'${text}' is a datetime default`, (t) => {
    t.deepEqual(types(withDefault(text)), { code: 0, err: '' });
  });
}
