/**
 * The authenticator: its agent's configuration, cache and OAuth 1.0a signing, and the client's
 * keys and requests.
 * One test process runs the modules of test/unit/auth/ (`npx ava test/unit/auth.test.ts --match
 * '*words*'` runs some).
 */
import './auth/agent-config.ts';
import './auth/cache.ts';
import './auth/client.ts';
import './auth/keys.ts';
import './auth/oauth1.ts';
