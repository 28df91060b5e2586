/**
 * Close reasons as the client gets them, with one I/O thread and with two: a close frame holds
 * at most 123 bytes of UTF-8. A longer reason is cut after the last whole character that fits,
 * and text with no UTF-8 form goes out as U+FFFD: a frame that is not valid UTF-8 makes the client
 * fail the connection (1006) without ever seeing the code.
 */
import test from 'ava';
import { CloseCode } from '../../src/session/protocol.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer | undefined;

test.afterEach.always(async () => {
  await s?.stop();
  s = undefined;
});

for (const io of [1, 2]) {
  test.serial(`io ${io}: a plugin's close reason is cut at whole characters, and an unpaired surrogate is sent as U+FFFD`, async (t) => {
    s = await startSessionServer({ SessionService: { io_threads_size: io } });
    const cases: Array<[string, string]> = [
      // 120 bytes, then a 4-byte character that does not fit whole.
      [`${'a'.repeat(120)}😀b`, 'a'.repeat(120)],
      [`${'a'.repeat(119)}😀b`, `${'a'.repeat(119)}😀`],
      [`${'é'.repeat(62)}`, 'é'.repeat(61)],
      ['bye \ud800 now', 'bye \ufffd now'],
    ];
    for (const [reason, sent] of cases) {
      const c = await s.connect('json');
      c.send('kick', { reason });
      t.deepEqual(await c.closed, { code: CloseCode.closedByServer, reason: sent }, reason);
    }
  });

  test.serial(`io ${io}: a session replaced by a login of an account named with an emoji gets 4009 with a whole-character reason`, async (t) => {
    s = await startSessionServer({ SessionService: { io_threads_size: io } });
    const account = `${'x'.repeat(111)}😀zz`;
    const a = await s.connect('json');
    t.like(await a.request('login', { account }), { ok: true });
    const b = await s.connect('msgpack');
    t.like(await b.request('login', { account }), { ok: true });
    // "account '" is 9 bytes, the 111 x's 111 more: the emoji's 4 bytes would pass 123.
    t.deepEqual(await a.closed, { code: CloseCode.replaced, reason: `account '${'x'.repeat(111)}` });
    await b.close();
  });
}
