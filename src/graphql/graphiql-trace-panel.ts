// The "Upstream calls" panel of the GraphiQL page: a GraphiQL plugin drawing the last run's
// `extensions.trace` as a waterfall. Browser code, plain JavaScript in a string. It uses the page's own
// React (GraphiQL's bundle puts it on `globalThis`; without it, no panel) and sees the answers by
// wrapping `fetch`, which GraphiQL's executor calls at each run.

/** Defines `gatewayTracePlugins(endpoint)`: the plugins to hand to GraphiQL. */
export const TRACE_PANEL_SCRIPT = String.raw`
function gatewayTracePlugins(endpoint) {
  const React = globalThis.React;
  if (!React || typeof React.createElement !== 'function' || typeof React.useSyncExternalStore !== 'function') return [];
  const h = React.createElement;
  const target = new URL(endpoint, location.href).href;
  let last = null;
  const listeners = new Set();
  const subscribe = (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  const seen = (trace) => {
    last = trace;
    for (const listener of listeners) listener();
  };
  // The introspection GraphiQL sends for its schema is not a run of the user's.
  const isIntrospection = (init) => typeof init?.body === 'string' && init.body.includes('"operationName":"IntrospectionQuery"');
  const fetchOfPage = globalThis.fetch.bind(globalThis);
  globalThis.fetch = async (input, init) => {
    const response = await fetchOfPage(input, init);
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url, location.href).href;
    const type = response.headers.get('content-type') || '';
    if (url.startsWith(target) && type.includes('json') && !isIntrospection(init)) {
      response
        .clone()
        .json()
        .then((body) => {
          if (body && body.extensions && body.extensions.trace) seen(body.extensions.trace);
        })
        .catch(() => undefined);
    }
    return response;
  };

  const ms = (value) => (value < 10 ? value.toFixed(1) : Math.round(value).toString()) + ' ms';
  const HIT = new Set(['hit', 'coalesced']);
  const COLOURS = { hit: '#2e9e5b', coalesced: '#2e9e5b', stale: '#d08a00', written: '#3b6fd8', miss: '#3b6fd8' };

  // A trace names a call's first few fields and counts the others (moreFields).
  const fieldsOf = (call) => call.fields.join(', ') + (call.moreFields ? ' and ' + call.moreFields + ' more' : '');

  function Row({ call, scale }) {
    const left = (call.startMs / scale) * 100;
    const width = Math.max((call.durationMs / scale) * 100, 0.6);
    const colour = call.status !== null && call.status >= 400 ? '#c8384a' : COLOURS[call.cache] || '#777';
    const hit = HIT.has(call.cache);
    const detail = [
      call.method + ' ' + call.path,
      'status ' + (call.status === null ? '-' : call.status),
      'start ' + ms(call.startMs) + ', ' + ms(call.durationMs),
      call.bytes === null ? null : call.bytes + ' bytes',
      call.retries > 0 ? call.retries + ' retries' : null,
      'cache: ' + (call.cache || 'none'),
      call.note || null,
      call.fields.length > 0 ? 'fields: ' + fieldsOf(call) : null,
    ].filter(Boolean).join('\n');
    return h(
      'li',
      { className: 'gateway-trace-call', 'data-cache': call.cache || 'none', title: detail, style: { listStyle: 'none', margin: '0 0 10px' } },
      h(
        'div',
        { style: { display: 'flex', gap: '6px', fontSize: '12px', alignItems: 'baseline' } },
        h('span', { style: { fontWeight: 600 } }, call.method),
        h('span', { className: 'gateway-trace-path', style: { overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap', flex: '1 1 auto' } }, call.path),
        h('span', { className: 'gateway-trace-cache', style: { color: COLOURS[call.cache] || 'inherit', fontWeight: hit ? 700 : 400 } }, call.cache || 'no cache'),
        h('span', null, call.status === null ? '' : String(call.status)),
        h('span', { style: { whiteSpace: 'nowrap' } }, ms(call.durationMs)),
      ),
      h(
        'div',
        { style: { position: 'relative', height: '10px', background: 'hsla(var(--color-neutral), 0.08)', borderRadius: '2px' } },
        h('div', {
          className: 'gateway-trace-bar',
          style: {
            position: 'absolute',
            left: left + '%',
            width: width + '%',
            top: 0,
            bottom: 0,
            borderRadius: '2px',
            background: hit ? 'repeating-linear-gradient(45deg, ' + colour + ' 0 4px, transparent 4px 7px)' : colour,
            border: hit ? '1px solid ' + colour : 'none',
          },
        }),
      ),
      call.fields.length > 0 || call.note
        ? h('div', { className: 'gateway-trace-fields', style: { fontSize: '11px', opacity: 0.75, marginTop: '2px' } }, fieldsOf(call) || call.note)
        : null,
    );
  }

  function Panel() {
    const trace = React.useSyncExternalStore(subscribe, () => last);
    const title = h('div', { className: 'graphiql-doc-explorer-title' }, 'Upstream calls');
    if (trace === null) return h('div', { className: 'gateway-trace' }, title, h('p', null, 'Run an operation: the calls it made upstream show here.'));
    const { totals, calls } = trace;
    const scale = Math.max(totals.wallMs, ...calls.map((call) => call.startMs + call.durationMs), 1);
    const summary = [
      totals.upstreamCalls + (totals.upstreamCalls === 1 ? ' call' : ' calls'),
      totals.cacheHits + (totals.cacheHits === 1 ? ' cache hit' : ' cache hits'),
      ms(totals.wallMs) + ' in all',
      ms(totals.slotWaitMs) + ' waiting for a slot',
      ms(totals.upstreamMs) + ' upstream',
      ms(totals.gatewayMs) + ' in the gateway',
    ];
    return h(
      'div',
      { className: 'gateway-trace' },
      title,
      h('p', { className: 'gateway-trace-totals', style: { fontSize: '12px' } }, summary.join(' · ')),
      trace.storedAnswer ? h('p', { className: 'gateway-trace-stored' }, 'Answered with a stored answer: nothing ran, no call was made.') : null,
      calls.length === 0 && !trace.storedAnswer ? h('p', null, 'No upstream call.') : null,
      trace.cut
        ? h(
            'p',
            { className: 'gateway-trace-cut', style: { fontSize: '12px', fontWeight: 600 } },
            'Cut to its bounds: ' + trace.cut.calls + ' calls and ' + trace.cut.fields + ' field paths left out (the totals count every call).',
          )
        : null,
      h('ol', { className: 'gateway-trace-calls', style: { padding: 0, margin: '8px 0 0' } }, calls.map((call, index) => h(Row, { key: index, call, scale }))),
    );
  }

  function Icon() {
    return h(
      'svg',
      { viewBox: '0 0 24 24', width: '1em', height: '1em', fill: 'none', stroke: 'currentColor', strokeWidth: 1.5, 'aria-hidden': true },
      h('path', { d: 'M3 6h8M6 12h12M9 18h9' }),
    );
  }

  return [{ title: 'Upstream calls', icon: Icon, content: Panel }];
}
`;
