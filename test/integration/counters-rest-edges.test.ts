/**
 * Counters read over REST at their edges: integers JavaScript cannot hold exactly, counters a
 * plugin makes in a built-in category, and built-in means over no items.
 */
import test from 'ava';
import { native } from '../../src/native.ts';
import { startTestServer, waitFor } from './_server.ts';
import { client } from './_http.ts';
import { startObjectServer } from './_objects.ts';

{
  /**
   * Counters REST (SPEC 2.5, 4.4) edges: what a plugin sets is what a reader gets back.
   */
  test.serial('counters REST: an integer counter set past the int64 range reads back the value set, not a saturated 2^63', async (t) => {
    const s = await startTestServer();
    try {
      const api = client(s.server.api.port);
      // probe.note sets probe_seq/<key> to <seq> with api.counters.update, inside its event.
      s.server.invoke('probe.note', { label: 'big', key: 'big', seq: 1e20, file: s.notes });
      s.server.invoke('probe.note', { label: 'neg', key: 'neg', seq: -1e20, file: s.notes });
      await waitFor(() => s.records().length === 2);
      const big = await api.get('/v1/counters/probe_seq/big/');
      t.is(big.status, 200);
      t.deepEqual(big.body, { category: 'probe_seq', counter: 'big', value: 1e20 });
      const neg = await api.get('/v1/counters/probe_seq/neg/');
      t.is(neg.status, 200);
      t.deepEqual(neg.body, { category: 'probe_seq', counter: 'neg', value: -1e20 });
    } finally {
      await s.stop();
    }
  });

  test.serial('counters REST: ?values= takes true, 1, false or 0; any other value is a 400, not a counter read', async (t) => {
    const s = await startTestServer();
    try {
      const api = client(s.server.api.port);
      native.counterUpdate('pp', 'sub', 3, false);
      native.counterUpdate('pp/sub', 'inner', 4, false);
      for (const yes of ['true', '1']) {
        const { status, body } = await api.get(`/v1/counters/pp/sub/?values=${yes}`);
        t.deepEqual({ status, body }, { status: 200, body: { category: 'pp/sub', counters: ['inner'], values: { inner: 4 } } }, yes);
      }
      for (const no of ['false', '0']) {
        const { status, body } = await api.get(`/v1/counters/pp/sub/?values=${no}`);
        t.deepEqual({ status, body }, { status: 200, body: { category: 'pp', counter: 'sub', value: 3 } }, no);
      }
      for (const odd of ['maybe', '', 'TRUE', 'yes']) {
        const { status, body } = await api.get(`/v1/counters/pp/sub/?values=${odd}`);
        t.deepEqual({ status, body }, { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: `values must be true or false (got '${odd}')` } }, odd);
      }
      // The list of categories too.
      const all = await api.get('/v1/counters/?values=maybe');
      t.deepEqual({ status: all.status, body: all.body }, { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: "values must be true or false (got 'maybe')" } });
      t.true(((await api.get('/v1/counters/?values=true')).body as { categories: string[] }).categories.includes('pp/sub'));
      // A counter named like a property of every object is listed with its value.
      native.counterUpdate('pp/proto', '__proto__', 42, false);
      native.counterUpdate('pp/proto', 'constructor', 7, false);
      const proto = await api.get('/v1/counters/pp/proto/?values=true');
      t.is(proto.text, '{"category":"pp/proto","counters":["__proto__","constructor"],"values":{"__proto__":42,"constructor":7}}');
      const { status, body } = await api.get('/v1/counters/pp/sub/?values=true&values=true');
      t.deepEqual({ status, body }, { status: 400, body: { error: 'GSF_ERR_BAD_REQUEST', message: "query parameter 'values' must be given once, got 2 values" } });
    } finally {
      await s.stop();
    }
  });

  test.serial('counters REST: a counter created in a built-in category (event, os) is listed and read back', async (t) => {
    const s = await startTestServer();
    try {
      const api = client(s.server.api.port);
      // What api.counters.update('event', 'mine', 7) does on the main thread outside an event.
      native.counterUpdate('event', 'mine', 7, false, 'A game counter');
      native.counterUpdate('os', 'mine', 8, false);
      t.is(native.counterValue('event', 'mine'), 7);
      const read = await api.get('/v1/counters/event/mine/');
      t.is(read.status, 200);
      t.deepEqual(read.body, { category: 'event', counter: 'mine', value: 7 });
      const list = await api.get('/v1/counters/event/');
      t.is(list.status, 200);
      t.deepEqual(list.body, { category: 'event', counters: ['event_queue_length', 'mine'] });
      const described = await api.get('/v1/counters/event/mine/description/');
      t.deepEqual(described.body, { category: 'event', counter: 'mine', description: 'A game counter' });
      const os = await api.get('/v1/counters/os/mine/');
      t.is(os.status, 200);
      t.deepEqual(os.body, { category: 'os', counter: 'mine', value: 8 });
    } finally {
      await s.stop();
    }
  });
}

{
  /**
   * SPEC 4.4: a callable counter answers 204 when no value exists, "for example an average over
   * zero items". The object store's built-in means are such counters.
   */
  test.serial('counters REST: a built-in mean over zero items (no commit, no fetch yet) answers 204, not 200 with 0', async (t) => {
    const s = await startObjectServer({});
    try {
      const api = client(s.server.api.port);
      t.is((await api.get('/v1/counters/object_database_stat/sqlite/commit_groups/')).text,
        '{"category":"object_database_stat","counter":"sqlite/commit_groups","value":0}');
      for (const mean of ['commit_latency_mean_in_sec', 'group_size_mean', 'fetch_latency_mean_in_sec']) {
        const r = await api.get(`/v1/counters/object_database_stat/sqlite/${mean}/`);
        t.is(r.status, 204, mean);
        t.is(r.text, '', mean);
      }
    } finally {
      await s.stop();
    }
  });
}
