import react from '@vitejs/plugin-react';
import { type Connect, defineConfig, type Plugin } from 'vite';

/**
 * Serves /config.json, which tells the page where the gateway is (DASHBOARD_GRAPHQL_URL, by default
 * http://127.0.0.1:4000/graphql) and, with a sandbox, its demo key (DASHBOARD_DEMO_KEY). The page talks to
 * the gateway directly: outside production the gateway allows http://127.0.0.1:* and http://localhost:*.
 */
function runtimeConfig(): Plugin {
  const serve: Connect.NextHandleFunction = (request, response, next) => {
    if (request.url?.split('?')[0] !== '/config.json') return next();
    response.setHeader('content-type', 'application/json');
    response.setHeader('cache-control', 'no-store');
    response.end(
      JSON.stringify({
        graphqlUrl: process.env.DASHBOARD_GRAPHQL_URL || 'http://127.0.0.1:4000/graphql',
        demoKey: process.env.DASHBOARD_DEMO_KEY || null,
      }),
    );
  };
  return {
    name: 'runtime-config',
    configureServer: (server) => void server.middlewares.use(serve),
    configurePreviewServer: (server) => void server.middlewares.use(serve),
  };
}

export default defineConfig({
  plugins: [react(), runtimeConfig()],
  build: { target: 'es2022', chunkSizeWarningLimit: 400 },
});
