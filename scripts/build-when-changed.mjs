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
  // The stamp says when the build began, not when it ended: a file's time comes from a coarser clock than
  // Date's, so a source saved just after the build could look older than the build's end.
  const began = new Date();
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  // A failed build still writes the stamp (tsc's build info): set back, so that the next start builds again.
  const stampTime = tsc.status === 0 ? began : new Date(0);
  try {
    utimesSync(stamp, stampTime, stampTime);
  } catch {
    // No build info written: the next start builds anyway.
  }
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}
