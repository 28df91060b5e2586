/**
 * Maintenance REST group (SPEC 4.3):
 *   PUT /v1/maintenance/update  {date_start, date_end, messages, under_maintenance?} → 200 the new state
 *   GET /v1/maintenance         → 200 the current state
 * Every 400 has the body `{"error": "GSF_ERR_BAD_REQUEST", "message": …}`, plus `"field"` when
 * one field is at fault: a body that is not JSON or not an object, an unknown field, a missing
 * field, a wrong type, a date not in `YYYY/MM/DD HH:MM`, or `date_end` before `date_start`.
 * With `?cluster=true` (and the Cluster component) the change is made on every server and the
 * answer adds `cluster: {applied, failed}`.
 */
import { queryParam, type Router } from '../api/main/router.ts';
import { bodyText } from '../api/main/dispatch.ts';
import { GsfError, gsfError } from '../errors.ts';
import { checkRecord, type Maintenance, type MaintenanceRecord } from './state.ts';
import { clusterRequested, setMaintenanceTarget } from '../hooks/cluster-hooks.ts';

export function registerMaintenanceRoutes(router: Router, maintenance: Maintenance): void {
  setMaintenanceTarget(maintenance);
  router.put('/v1/maintenance/update', async (req) => {
    const cluster = clusterRequested(queryParam(req, 'cluster'));
    const text = bodyText(req);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw gsfError('GSF_ERR_BAD_REQUEST', 'request body is not valid JSON');
    }
    const problem = checkRecord(body, true);
    if (problem) {
      const message = problem.field === undefined ? `request body ${problem.message}` : problem.message;
      throw new GsfError('GSF_ERR_BAD_REQUEST', [message], { details: problem.field === undefined ? {} : { field: problem.field } });
    }
    const b = body as MaintenanceRecord & { under_maintenance?: boolean };
    const record = { date_start: b.date_start, date_end: b.date_end, messages: b.messages };
    const state = maintenance.update(record, b.under_maintenance);
    if (cluster === null) return { status: 200, body: state };
    return { status: 200, body: { ...state, cluster: await cluster.maintenance(record, b.under_maintenance, state) } };
  });
  router.get('/v1/maintenance', () => ({ status: 200, body: maintenance.snapshot() }));
}
