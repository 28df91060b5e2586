/**
 * Logging when the log file misbehaves (docs/reference/manifest.md, Logging component and
 * "Logs"): a log file that opens but cannot be written (/dev/full), standard output that is a
 * pipe (log_file "": systemd, docker and kubectl all read a server's stdout through one), and
 * native lines outside a call with alsologtostderr. Each runs `gsf start` in a child process.
 * Fixtures: test/fixtures/plugins/probe-logfault-lines, test/fixtures/native-plugins/probe-log.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { fixtures, waitFor } from './_server.ts';
import { startGsfChild as startChild } from './_gsf-child.ts';
const LINES = path.join(fixtures, 'plugins', 'probe-logfault-lines');
const NATIVE_LOG = path.join(fixtures, 'native-plugins', 'probe-log');

async function lines(url: string, body: Record<string, unknown>): Promise<{ written: number }> {
  const r = await fetch(`${url}/logfault/lines`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`POST /logfault/lines answered ${r.status}: ${await r.text()}`);
  return await r.json() as { written: number };
}

test.serial('log_file "" and stdout a pipe: a 300,000-character line arrives whole', async (t) => {
  const c = await startChild({}, [LINES]);
  try {
    await c.started();
    t.deepEqual(await lines(c.url, { prefix: 'long-', len: 300_000 }), { written: 1 });
    await lines(c.url, { prefix: 'after-long-' });
    await waitFor(() => c.out().includes('after-long-0:end'), 10000, 'the line after the long one');
    const all = c.out().split('\n');
    const long = all.find((l) => l.includes('] long-0:'));
    t.truthy(long, 'the long line is missing');
    // "One line per record, written with one write()": the whole record, ending with its 'end'.
    t.true(long!.endsWith('xend'), `the long line was cut at ${long!.length} characters, and went on with: ${JSON.stringify(long!.slice(-120))}`);
    t.is(long!.length - long!.indexOf('long-0:'), 300_000);
    // Nothing of it was written into (or instead of) another line.
    t.is(all.filter((l) => l.includes('after-long-0:end')).length, 1);
  } finally {
    await c.stop();
  }
});

test.serial('log_file "" and stdout a pipe: a burst of 20,000 lines loses none', async (t) => {
  const c = await startChild({}, [LINES]);
  try {
    await c.started();
    const n = 20_000;
    t.deepEqual(await lines(c.url, { prefix: 'burst-', count: n, len: 300 }), { written: n });
    await lines(c.url, { prefix: 'after-burst-' });
    await waitFor(() => c.out().includes('after-burst-0:end'), 10000, 'the line after the burst');
    const burst = c.out().split('\n').filter((l) => /\] burst-\d+:x+end$/.test(l));
    t.is(burst.length, n, `${n - burst.length} of ${n} lines lost; stderr: ${JSON.stringify(c.err())}`);
  } finally {
    await c.stop();
  }
});

test.serial('log_file /dev/full: the server keeps serving, and the lost lines are reported on stderr', async (t) => {
  const c = await startChild({ log_file: '/dev/full' }, [LINES]);
  try {
    await c.started();
    t.deepEqual(await lines(c.url, { prefix: 'full-', count: 10 }), { written: 10 });
    const status = await fetch(`${c.url}/v1/status`);
    t.is(status.status, 200);
    // No line can be written: an operator learns it from stderr (the log file named, and why),
    // once per thread and minute, not once per line.
    await waitFor(() => c.err().includes('ENOSPC'), 5000, 'a word on stderr');
    t.regex(c.err(), /^gsf: log_file '\/dev\/full' cannot be written \(ENOSPC\): 1 log line\(s\) lost$/m);
    t.true(c.err().split('\n').filter((l) => l.includes('ENOSPC')).length <= 3, c.err());
  } finally {
    await c.stop();
  }
  t.is(c.exitCode(), 0);
});

test.serial('alsologtostderr copies a native plugin\'s line outside a call to stderr', async (t) => {
  const c = await startChild({ log_file: 'server.log', alsologtostderr: true }, [NATIVE_LOG]);
  try {
    await c.started();
    const logged = fs.readFileSync(path.join(c.dir, 'server.log'), 'utf8').split('\n').find((l) => l.includes('probe-log nocall'));
    t.truthy(logged, 'not in log_file');
    // "alsologtostderr: Copy every line to stderr".
    t.true(c.err().split('\n').includes(logged!), `stderr: ${JSON.stringify(c.err())}`);
  } finally {
    await c.stop();
  }
});
