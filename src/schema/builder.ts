// The one place that owns Pothos. Every field that reaches the upstream declares its cost in upstream
// calls (`complexity`); use-cost-limit.ts adds them up before execution.
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin from '@pothos/plugin-relay';
import type { GatewayContext } from './context.js';

/** A resolver of its own that never calls the upstream (lists keep multiplier 1). */
export const NO_UPSTREAM_CALL = { field: 0, multiplier: 1 } as const;
export const ONE_UPSTREAM_CALL = { field: 1, multiplier: 1 } as const;

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  DefaultFieldNullability: false;
  Scalars: {
    ID: { Input: string; Output: string };
    Date: { Input: string; Output: string };
    DateTime: { Input: string; Output: string };
  };
  DefaultEdgesNullability: { list: false; items: false };
  DefaultNodeNullability: false;
}>({
  defaultFieldNullability: false,
  plugins: [ComplexityPlugin, RelayPlugin, FederationPlugin],
  complexity: {
    // A field costs nothing unless it declares a cost: exposed fields read their parent, and a test
    // (test/schema/builder.costs.test.ts) refuses any field with a resolver of its own and no declaration.
    defaultComplexity: 0,
    defaultListMultiplier: 1,
    // use-cost-limit.ts enforces the limit before execution: the plugin's check would repeat the count.
    disabled: true,
  },
  relay: {
    // node.ts defines Query.node and Query.nodes, with their checks and costs.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    nodeTypeOptions: { description: "An object with an identity: `node(id:)` reads it again by its id (Relay's refetch)." },
    idFieldOptions: { description: "The object's id, unique across the schema." },
    cursorType: 'String',
    // `PageInfo` is the offset lists' own, which clients' cache configurations already name.
    pageInfoTypeOptions: { name: 'ConnectionPageInfo', description: 'Where a page of a cursor connection sits in its list.' },
    hasNextPageFieldOptions: { description: "Whether items follow this page's last one." },
    hasPreviousPageFieldOptions: { description: "Whether items come before this page's first one." },
    startCursorFieldOptions: { description: 'The cursor of the first edge; null when the page is empty.' },
    endCursorFieldOptions: { description: 'The cursor of the last edge; null when the page is empty.' },
    firstArgOptions: { description: 'Items after `after` (or from the start): 1 to 100. Give first or last.' },
    afterArgOptions: { description: 'A cursor this list answered with the same other arguments: the page starts after it.' },
    lastArgOptions: { description: 'Items before `before` (or up to the end): 1 to 100. Give first or last.' },
    beforeArgOptions: { description: 'A cursor this list answered with the same other arguments: the page ends before it.' },
    pageInfoFieldOptions: { description: 'Where this page sits in the list.', complexity: NO_UPSTREAM_CALL },
    edgesFieldOptions: { description: 'The items of this page, each with its cursor.', complexity: NO_UPSTREAM_CALL },
    nodeFieldOptions: { description: 'The item.', complexity: NO_UPSTREAM_CALL },
    cursorFieldOptions: { description: 'Where this item is in the list: give it as `after` or `before`.' },
  },
});

/** Also reachable from mutation payloads (`query`). */
export const QueryRef = builder.queryType({ description: "Reads: websites and their statistics, with the caller's API key." });
builder.mutationType({ description: 'Writes: create, update and delete websites. Never retried by the gateway.' });
