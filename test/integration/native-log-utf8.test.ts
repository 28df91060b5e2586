/**
 * A native plugin's log text that is not UTF-8 reaches the log as UTF-8, each maximal bad
 * subpart as one U+FFFD (as TextDecoder reads it), whether it was written in a call (the
 * JavaScript logger writes it) or outside one (`gsf_no_call()`, a plugin's own thread: the addon
 * writes it). The second kind used to keep the raw bytes, so the log stopped being UTF-8.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { fixtures, waitFor } from './_server.ts';
import { startSessionServer, type SessionServer } from './_session.ts';

let s: SessionServer;

test.before(async () => {
  s = await startSessionServer({}, [path.join(fixtures, 'native-plugins', 'native-log-utf8')]);
});
test.after.always(async () => {
  await s?.stop();
});

/** The raw bytes of the log line holding `marker`, from the marker on. */
function rawFrom(marker: string): Buffer | undefined {
  const bytes = fs.readFileSync(s.logFile);
  const at = bytes.indexOf(marker);
  if (at < 0) return undefined;
  const end = bytes.indexOf(0x0a, at);
  return bytes.subarray(at + marker.length, end < 0 ? bytes.length : end);
}

test.serial('bytes that are not UTF-8 become U+FFFD in the log, in a call and outside one', async (t) => {
  const inCall = await waitFor(() => rawFrom('UTF8-call'), 10000, 'the line written in the init call');
  const noCall = await waitFor(() => rawFrom('UTF8-nocall'), 10000, 'the line written with gsf_no_call()');
  const strict = new TextDecoder('utf-8', { fatal: true });
  const expected = '[e\uFFFD\uFFFDf\uFFFDg\uFFFD\uFFFD\uFFFDh\uFFFDi\uFFFDj]';
  t.is(strict.decode(inCall), expected);
  t.is(strict.decode(noCall), expected);
});
