import test from 'ava';
import { checkEnums, native, EventKind, ContextCell } from '../../../src/native.ts';

test('the enums src/native.ts copies match the addon they were loaded with', (t) => {
  const built = native.enumLayout();
  t.notThrows(() => checkEnums(built));
  t.deepEqual(built.eventKind, { ...EventKind });
  t.is((built.contextCell as Record<string, number>).readsNone, ContextCell.readsNone);
});

test('an enum that differs from the addon is refused, naming it and both values', (t) => {
  const built = native.enumLayout();
  const moved = { ...built, completeResult: { revoked: 0, done: 2, madeReady: 1 } };
  const err = t.throws(() => checkEnums(moved));
  t.regex(err.message, /^gsf: the native addon was built with another completeResult \(run npm install to rebuild it\): addon \{"revoked":0,"done":2,"madeReady":1\}, src\/native\.ts \{"revoked":0,"done":1,"madeReady":2\}$/);
  const added = { ...built, effectKind: { ...(built.effectKind as object), objectCreate: 8 } };
  t.throws(() => checkEnums(added), { message: /another effectKind/ });
  t.throws(() => checkEnums({ ...built, contextCells: 8 }), { message: /another contextCells/ });
});
