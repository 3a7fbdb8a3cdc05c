// The benchmark harness (npm run bench): runBench measures, formatReport prints Markdown.
export {
  DEFAULT_OPTIONS,
  DEFAULT_PASS_NAMES,
  PASS_NAMES,
  cachingPasses,
  defaultPasses,
  runBench,
  type BenchOptions,
  type CachePassOptions,
  type CachePassResult,
  type CacheRow,
  type BenchReport,
  type DefaultPassOptions,
  type Measurement,
  type PassOptions,
  type PassResult,
  type ScenarioResult,
} from './bench.js';
export { evaluateTargets, formatReport, scenarioTable, cacheSection, sessionSection, sharedSection, type Target } from './report.js';
export {
  DEFAULT_SESSION,
  sessionRanges,
  type SessionOptions,
  type SessionPassResult,
  type SessionRun,
  type SharedOptions,
  type SharedPassResult,
  type SharedRow,
} from './caching.js';
export { SCENARIOS, SCENARIO_NAMES, type ScenarioName } from './scenarios.js';
