// The gateway's version: package.json's, read once at start, so that the start-up line, /health, the
// gateway_build_info metric and `--version` all name the one a release (or a clone) has. The file is
// next to dist/ in a clone, in the npm package and in the image; the benchmark's build runs this file
// one folder deeper (dist-bench/src/version.js).
import { readFileSync } from 'node:fs';

function readManifest(): { version: string } {
  for (const path of ['../package.json', '../../package.json']) {
    try {
      return JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { version: string };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  throw new Error(`no package.json above ${new URL('.', import.meta.url).pathname}`);
}

export const VERSION: string = readManifest().version;
