// Summarises a V8 .cpuprofile (node --cpu-prof): the functions with the most self time, and self
// time per package, so a profile of the gateway under load reads in a terminal.
//
//   node dist-bench/bench/profile.js prof/CPU.*.cpuprofile [--top 25]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/** Where a script belongs: a package under node_modules, our own code, or Node itself. */
export function owner(url: string): string {
  if (url === '') return '(V8 / native)';
  if (url.startsWith('node:')) return '(node core)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  const dist = /\/dist\/(.*)$/.exec(url);
  return dist?.[1] ? `gateway: ${dist[1]}` : url;
}

function frameName(frame: ProfileNode['callFrame']): string {
  const file = frame.url.replace(/^file:\/\//, '');
  const where = owner(file);
  return `${frame.functionName || '(anonymous)'}  ${file ? `${where === file ? file : where}:${frame.lineNumber + 1}` : ''}`.trim();
}

export function summariseProfile(profile: CpuProfile): {
  totalMs: number;
  functions: SelfTime[];
  owners: SelfTime[];
  inclusive: SelfTime[];
} {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);

  // Inclusive time: each sample counts once for every distinct function on its stack.
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame || frame.functionName === '(root)') continue;
      const name = frameName(frame);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }

  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const where = owner(frame.url.replace(/^file:\/\//, ''));
    const name = frameName(frame);
    functions.set(name, (functions.get(name) ?? 0) + us);
    const group = frame.functionName === '(garbage collector)' ? '(garbage collector)' : frame.functionName === '(idle)' ? '(idle)' : where;
    owners.set(group, (owners.get(group) ?? 0) + us);
  }
  const sorted = (map: Map<string, number>): SelfTime[] =>
    [...map].map(([name, us]) => ({ name, ms: us / 1000, share: totalUs === 0 ? 0 : us / totalUs })).sort((a, b) => b.ms - a.ms);
  return { totalMs: totalUs / 1000, functions: sorted(functions), owners: sorted(owners), inclusive: sorted(inclusive) };
}

function main(): void {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string' } }, allowPositionals: true });
  const top = Number(values.top ?? 25);
  for (const file of positionals) {
    const summary = summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
    const busy = summary.owners.filter((o) => o.name !== '(idle)').reduce((sum, o) => sum + o.ms, 0);
    const line = (entry: SelfTime): string =>
      `${entry.ms.toFixed(0).padStart(8)} ms ${(entry.share * 100).toFixed(1).padStart(5)}%  ${entry.name}`;
    process.stdout.write(`${file}: ${summary.totalMs.toFixed(0)} ms sampled, ${busy.toFixed(0)} ms not idle\n\nSelf time by package:\n`);
    for (const entry of summary.owners.slice(0, Math.max(15, top))) process.stdout.write(`${line(entry)}\n`);
    process.stdout.write(`\nTop ${top} functions by self time:\n`);
    for (const entry of summary.functions.slice(0, top)) process.stdout.write(`${line(entry)}\n`);
    process.stdout.write(`\nTop ${top} functions by inclusive time (self + callees):\n`);
    for (const entry of summary.inclusive.slice(0, top)) process.stdout.write(`${line(entry)}\n`);
    process.stdout.write('\n');
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) main();
