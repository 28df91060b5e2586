import test from 'ava';
import { ProtocolError } from '../../src/sdk/index.ts';
import { startSessionServer } from './_session.ts';

test.serial('without any message handler every frame still gets its exact error frame', async (t) => {
  const s = await startSessionServer({}, ['probe']);
  try {
    const c = await s.connect('json');
    const next = () => c.next('_error').then((e) => e.body);
    c.sendRaw('{"type":"hello","body":1}');
    t.deepEqual(await next(), { code: ProtocolError.unknownType, message: "no handler for message type 'hello'", type: 'hello' });
    c.sendRaw('{"body":1,"type":"hello"}');
    t.deepEqual(await next(), { code: ProtocolError.unknownType, message: "no handler for message type 'hello'", type: 'hello' });
    c.sendRaw('{"body":1}');
    t.deepEqual(await next(), { code: ProtocolError.malformed, message: "a message needs a non-empty string 'type'" });
    await c.close();
  } finally {
    await s.stop();
  }
});
