// The first step of execution: the request's plan (schema/plan.ts), then the checks that may refuse it
// before any resolver runs. The steps that read the plan are given this one, so none can run before it.
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GatewayContext } from '../../schema/context.js';
import { type Planned, planOf, planRequest, type RequestPlan } from '../../schema/plan.js';

/** A check of the plan: the answer that refuses the operation, or undefined to let it run. */
export type PlanCheck = (plan: RequestPlan, context: GatewayContext) => ExecutionResult | undefined;

export interface PlanStep extends Plugin<GatewayContext> {
  /** null: its document holds no such operation. Throws when the step has not run. */
  of(context: Planned): RequestPlan | null;
}

const plan = ({ schema, document, operationName, variableValues, contextValue }: ExecutionArgs): RequestPlan | null =>
  planRequest(schema, document, operationName, variableValues, contextValue as Planned);

export function usePlan(checks: readonly PlanCheck[] = []): PlanStep {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const planned = plan(args);
      if (planned === null) return;
      for (const check of checks) {
        const refused = check(planned, args.contextValue);
        if (refused !== undefined) {
          setResultAndStopExecution(refused);
          return;
        }
      }
    },
    onSubscribe({ args }) {
      plan(args);
    },
    of(context) {
      const planned = planOf(context);
      if (planned === undefined) throw new Error('usePlan must come before the steps that read the plan.');
      return planned;
    },
  };
}
