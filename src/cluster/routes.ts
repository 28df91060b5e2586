/**
 * Cluster REST (API service, with the Cluster component):
 *   GET /v1/cluster/servers                     {"server": <this id>, "servers": [{id, host, pid, api, websocket, sessions, accounts, started}]}
 *   GET /v1/cluster/counters/{category}/{name}  {category, counter, aggregate, value, servers: {<id>: value}, missing, failed}
 *       (404 when no server has it; 503 with `missing` and `failed` when none that answered has it and some did not answer)
 *       ?aggregate=sum|max|min|mean             (default: by counter, see aggregate.ts)
 *   GET /v1/cluster/accounts/{account}          {account, server, session} | 404
 *   GET /v1/cluster/sessions/{session}          {session, server, account} | 404
 */
import { gsfError } from '../errors.ts';
import { queryParam, type Router } from '../api/main/router.ts';
import { AGGREGATES, combine, defaultAggregate, type Aggregate, type CounterAnswer } from './aggregate.ts';
import type { Cluster } from './cluster.ts';

export function registerClusterRoutes(router: Router, cluster: Cluster): void {
  router.get('/v1/cluster/servers', () => ({
    status: 200,
    body: {
      server: cluster.serverId,
      servers: cluster.servers().map(({ id, host, pid, api, websocket, sessions, accounts, started }) =>
        ({ id, host, pid, api, websocket, sessions, accounts, started })).sort((a, b) => a.id.localeCompare(b.id)),
    },
  }));

  router.get('/v1/cluster/counters/{path*}', async (req) => {
    const path = req.params.path!;
    const asked = queryParam(req, 'aggregate');
    if (asked !== null && !AGGREGATES.includes(asked as Aggregate)) {
      throw gsfError('GSF_ERR_BAD_REQUEST', `aggregate must be one of ${AGGREGATES.join(', ')} (got '${asked}')`);
    }
    cluster.assertAvailable();
    const servers = [cluster.serverId, ...cluster.others()];
    const fan = await cluster.rpc.requestAll(servers, 'counter', { path });
    const values: Record<string, number | string | null> = {};
    const missing: string[] = [];
    let first: CounterAnswer | null = null;
    for (const server of servers) {
      if (!(server in fan.answers)) continue;
      const answer = fan.answers[server] as CounterAnswer | null;
      if (answer === null) {
        missing.push(server);
        continue;
      }
      first ??= answer;
      values[server] = answer.value;
    }
    if (first === null) {
      const failed = Object.keys(fan.failed).sort();
      if (failed.length === 0) throw gsfError('GSF_ERR_COUNTER_NOT_FOUND', `no counter '${path}' on any server`);
      // A server that did not answer, or failed to read it, may have it: not a 404.
      const err = gsfError('GSF_ERR_CLUSTER_UNAVAILABLE',
        `no counter '${path}' on the servers that read it, and ${failed.length} failed to (${failed.join(', ')}): see failed`);
      return { status: 503, body: { ...err.toBody(), missing, failed: fan.failed } };
    }
    const aggregate = (asked as Aggregate | null) ?? defaultAggregate(first.category, first.counter);
    const numbers = Object.values(values).filter((v): v is number => typeof v === 'number');
    return {
      status: 200,
      body: { category: first.category, counter: first.counter, aggregate, value: combine(numbers, aggregate), servers: values, missing, failed: fan.failed },
    };
  });

  router.get('/v1/cluster/accounts/{account}', async (req) => {
    cluster.assertAvailable();
    const account = req.params.account!;
    const where = await cluster.locate(account);
    if (where === null) throw gsfError('GSF_ERR_CLUSTER_NOT_FOUND', `account '${account}' is not logged in on any live server`);
    return { status: 200, body: { account, server: where.server, session: where.sessionId } };
  });

  router.get('/v1/cluster/sessions/{session}', async (req) => {
    // Decimal digits only: '0x10', '1e3' or '+7' would be read as another session's id.
    const text = req.params.session!;
    const session = /^[1-9]\d*$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(session)) throw gsfError('GSF_ERR_BAD_REQUEST', `session must be a positive integer (got '${req.params.session!}')`);
    cluster.assertAvailable();
    const where = await cluster.sessionOwner(session);
    if (where === null) throw gsfError('GSF_ERR_CLUSTER_NOT_FOUND', `session ${session} is not on any live server`);
    return { status: 200, body: { session, server: where.server, account: where.account } };
  });
}
