/**
 * Declarations changing between starts, on both backends: an added field with a default and
 * an added unique key work on a database with objects; a removed, retyped or default-less new
 * field stops the start with a message naming file, type and field, and leaves the data be.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { BACKENDS, startObjectServer, stopPostgres, storeArgs } from './_objects.ts';

test.after.always(stopPostgres);

type Fields = Record<string, unknown>;

function declare(dir: string, fields: Fields, unique: string[]): string {
  fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
  const file = path.join(dir, 'objects', 'evo.json');
  fs.writeFileSync(file, JSON.stringify({ Evo: { fields, unique } }));
  return file;
}

const V1: Fields = { name: 'string', level: 'integer', tag: 'string' };

for (const backend of BACKENDS) {
  test.serial(`${backend}: added fields and unique keys work on stored objects; removed or retyped fields stop the start`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-evo-'));
    const store = await storeArgs(backend);
    const file = declare(dir, V1, ['name']);
    let s = await startObjectServer(store, {}, [], dir);
    try {
      await transact((tx) => {
        tx.create('Evo' as never, { name: 'ada', level: 3, tag: 't-ada' } as never, { id: 'ada' });
        tx.create('Evo' as never, { name: 'bob', level: 5, tag: 't-bob' } as never, { id: 'bob' });
      });
    } finally {
      await s.stop();
    }

    // v2: a field with a default, and `tag` becomes a unique key (backfilled from stored objects).
    declare(dir, { ...V1, title: { type: 'string', default: 'rookie' } }, ['name', 'tag']);
    s = await startObjectServer(store, {}, [], dir);
    try {
      native.objCacheClear();
      const seen = await transact(async (tx) => {
        const bob = await tx.fetchBy('Evo' as never, 'tag' as never, 't-bob' as never);
        return { title: bob?.get('title' as never), level: bob?.get('level' as never), id: bob?.id };
      });
      t.deepEqual(seen, { title: 'rookie', level: 5, id: 'bob' });
    } finally {
      await s.stop();
    }

    const refused = async (fields: Fields): Promise<string> => {
      declare(dir, fields, ['name', 'tag']);
      const err = await t.throwsAsync(startObjectServer(store, {}, [], dir));
      return err.message;
    };
    const title = { type: 'string', default: 'rookie' };
    t.is(await refused({ name: 'string', tag: 'string', title }),
      `${file}: type Evo: field level: was removed, but stored Evo objects have it (integer); declare it again, or delete the stored objects`);
    t.is(await refused({ ...V1, level: 'string', title }),
      `${file}: type Evo: field level: is now string, but stored Evo objects hold integer values`);
    t.is(await refused({ ...V1, title, rank: 'integer' }),
      `${file}: type Evo: field rank: was added without a default; stored Evo objects do not have it (give it a "default")`);

    // The refusals changed nothing: v2 still starts and finds both objects.
    declare(dir, { ...V1, title }, ['name', 'tag']);
    s = await startObjectServer(store, {}, [], dir);
    try {
      native.objCacheClear();
      t.deepEqual(await transact(async (tx) => [(await tx.fetch('Evo' as never, 'ada'))?.get('level' as never), (await tx.fetchBy('Evo' as never, 'name' as never, 'bob' as never))?.id]), [3, 'bob']);
    } finally {
      await s.stop();
    }
  });
}

test.serial('declaration files are checked at start with file, type and field in each message', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-decl-'));
  const cases: Array<[unknown, string]> = [
    [{ 'bad name': { fields: { a: 'string' } } }, 'type bad name: type names start with a letter and hold letters, digits and _ (at most 63)'],
    [{ T: { fields: {} } }, 'type T: "fields" must be an object with at least one field'],
    [{ T: { fields: { a: 'text' } } }, 'type T: field a: type must be one of string, integer, double, bool, datetime, ref, array, map'],
    [{ T: { fields: { a: { type: 'array' } } } }, 'type T: field a: "of" (element type) must be one of string, integer, double, bool, datetime, ref'],
    [{ T: { fields: { a: { type: 'ref', to: 'U' } } } }, "type T: field a: refers to unknown type 'U'"],
    [{ T: { fields: { a: { type: 'integer', default: 'x' } } } }, 'type T: field a: default must be an integer'],
    [{ T: { fields: { a: 'double' }, unique: ['a'] } }, 'type T: field a: unique keys must be string or integer fields'],
    [{ T: { fields: { id: 'string' } } }, "type T: field id: 'id' is reserved for the object's id"],
    [{ T: { fields: { a: 'string' }, index: [] } }, 'type T: unknown key "index" (allowed: fields, unique)'],
  ];
  for (const [json, message] of cases) {
    const file = declare(dir, {}, []);
    fs.writeFileSync(file, JSON.stringify(json));
    const err = await t.throwsAsync(startObjectServer({}, {}, [], dir));
    t.is(err.message, `${file}: ${message}`);
  }
  fs.writeFileSync(path.join(dir, 'objects', 'evo.json'), '{ nope');
  const err = await t.throwsAsync(startObjectServer({}, {}, [], dir));
  t.regex(err.message, /evo\.json: is not valid JSON/);
});
