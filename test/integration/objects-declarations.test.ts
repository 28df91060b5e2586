/**
 * Object type declarations that change over a game's life (between restarts on one database,
 * and through hot reload), on both backends, and declarations whose database names would clash
 * (docs/guides/objects.md, docs/guides/hot-reload.md).
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { native } from '../../src/native.ts';
import { transact } from '../../src/objects/plugin-api.ts';
import { attempt, BACKENDS, startObjectServer, stopPostgres, storeArgs, withObjectServerIn as withServer } from './_objects.ts';
import { post } from './_reload.ts';
import { startTestServer, type TestServer } from './_server.ts';

test.after.always(stopPostgres);

type Decl = Record<string, { fields: Record<string, unknown>; unique?: string[] }>;

/** Writes `objects/decl.json` in `dir` (made when absent); returns the folder. */
function declare(dir: string, decl: Decl): string {
  fs.mkdirSync(path.join(dir, 'objects'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'objects', 'decl.json'), JSON.stringify(decl));
  return dir;
}

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'gsf-decl-'));
}

/** The start's refusal message (the test fails if the server starts). */
async function refusal(store: Record<string, unknown>, dir: string): Promise<string> {
  try {
    const s = await startObjectServer(store, {}, [], dir);
    await s.stop();
    return 'started';
  } catch (err) {
    return (err as Error).message;
  }
}

const create = (type: string, fields: Record<string, unknown>, id?: string) => (tx: Parameters<Parameters<typeof transact>[0]>[0]) => {
  tx.create(type as never, fields as never, id === undefined ? undefined : { id });
};

for (const backend of BACKENDS) {
  test.serial(`${backend}: a unique key on a field added with a default finds the stored objects by that default`, async (t) => {
    const dir = tmp();
    const store = await storeArgs(backend);
    declare(dir, { Hero: { fields: { name: 'string' }, unique: ['name'] } });
    await withServer(store, dir, async () => {
      await transact(create('Hero', { name: 'ada' }, 'ada'));
    });
    // v2: `title` is new, with a default, and a unique key at once. The stored object reads
    // 'rookie' ("A new field needs a default, which stored objects then read"), and "a new
    // unique key is backfilled from the stored objects".
    declare(dir, { Hero: { fields: { name: 'string', title: { type: 'string', default: 'rookie' } }, unique: ['name', 'title'] } });
    await withServer(store, dir, async () => {
      const read = await transact(async (tx) => (await tx.fetch('Hero' as never, 'ada'))?.get('title' as never));
      t.is(read as unknown, 'rookie');
      const byKey = await transact(async (tx) => (await tx.fetchBy('Hero' as never, 'title' as never, 'rookie' as never))?.id ?? null);
      t.is(byKey, 'ada', 'fetchBy on the new key finds the stored object that reads its default');
      // A second object with the same key value must not be accepted: ada holds 'rookie'.
      const second = await attempt(create('Hero', { name: 'bob', title: 'rookie' }, 'bob'));
      t.not(second, 'ok', 'two Hero objects now share title "rookie"');
    });
  });

  test.serial(`${backend}: a unique key's index named as another type's (A.b_u_c and A_u_b.c) is refused at start, naming both`, async (t) => {
    // Both indexes would be named obj_A_u_b_u_c: the second would not be made, and its key not enforced.
    const dir = declare(tmp(), {
      A: { fields: { b_u_c: 'string' }, unique: ['b_u_c'] },
      A_u_b: { fields: { c: 'string' }, unique: ['c'] },
    });
    t.regex(await refusal(await storeArgs(backend), dir), /decl\.json: type A_u_b: the index of unique key 'c' would be named "obj_A_u_b_u_c", as the index of unique key 'b_u_c' of type A \(database names are compared without case\): rename one of them/);
  });

  test.serial(`${backend}: a type named like another type's unique index (A.b and A_u_b) starts and works, with both keys unique`, async (t) => {
    const dir = declare(tmp(), {
      A: { fields: { b: 'string' }, unique: ['b'] },
      A_u_b: { fields: { n: 'string' }, unique: ['n'] },
    });
    let started: TestServer | null = null;
    try {
      started = await startObjectServer(await storeArgs(backend), {}, [], dir);
    } catch (err) {
      // A refusal is acceptable only as a clear one, naming the file and the type.
      t.regex((err as Error).message, /decl\.json: type A(_u_b)?: /, 'a refusal names the file and type');
      return;
    }
    try {
      native.objCacheClear();
      t.is(await attempt(create('A', { b: 'k' }, 'a1')), 'ok');
      t.not(await attempt(create('A', { b: 'k' }, 'a2')), 'ok', 'two A objects share b="k"');
      t.is(await attempt(create('A_u_b', { n: 'k' }, 'x1')), 'ok');
      t.not(await attempt(create('A_u_b', { n: 'k' }, 'x2')), 'ok', 'two A_u_b objects share n="k"');
    } finally {
      await started.stop();
    }
  });
}

test.serial('types whose names differ only in case are refused at start (SQLite would keep them in one table)', async (t) => {
  const dir = declare(tmp(), {
    Foo: { fields: { a: 'string' } },
    foo: { fields: { b: 'integer' } },
  });
  t.regex(await refusal({}, dir), /decl\.json: type foo: its table would be named "obj_foo", as its table of type Foo \(database names are compared without case\)/);
});

