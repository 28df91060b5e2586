/** Cluster counters: the default rule per counter, the rules themselves, and reading a counter path. */
import test from 'ava';
import { combine, defaultAggregate, readCounterPath } from '../../src/cluster/aggregate.ts';
import { CounterRegistry } from '../../src/counters/registry.ts';
import { native } from '../../src/native.ts';

test('counts and totals add up; levels, extremes, times and machine figures take the largest', (t) => {
  const sum = [['engine', 'sessions'], ['engine', 'concurrent_user'], ['rpc_stat', 'messages_sent'], ['object', 'cached_objects'],
    ['event', 'event_queue_length'], ['arena', 'total_clicks'], ['engine', 'dropped_sends_no_session'], ['coordination_stat', 'logins'],
    ['process', 'maxrss'], ['process', 'cpu'], ['process', 'utime'], ['object_database_stat', 'postgresql/commit_time_total_in_sec']];
  const max = [['os', 'totalram'], ['os', 'load1'], ['os', 'cpus'], ['rpc_stat', 'flush_latency_max_in_sec'],
    ['coordination_stat', 'command_latency_mean_in_sec'], ['coordination_stat', 'cluster_servers'], ['coordination_stat', 'connected'],
    ['object_database_stat', 'postgresql/group_size_max'], ['event/profiling/summary', 'all_time/count'], ['process', 'refresh_interval'],
    ['object', 'cache_capacity_bytes']];
  for (const [c, n] of sum) t.is(defaultAggregate(c!, n!), 'sum', `${c}/${n}`);
  for (const [c, n] of max) t.is(defaultAggregate(c!, n!), 'max', `${c}/${n}`);
});

test('sum, max, min and mean of the values; none gives null', (t) => {
  t.is(combine([1, 5, 3], 'sum'), 9);
  t.is(combine([1, 5, 3], 'max'), 5);
  t.is(combine([1, 5, 3], 'min'), 1);
  t.is(combine([1, 5, 3], 'mean'), 3);
  t.is(combine([], 'sum'), null);
});

test('a counter path splits at the longest category that has the counter, empty segments kept; a callable without a value reads null', (t) => {
  const registry = new CounterRegistry();
  native.counterUpdate('cluster_test', 'a/b', 7, false, 'test');
  native.counterUpdate('cluster_test/a', 'b', 9, false, 'test');
  registry.registerCallable('cluster_test_callable', 'empty', 'no value', () => undefined);
  t.deepEqual(readCounterPath(registry, 'cluster_test/a/b'), { category: 'cluster_test/a', counter: 'b', value: 9 });
  t.deepEqual(readCounterPath(registry, 'cluster_test_callable/empty'), { category: 'cluster_test_callable', counter: 'empty', value: null });
  t.is(readCounterPath(registry, 'cluster_test/nope'), null);
  // Empty segments are a name's own ('%2F' in the URL; the router drops the URL's): kept, as by /v1/counters/.
  native.counterUpdate('cluster_test', 'trail/', 3, false, 'test');
  t.deepEqual(readCounterPath(registry, 'cluster_test/trail/'), { category: 'cluster_test', counter: 'trail/', value: 3 });
  t.is(readCounterPath(registry, 'cluster_test/trail'), null);
});
