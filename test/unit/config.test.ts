/**
 * Manifests, flags and their ranges, timer settings, and loading plugins.
 * One test process runs the modules of test/unit/config/ (`npx ava test/unit/config.test.ts
 * --match '*words*'` runs some).
 */
import './config/flags.ts';
import './config/manifest.ts';
import './config/plugin-load-errors.ts';
import './config/plugin-loader.ts';
import './config/ranges.ts';
import './config/reload-source.ts';
import './config/timer-settings.ts';
