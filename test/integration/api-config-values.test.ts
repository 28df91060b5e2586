/**
 * Runtime configuration PUT (SPEC 4.2): what each flag type takes from the path, what the answer
 * says (the value stored, as GET shows it) and what is refused with 400.
 */
import test from 'ava';
import { startTestServer, type TestServer } from './_server.ts';
import { client } from './_http.ts';

let s: TestServer;
let api: ReturnType<typeof client>;

test.before(async () => {
  s = await startTestServer({ RuntimeConfiguration: { additional_configurations: ['probe_level', 'probe_ratio', 'probe_motd'] } });
  api = client(s.server.api.port);
});
test.after.always(async () => {
  await s?.stop();
});

async function value(flag: string): Promise<string> {
  return ((await api.get(`/v1/configurations/${flag}`)).body as Record<string, { value: string }>)[flag]!.value;
}

/** PUTs `path`'s value of `flag` and checks the answer; GET then shows `shown`. */
async function accepted(t: import('ava').ExecutionContext, flag: string, sent: string, shown: string): Promise<void> {
  const r = await api.put(`/v1/configurations/${flag}/${sent}`);
  t.is(r.status, 200, sent);
  t.deepEqual(r.body, { [flag]: { result: `${flag} set to ${shown}\n` } }, sent);
  t.is(await value(flag), shown, sent);
}

/** PUTs a refused value of `flag` and checks the 400 answer; the flag keeps `kept`. */
async function refused(t: import('ava').ExecutionContext, flag: string, sent: string, result: string, kept: string): Promise<void> {
  const r = await api.put(`/v1/configurations/${flag}/${sent}`);
  t.is(r.status, 400, sent);
  t.deepEqual(r.body, { [flag]: { result } }, sent);
  t.is(await value(flag), kept, sent);
}

test.serial('the answer names the value stored, as GET shows it, not the text sent', async (t) => {
  await accepted(t, 'v', '007', '7');
  t.is(s.server.thread.flags.get('v'), 7);
  await accepted(t, 'v', '+2', '2');
  await accepted(t, 'v', '-0', '0');
  await accepted(t, 'alsologtostderr', '7', 'true');
  await accepted(t, 'alsologtostderr', '-0.0', 'false');
  await accepted(t, 'probe_ratio', '2.50e1', '25');
  await accepted(t, 'probe_ratio', '.125', '0.125');
  await accepted(t, 'probe_ratio', '0e-400', '0');
  await accepted(t, 'probe_ratio', '1e-310', '1e-310');
  t.is(s.server.thread.flags.get('probe_ratio'), 1e-310);
});

test.serial('a double that overflows or underflows is refused, and the flag keeps its value', async (t) => {
  await accepted(t, 'probe_ratio', '0.75', '0.75');
  const under = 'probe_ratio must be 0 or at least 5e-324 in magnitude (a double rounds anything smaller to 0)';
  const over = 'probe_ratio must be at most 1.7976931348623157e+308 in magnitude (the largest double)';
  await refused(t, 'probe_ratio', '1e-400', `1e-400 is not a valid value for probe_ratio: ${under}\n`, '0.75');
  await refused(t, 'probe_ratio', '-2e-324', `-2e-324 is not a valid value for probe_ratio: ${under}\n`, '0.75');
  await refused(t, 'probe_ratio', '1e400', `1e400 is not a valid value for probe_ratio: ${over}\n`, '0.75');
  await refused(t, 'probe_ratio', '-1.8e308', `-1.8e308 is not a valid value for probe_ratio: ${over}\n`, '0.75');
  t.is(s.server.thread.flags.get('probe_ratio'), 0.75);
});

test.serial('numbers are decimal, without white space, for ints and doubles alike', async (t) => {
  await accepted(t, 'probe_level', '4', '4');
  await accepted(t, 'probe_ratio', '0.5', '0.5');
  // The path carries the text percent-encoded; the refusal shows it decoded.
  for (const [sent, text] of [['0x10', '0x10'], ['0X1F', '0X1F'], ['%205', ' 5'], ['5%20', '5 '], ['%095', '\t5'], ['Infinity', 'Infinity'],
    ['NaN', 'NaN'], ['1_0', '1_0'], ['0b1', '0b1']] as const) {
    await refused(t, 'probe_level', sent, `${text} is not a valid value for probe_level\n`, '4');
    await refused(t, 'probe_ratio', sent, `${text} is not a valid value for probe_ratio\n`, '0.5');
  }
});

test.serial('a string flag: taken as sent, empty with a trailing /, never NUL or white space at an end', async (t) => {
  await accepted(t, 'probe_motd', 'Double%20XP%20weekend', 'Double XP weekend');
  t.is(s.server.thread.flags.get('probe_motd'), 'Double XP weekend');
  await accepted(t, 'probe_motd', '007', '007');
  const nul = 'probe_motd must not hold a NUL character';
  await refused(t, 'probe_motd', '%00', `\0 is not a valid value for probe_motd: ${nul}\n`, '007');
  await refused(t, 'probe_motd', 'a%00b', `a\0b is not a valid value for probe_motd: ${nul}\n`, '007');
  const space = 'probe_motd must not start or end with white space';
  for (const [sent, text] of [['%20', ' '], ['%20a', ' a'], ['a%20', 'a '], ['a%0A', 'a\n'], ['%C2%A0a', '\u00a0a']] as const) {
    await refused(t, 'probe_motd', sent, `${text} is not a valid value for probe_motd: ${space}\n`, '007');
  }

  // The empty string: the path ends with a / after the flag's name.
  const empty = await api.put('/v1/configurations/probe_motd/');
  t.is(empty.status, 200);
  t.deepEqual(empty.body, { probe_motd: { result: 'probe_motd set to \n' } });
  t.is(await value('probe_motd'), '');
  t.is(s.server.thread.flags.get('probe_motd'), '');
  await accepted(t, 'probe_motd', 'back', 'back');

  // Without that /, the value was left out: 400, and the flag keeps its value.
  const bare = await api.put('/v1/configurations/probe_motd');
  t.is(bare.status, 400);
  t.deepEqual(bare.body, { probe_motd: {
    result: 'a value is needed: PUT /v1/configurations/probe_motd/{value}, or /v1/configurations/probe_motd/ for the empty string\n',
  } });
  t.is(await value('probe_motd'), 'back');

  // The empty value of other types is refused as any other text.
  await refused(t, 'probe_level', '', ' is not a valid value for probe_level\n', '4');
  await refused(t, 'alsologtostderr', '', ' is not a valid value for alsologtostderr\n', 'false');
  // Unknown and immutable flags answer as unknown, with or without the /.
  for (const path of ['/v1/configurations/nope/', '/v1/configurations/nope', '/v1/configurations/event_timeout_in_ms/']) {
    const r = await api.put(path);
    t.is(r.status, 400, path);
    const name = path.split('/')[3]!;
    t.is((r.body as Record<string, { message: string }>)[name]!.message, `'${name}' is not a configurable flag`, path);
  }
  // The version list is POSTed: any PUT is 405, with a value too.
  for (const path of ['/v1/configurations/compatible_client_versions/', '/v1/configurations/compatible_client_versions/1.0.0']) {
    const versions = await api.put(path);
    t.is(versions.status, 405);
    t.is(versions.headers.get('allow'), 'GET, HEAD, POST');
    t.deepEqual(versions.body, { error: 'GSF_ERR_METHOD_NOT_ALLOWED', message: `method PUT not allowed for ${path}`, allowed: ['GET', 'HEAD', 'POST'] });
  }
});
