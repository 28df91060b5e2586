/**
 * Flags read live on I/O threads (`SessionService.io_threads_size: 2`): frames the main thread
 * routes to a thread, and the maintenance notices it sends, follow the message-logging level set
 * since, as with one thread.
 */
import test from 'ava';
import { type GsfClient } from '../../src/sdk/index.ts';
import { ioThreadOf } from '../../src/session/io/io-ids.ts';
import { apiUrl, startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer | undefined;

test.afterEach.always(async () => {
  await s?.stop();
  s = undefined;
});

/** Connects until one session is on each thread: [on thread 0, on thread 1]. */
async function spread(server: SessionServer): Promise<[{ c: GsfClient; id: number }, { c: GsfClient; id: number }]> {
  const byThread: Array<{ c: GsfClient; id: number } | undefined> = [undefined, undefined];
  for (let i = 0; i < 64 && (byThread[0] === undefined || byThread[1] === undefined); i++) {
    const c = await server.connect('json');
    const id = (await c.request<{ sessionId: number }>('whoami')).sessionId;
    const th = ioThreadOf(id);
    if (byThread[th] === undefined) byThread[th] = { c, id };
    else await c.close();
  }
  if (byThread[0] === undefined || byThread[1] === undefined) throw new Error('the kernel never gave a connection to one of the threads');
  return [byThread[0], byThread[1]];
}

/** The "session message …" lines of a session so far. */
const messageLines = (server: SessionServer, id: number): string[] => server.logs().filter((l) => l.includes(`session message `) && l.includes(`session=${id},`));

// docs/guides/sessions.md: "`session_message_logging_level` (read live): 0 nothing, 1 `session
// message in|out: …`"; with I/O threads each thread logs the frames it writes "with … message
// logging" as with one thread: an I/O thread reads the flags again for each batch the main
// thread routes to it, not only when a client message or connection reaches it.
test.serial('raising session_message_logging_level logs frames sent to a session on the other thread at once', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  const [a, b] = await spread(s);
  s.server.thread.flags.set('session_message_logging_level', 1);
  const pushed = b.c.next('pushed');
  t.true(await a.c.request('push', { to: b.id, body: 'hello' }));
  await pushed; // a line is written before its frame
  t.true(messageLines(s, a.id).some((l) => l.endsWith(`session message out: session=${a.id}, type=push, length=34`)), 'the reply on the thread that read a message is logged');
  t.deepEqual(messageLines(s, b.id).map((l) => l.replace(/^.*\] /, '')), [`session message out: session=${b.id}, type=pushed, length=32`]);
  // Each line names the I/O thread that wrote it (a on the first thread, b on the second).
  t.regex(messageLines(s, a.id).at(-1)!, / io-0\] session message out: /);
  t.regex(messageLines(s, b.id)[0]!, / io-1\] session message out: /);
});

test.serial('lowering session_message_logging_level to 0 stops logging frames sent to a session on the other thread', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  const [a, b] = await spread(s);
  s.server.thread.flags.set('session_message_logging_level', 2);
  // Both threads read level 2 with a message of their own.
  t.is(await a.c.request('echo', 'a'), 'a');
  t.is(await b.c.request('echo', 'b'), 'b');
  t.true(messageLines(s, b.id).length >= 2);
  s.server.thread.flags.set('session_message_logging_level', 0);
  const before = messageLines(s, b.id).length;
  const pushed = b.c.next('pushed');
  t.true(await a.c.request('push', { to: b.id, body: 'secret' }));
  await pushed;
  t.deepEqual(messageLines(s, b.id).slice(before).map((l) => l.replace(/^.*\] /, '')), [], 'level 0 logs nothing');
});

// The maintenance notices each thread writes to its sessions are logged at the level set since,
// though no client message or routed frame reached the thread after the change.
test.serial('raising session_message_logging_level logs the maintenance notices of both threads', async (t) => {
  s = await startSessionServer({ SessionService: { io_threads_size: 2 } });
  const sessions = await spread(s);
  s.server.thread.flags.set('session_message_logging_level', 1);
  const record = { date_start: '2026/11/22 03:00', date_end: '2026/11/22 05:00', messages: 'Back at five.' };
  for (const [on, type] of [[true, '_maintenance'], [false, '_maintenance_end']] as const) {
    const notices = sessions.map((x) => x.c.next(type));
    const res = await fetch(`${apiUrl(s)}/v1/maintenance/update`, { method: 'PUT', body: JSON.stringify({ ...record, under_maintenance: on }) });
    t.is(res.status, 200);
    await Promise.all(notices); // a line is written before its frame
    for (const [thread, x] of sessions.entries()) {
      t.is(messageLines(s, x.id).filter((l) => new RegExp(` io-${thread}\\] session message out: session=${x.id}, type=${type}, `).test(l)).length, 1,
        `${type} to the session on thread ${thread} is logged`);
    }
  }
});
