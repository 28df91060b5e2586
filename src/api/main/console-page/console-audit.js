/*
 * The audit trail: the changes made through /cs-api/v1/ (who, what, when, the answer's
 * status), newest first, from GET /cs-api/v1/audit/.
 */
/* global URLSearchParams */
import { V1, get } from './console-api.js';
import { $, el, paged, table } from './console-ui.js';

const COLUMNS = ['time', 'operator', 'method', 'path', 'status', 'duration_in_ms'];
let view = null;

/** Shows the trail's newest page (again, when it is already shown). */
export async function showAudit() {
  view = paged($('audit-table'), 'the audit trail', async (pageNo, pageSize) => {
    const q = new URLSearchParams({ page_no: String(pageNo), page_size: String(pageSize) });
    const { entries, total } = await get(`${V1}/audit/?${q}`);
    return { rows: entries, total };
  }, (rows) => (rows.length === 0
    ? el('p', { class: 'muted', text: 'No change has been made yet.' })
    : table(rows, { caption: 'Changes, newest first', columns: COLUMNS })));
  await view.ready;
}

export function initAudit() {
  $('audit-refresh').addEventListener('click', () => void showAudit());
}
