/**
 * The cluster: its configuration, the records servers send each other, and the outbox's edge
 * cases.
 * One test process runs the modules of test/unit/cluster/ (`npx ava test/unit/cluster.test.ts
 * --match '*words*'` runs some).
 */
import './cluster/config.ts';
import './cluster/login-claim-answer.ts';
import './cluster/records.ts';
