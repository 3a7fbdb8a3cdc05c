// The one place that owns Pothos: its plugins, the scalar types and the context type. Every field
// that reaches the upstream declares its cost where it is defined (`complexity`, counted in upstream
// calls); graphql/plugins/use-cost-limit.ts adds them up before execution.
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import type { GatewayContext } from '../graphql/context.js';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  DefaultFieldNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    Date: { Input: string; Output: string };
    DateTime: { Input: string; Output: string };
  };
}>({
  defaultFieldNullability: false,
  plugins: [ComplexityPlugin],
  complexity: {
    // A field costs nothing unless it declares a cost: exposed fields read their parent, and a test
    // (test/schema/complexity.test.ts) refuses any field with a resolver of its own and no declaration.
    defaultComplexity: 0,
    defaultListMultiplier: 1,
    // The limit is enforced before execution by use-cost-limit.ts, with our error and extensions; the
    // plugin's own check inside root resolvers would only repeat the count.
    disabled: true,
  },
});

/** For fields with a resolver of their own that never calls the upstream (lists keep multiplier 1). */
export const NO_UPSTREAM_CALL = { field: 0, multiplier: 1 } as const;
/** For fields that make one upstream call each time they resolve. */
export const ONE_UPSTREAM_CALL = { field: 1, multiplier: 1 } as const;

/** The root query type, also reachable from mutation payloads (`query`) to refetch in the same round trip. */
export const QueryRef = builder.queryType({ description: 'Reads: websites and their statistics, with the caller\'s API key.' });
builder.mutationType({ description: 'Writes: create, update and delete websites. Never retried by the gateway.' });
