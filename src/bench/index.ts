// The benchmark harness (npm run bench): runBench measures, formatReport prints Markdown.
export {
  DEFAULT_OPTIONS,
  defaultPasses,
  runBench,
  type BenchOptions,
  type BenchReport,
  type DefaultPassOptions,
  type Measurement,
  type PassOptions,
  type PassResult,
  type ScenarioResult,
} from './bench.js';
export { evaluateTargets, formatReport, scenarioTable, type Target } from './report.js';
export { SCENARIOS, SCENARIO_NAMES, type ScenarioName } from './scenarios.js';
