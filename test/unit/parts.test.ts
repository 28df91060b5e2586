/**
 * Small parts: route patterns and the router, answer records, the await cap, the audit trail, the
 * logger and its rate limit, tags, the watchdog's period, the arena's rules, and the SDK client's settling.
 * One test process runs the modules of test/unit/parts/ (`npx ava test/unit/parts.test.ts --match
 * '*words*'` runs some).
 */
import './parts/api-routes.ts';
import './parts/arena-rules.ts';
import './parts/audit-trail.ts';
import './parts/await-cap.ts';
import './parts/logger.ts';
import './parts/rate-limit.ts';
import './parts/router.ts';
import './parts/sdk-client-settling.ts';
import './parts/tags.ts';
import './parts/watchdog-period.ts';
