/**
 * The repository's own checks: the C ABI's layout and enums, the addon's source lists and install,
 * links in the docs, the layer rule, and the committed generated declarations.
 * One test process runs the modules of test/unit/repository/ (`npx ava
 * test/unit/repository.test.ts --match '*words*'` runs some).
 */
import './repository/abi-layout.ts';
import './repository/docs-links.ts';
import './repository/eslint-layers.ts';
import './repository/native-enums.ts';
import './repository/native-install.ts';
import './repository/native-sources.ts';
import './repository/objects-typegen.ts';
