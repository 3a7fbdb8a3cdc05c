// The gateway's version: package.json's, read once at start, so that the start-up line, /health, the
// gateway_build_info metric and `--version` all name the one a release (or a clone) has. The file is
// next to dist/ in a clone, in the npm package and in the image.
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION: string = manifest.version;
