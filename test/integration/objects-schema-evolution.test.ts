/**
 * Object declarations that are mistakes, and declarations evolving between starts on one SQLite
 * file (docs/guides/objects.md, "Declaring types" and "Changing declarations"): names SQLite
 * compares without case, an index name a removed type left, a key or field given twice in one
 * file, a byte order mark, a stored value a new unique key cannot hold.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { transact } from '../../src/objects/plugin-api.ts';
import { runObjectsCommand } from '../../src/objects-command.ts';
import { describeError } from '../../src/errors.ts';
import { attempt, startObjectServer, storeArgs, withObjectServerIn } from './_objects.ts';
import { testWithPostgres } from './_redis-test.ts';
import type { TestServer } from './_server.ts';

type Decl = Record<string, { fields: Record<string, unknown>; unique?: string[] }>;

const made: string[] = [];
test.after.always(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-objschema-'));
  made.push(d);
  return d;
}

function declare(dir: string, decl: Decl | string): string {
  fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
  const file = path.join(dir, 'objects', 'decl.json');
  fs.writeFileSync(file, typeof decl === 'string' ? decl : JSON.stringify(decl));
  return file;
}

function withServer<T>(dir: string, fn: (s: TestServer) => Promise<T>, store: Record<string, unknown> = {}): Promise<T> {
  return withObjectServerIn(store, dir, fn);
}

/** The start's refusal message, or 'started'. */
async function refusal(dir: string, store: Record<string, unknown> = {}): Promise<string> {
  try {
    const s = await startObjectServer(store, {}, [], dir);
    await s.stop();
    return 'started';
  } catch (err) {
    return (err as Error).message;
  }
}


test.serial('a type renamed only in case between starts (player -> Player) does not take over the old type\'s stored objects unchecked', async (t) => {
  const dir = tmp();
  declare(dir, { player: { fields: { name: 'string', level: 'integer' } } });
  await withServer(dir, async () => {
    t.is(await attempt((tx) => { tx.create('player' as never, { name: 'ada', level: 3 } as never, { id: 'p1' }); }), 'ok');
  });
  // Player has a required field 'nick' that the stored player objects do not have.
  const file = declare(dir, { Player: { fields: { nick: 'string' } } });
  t.is(await refusal(dir), `${file}: type Player: the database holds the type 'player', whose table it would share `
    + "(SQLite compares names without case); declare it as 'player', or give it another name");
  // Declared as it was, the stored object is there.
  declare(dir, { player: { fields: { name: 'string', level: 'integer' } } });
  await withServer(dir, async () => {
    t.deepEqual(await transact(async (tx) => (await tx.fetch('player' as never, 'p1'))?.get('level' as never)), 3);
  });
});

test.serial('a unique key renamed only in case while no objects are stored (Name -> name) starts', async (t) => {
  const dir = tmp();
  declare(dir, { Acc: { fields: { Name: 'string' }, unique: ['Name'] } });
  await withServer(dir, async () => undefined);
  // No Acc objects are stored: a removed field is allowed, and the new unique key gets its column.
  declare(dir, { Acc: { fields: { name: 'string' }, unique: ['name'] } });
  t.is(await refusal(dir), 'started');
  await withServer(dir, async () => {
    t.is(await attempt((tx) => { tx.create('Acc' as never, { name: 'k' } as never, { id: 'a1' }); }), 'ok');
    t.not(await attempt((tx) => { tx.create('Acc' as never, { name: 'k' } as never, { id: 'a2' }); }), 'ok', 'the renamed key is enforced');
  });
});

test.serial('a unique key whose index name a removed type\'s table still holds stops the start, naming both', async (t) => {
  const dir = tmp();
  declare(dir, { A_u_b: { fields: { c: 'string' }, unique: ['c'] } });
  await withServer(dir, async () => undefined);
  // A_u_b is gone; A's key b_u_c is indexed as obj_A_u_b_u_c, the name A_u_b's index still has.
  const file = declare(dir, { A: { fields: { b_u_c: 'string' }, unique: ['b_u_c'] } });
  t.is(await refusal(dir), `${file}: type A: unique key 'b_u_c': its index "obj_A_u_b_u_c" is the name of an index of the stored table `
    + '"obj_A_u_b" (a type no longer declared); rename the key or the type');
});