test.serial('sqlite: unique keys whose field names differ only in case start or are refused clearly', async (t) => {
  const dir = declare(tmp(), { Acc: { fields: { Name: 'string', name: 'string' }, unique: ['Name', 'name'] } });
  let s: TestServer | null = null;
  try {
    s = await startObjectServer({}, {}, [], dir);
  } catch (err) {
    t.regex((err as Error).message, /decl\.json: type Acc: /, 'a refusal names the file and type');
    return;
  }
  try {
    t.is(await attempt(create('Acc', { Name: 'A', name: 'a' }, 'one')), 'ok');
    t.is(await attempt(create('Acc', { Name: 'B', name: 'A' }, 'two')), 'ok', 'Name and name are different keys');
  } finally {
    await s.stop();
  }
});

test.serial('sqlite: a field named constructor, toString or valueOf with a default', async (t) => {
  const dir = tmp();
  declare(dir, { Odd: { fields: { name: 'string' } } });
  await withServer({}, dir, async () => {
    await transact(create('Odd', { name: 'old' }, 'old'));
  });
  declare(dir, {
    Odd: {
      fields: {
        name: 'string',
        constructor: { type: 'string', default: 'c' },
        toString: { type: 'integer', default: 7 },
        valueOf: { type: 'bool', default: true },
      },
    },
  });
  await withServer({}, dir, async () => {
    t.is(await attempt(create('Odd', { name: 'new' }, 'new')), 'ok', 'create may leave out fields that have a default');
    const old = await transact(async (tx) => {
      const o = await tx.fetch('Odd' as never, 'old');
      return o === null ? null : ['constructor', 'toString', 'valueOf'].map((f) => o.get(f as never));
    });
    t.deepEqual(old, ['c', 7, true], 'an object stored before the fields existed reads their defaults');
  });
});

if (BACKENDS.includes('postgresql')) {
  const LONG = 'T'.repeat(60);
  test.serial('a type whose table or index name would pass 63 characters is refused at start (PostgreSQL would cut it)', async (t) => {
    const name = `${LONG}abc`;
    t.regex(await refusal(await storeArgs('postgresql'), declare(tmp(), { [name]: { fields: { k: 'string' } } })),
      new RegExp(`decl\\.json: type ${name}: its table would be named "obj_${name}", longer than 63 characters \\(PostgreSQL's limit\\)`));
    const short = 'T'.repeat(57); // its table fits (61), its index does not (67)
    t.regex(await refusal(await storeArgs('postgresql'), declare(tmp(), { [short]: { fields: { key: 'string' }, unique: ['key'] } })),
      new RegExp(`type ${short}: the index of unique key 'key' would be named "obj_${short}_u_key", longer than 63 characters`));
  });

  test.serial('postgresql: two long type names sharing their first 59 characters keep their objects apart', async (t) => {
    const one = `${LONG}ab1`;
    const two = `${LONG}ab2`;
    const dir = declare(tmp(), { [one]: { fields: { a: 'string' } }, [two]: { fields: { a: 'string' } } });
    let s: TestServer | null = null;
    try {
      s = await startObjectServer(await storeArgs('postgresql'), {}, [], dir);
    } catch (err) {
      t.regex((err as Error).message, /decl\.json: type /, 'a refusal names the file and type');
      return;
    }
    try {
      native.objCacheClear();
      t.is(await attempt(create(one, { a: 'x' }, 'x')), 'ok');
      const seen = await transact(async (tx) => (await tx.fetch(two as never, 'x'))?.id ?? null);
      t.is(seen, null, `a ${two.slice(-3)} object appeared that was created as a ${one.slice(-3)}`);
    } finally {
      await s.stop();
    }
  });

  test.serial('postgresql: a unique integer key retyped to string while no objects are stored takes string values', async (t) => {
    const dir = tmp();
    const store = await storeArgs('postgresql');
    declare(dir, { Code: { fields: { k: 'integer' }, unique: ['k'] } });
    await withServer(store, dir, async () => undefined);
    // No object stored: the change is allowed ("stop the start while objects of the type are stored").
    declare(dir, { Code: { fields: { k: 'string' }, unique: ['k'] } });
    await withServer(store, dir, async () => {
      t.is(await attempt(create('Code', { k: 'abc' }, 'one')), 'ok');
      const found = await transact(async (tx) => (await tx.fetchBy('Code' as never, 'k' as never, 'abc' as never))?.id ?? null);
      t.is(found, 'one');
    });
  });
}

test.serial('hot reload: a single-file plugin whose object declarations changed is refused with stage objects', async (t) => {
  // A plugin that is one file (not <folder>/index.ts) declares its types in objects/ next to it
  // (src/objects/schema.ts objectFolders). hot-reload.md: "Not reloadable: … object declarations
  // (objects/*.json, refused with stage objects): restart for those."
  const pluginDir = tmp();
  const file = path.join(pluginDir, 'single.ts');
  const src = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'src', 'index.ts');
  const code = (version: string): string => `import { definePlugin } from ${JSON.stringify(src)};
export default definePlugin({ name: 'probe-decl-single', version: '${version}', register() {} });
`;
  fs.writeFileSync(file, code('1.0.0'));
  declare(pluginDir, { Single: { fields: { name: 'string' } } });
  const s = await startTestServer({ ObjectStore: {} }, [file], tmp());
  try {
    await transact(create('Single', { name: 'a' }, 'a'));
    declare(pluginDir, { Single: { fields: { name: 'string', level: { type: 'integer', default: 1 } } } });
    fs.writeFileSync(file, code('2.0.0'));
    const answer = await post(s, '/v1/plugins/reload');
    t.is(answer.status, 422, JSON.stringify(answer.body));
    t.like(answer.body, { stage: 'objects' });
  } finally {
    await s.stop();
  }
});
