import test from 'ava';
import { applyOps, type OpTarget } from '../../src/session/apply-ops.ts';
import { Op } from '../../src/session/outbound.ts';

/** Records what the operations write, per session, as the session service would send it. */
function recorder(connected: number[]): { target: OpTarget; log: string[] } {
  const log: string[] = [];
  const target: OpTarget = {
    send(id, frame) {
      if (!connected.includes(id)) return false;
      log.push(`${id}:${String(frame)}`);
      return true;
    },
    sendRun(id, ops, start, end) {
      for (let i = start; i < end; i += 3) if (connected.includes(id)) log.push(`${id}:${String(ops[i + 2])}`);
    },
    sendTextRun(id, ops, start, end, text, pos) {
      let p = pos;
      const frames: string[] = [];
      for (let i = start; i < end; i += 3) {
        const length = ops[i + 2] as number;
        frames.push(text.substring(p, p + length));
        p += length;
      }
      if (connected.includes(id)) for (const f of frames) log.push(`${id}:${f}`);
      return p;
    },
    sendAll() { log.push('all'); },
    end(id, code) { log.push(`end ${id} ${code}`); return true; },
    group() {},
    publish() {},
    host: { log: { error: (m: string) => log.push(`error ${m}`) } },
  };
  return { target, log };
}

test('text frames are read from the batch text in order, between the other operations', (t) => {
  const { target, log } = recorder([2, 4]);
  const text = 'aaBBBccccDEEEE';
  applyOps(target, [
    Op.sendText, 2, 2, // aa
    Op.sendText, 2, 3, // BBB (same run)
    Op.sendText, 6, 4, // cccc: session 6 is gone, its text is still skipped
    Op.send, 4, 'bin',
    Op.sendText, 4, 1, // D
    Op.close, 4, 4000, 'bye',
    Op.sendText, 2, 4, // EEEE
  ], text);
  t.deepEqual(log, ['2:aa', '2:BBB', '4:bin', '4:D', 'end 4 4000', '2:EEEE']);
});

test('an unknown operation stops the batch with an error line', (t) => {
  const { target, log } = recorder([2]);
  applyOps(target, [Op.sendText, 2, 1, 99, 2, 1], 'xy');
  t.deepEqual(log, ['2:x', 'error session outbound: unknown operation 99; rest of the batch dropped']);
});