test.serial('a type declared twice in one file (a merge gone wrong) stops the start, as across files', async (t) => {
  const dir = tmp();
  const file = declare(dir, '{"Hero": {"fields": {"name": "string"}, "unique": ["name"]},\n "Hero": {"fields": {"level": "integer"}}}');
  t.is(await refusal(dir), `${file}: type Hero: is declared twice in this file`);
});

test.serial('a field declared twice in one type stops the start', async (t) => {
  const dir = tmp();
  const file = declare(dir, '{"Hero": {"fields": {"level": "integer", "level": "string"}}}');
  t.is(await refusal(dir), `${file}: type Hero: field level: is declared twice`);
});

test.serial('gsf objects types reads a declaration file with a UTF-8 byte order mark, as the start does', async (t) => {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'MANIFEST.json'), JSON.stringify({ components: [] }));
  declare(dir, `\ufeff${JSON.stringify({ Hero: { fields: { name: 'string' } } })}`);
  t.is(await refusal(dir), 'started', 'the server takes the file');
  let out = '';
  let code: number;
  const before = process.cwd();
  process.chdir(dir);
  try {
    code = runObjectsCommand(['types'], () => undefined, (text) => { out += text; });
  } catch (err) {
    code = 1;
    out += `gsf: ${describeError(err)}\n`;
  } finally {
    process.chdir(before);
  }
  t.is(out, 'wrote objects/gsf-objects.d.ts\n');
  t.is(code, 0);
});

test.serial('a unique key added over a stored value it cannot hold (NUL) stops the start, rather than hiding the object from fetchBy', async (t) => {
  const dir = tmp();
  declare(dir, { Hero: { fields: { name: 'string' } } });
  await withServer(dir, async () => {
    t.is(await attempt((tx) => { tx.create('Hero' as never, { name: 'a\0b' } as never, { id: 'h1' }); }), 'ok');
  });
  const file = declare(dir, { Hero: { fields: { name: 'string' } , unique: ['name'] } });
  t.is(await refusal(dir), `${file}: type Hero: unique key 'name': stored object 'h1' holds a value the key cannot hold `
    + '(Hero.name is a unique key: it must be text without NUL or unpaired surrogates, got "a\\u0000b"); change it, then start again');
});

testWithPostgres.serial('postgres: a unique key whose index name a removed type\'s table holds, or a stored value it cannot hold, stops the start', async (t) => {
  const store = await storeArgs('postgresql');
  const dir = tmp();
  declare(dir, { A_u_b: { fields: { c: 'string' }, unique: ['c'] }, Hero: { fields: { name: 'string' } } });
  await withServer(dir, async () => {
    t.is(await attempt((tx) => { tx.create('Hero' as never, { name: 'a\0b' } as never, { id: 'h1' }); }), 'ok');
  }, store);
  let file = declare(dir, { A: { fields: { b_u_c: 'string' }, unique: ['b_u_c'] }, Hero: { fields: { name: 'string' } } });
  t.is(await refusal(dir, store), `${file}: type A: unique key 'b_u_c': its index "obj_A_u_b_u_c" is the name of an index of the stored table `
    + '"obj_A_u_b" (a type no longer declared); rename the key or the type');
  file = declare(dir, { Hero: { fields: { name: 'string' }, unique: ['name'] } });
  t.is(await refusal(dir, store), `${file}: type Hero: unique key 'name': stored object 'h1' holds a value the key cannot hold `
    + '(Hero.name is a unique key: it must be text without NUL or unpaired surrogates, got "a\\u0000b"); change it, then start again');
});
