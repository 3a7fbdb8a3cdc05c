// `npm start`, `npm run sandbox` and `npm run example` build first, but only when a source changed
// since the last build: on an unchanged tree even tsc's incremental build loads the whole program,
// which takes seconds. What the build reads is src/ and the two tsconfig files; dist/.tsbuildinfo is
// touched after each build, so its time is the last build's. `npm run build` always builds.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stamp = join(root, 'dist', '.tsbuildinfo');

function newest(path) {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  return Math.max(stats.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const built = (() => {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return -1;
  }
})();
const sources = Math.max(newest(join(root, 'src')), newest(join(root, 'tsconfig.json')), newest(join(root, 'tsconfig.build.json')));
if (built < sources) {
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  const now = new Date();
  utimesSync(stamp, now, now);
}
