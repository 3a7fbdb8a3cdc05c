// The gateway's version: package.json's, read once. The file is next to dist/ in a clone, the package and
// the image; the benchmark's build runs this file one folder deeper (dist-bench/src/version.js).
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
