// Where the gateway is, and the key a demo offers. A deployment may put a config.json beside index.html
// ({ "graphqlUrl": "https://gateway.example.com/graphql" }); `npm run example` serves one that names the
// gateway it started and, when that gateway runs its sandbox, the demo key. Without one: /graphql on the
// page's own origin, and no key offered.

export interface RuntimeConfig {
  graphqlUrl: string;
  /** A key to prefill the key field with; only a sandbox's demo key is ever offered. */
  demoKey: string | null;
}

export async function loadConfig(): Promise<RuntimeConfig> {
  const fallback: RuntimeConfig = { graphqlUrl: new URL('/graphql', location.href).href, demoKey: null };
  try {
    const response = await fetch(new URL('config.json', location.href), { cache: 'no-store' });
    if (!response.ok) return fallback;
    const body = (await response.json()) as Partial<RuntimeConfig>;
    return {
      graphqlUrl: typeof body.graphqlUrl === 'string' ? body.graphqlUrl : fallback.graphqlUrl,
      demoKey: typeof body.demoKey === 'string' ? body.demoKey : null,
    };
  } catch {
    return fallback;
  }
}
