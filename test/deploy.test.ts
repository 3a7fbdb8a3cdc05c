// The deployment files against the Kubernetes schemas, the code and the docs, offline: every manifest
// of deploy/kubernetes/ validated by kubernetes-models (the API's OpenAPI schemas), the drain, probes,
// user and memory they promise checked against the gateway's defaults and the Dockerfile, and every
// setting they, the Dockerfile and compose.yaml give one the code reads. compose.yaml's services are
// checked against docs/deploy.md's table, and its HAProxy configuration against docs/operations.md's
// (and by `haproxy -c`). The image itself is built and run by .ci/image.sh.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/config.js';
import { evictsKeysWithoutExpiry } from '../src/cache/redis-connection.js';
import { optionsFromEnv } from '../src/sandbox/env-options.js';
import { fencesOf, gatewayReads, readDoc, ROOT, tableRows } from './docs.js';
import { itNeeding, pathOf } from './needs.js';

const KUBERNETES = join(ROOT, 'deploy/kubernetes');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const manifest = JSON.parse(read('package.json')) as { version: string };

/** The kinds the base uses, each with kubernetes-models' class (its validate() checks the API's schema). */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'v1 ConfigMap': ConfigMap,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
};

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, checked field by field below
type Doc = any;
const kustomization = parse(read('deploy/kubernetes/kustomization.yaml')) as {
  resources: string[];
  images: { name: string; newTag: string }[];
};
const documents: Doc[] = kustomization.resources.map((file) => parse(read(`deploy/kubernetes/${file}`)));
const ofKind = (kind: string): Doc => documents.find((doc) => doc.kind === kind);

function validate(doc: Doc): string | null {
  const Model = MODELS[`${doc.apiVersion} ${doc.kind}`];
  if (Model === undefined) return `${doc.apiVersion} ${doc.kind}: no schema known to this test`;
  try {
    new Model(doc as never).validate();
    return null;
  } catch (error) {
    return `${doc.kind}: ${(error as Error).message}`;
  }
}

/** Settings from the Dockerfile's ENV lines (the image's defaults). */
function dockerfileEnv(): Record<string, string> {
  const text = read('Dockerfile').replace(/\\\n\s*/g, ' ');
  const env: Record<string, string> = {};
  for (const [, list = ''] of text.matchAll(/^ENV (.+)$/gm))
    for (const [, name = '', value = ''] of list.matchAll(/(\w+)=(\S+)/g)) env[name] = value;
  return env;
}

/** Mebibytes of a Kubernetes memory quantity of the forms the base uses (512Mi, 1Gi). */
function mebibytes(quantity: string): number {
  const [, amount = '', unit = ''] = /^(\d+)(Mi|Gi)$/.exec(quantity) ?? [];
  if (amount === '') throw new Error(`unexpected quantity ${quantity}`);
  return Number(amount) * (unit === 'Gi' ? 1024 : 1);
}

describe('deploy/kubernetes, the kustomize base', () => {
  it('lists every manifest of the folder, and each is valid against the Kubernetes schemas', () => {
    const files = readdirSync(KUBERNETES).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    expect(documents.map((doc) => doc.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Service',
    ]);
    expect(documents.map(validate).filter(Boolean)).toEqual([]);
  });

  it('is validated for real: a wrong type, quantity or missing field is refused', () => {
    const broken = structuredClone(ofKind('Deployment'));
    broken.spec.replicas = 'two';
    expect(validate(broken)).toMatch(/replicas must be integer/);
    const quantity = structuredClone(ofKind('Deployment'));
    quantity.spec.template.spec.containers[0].resources.limits.memory = 'lots';
    expect(validate(quantity)).toMatch(/memory/);
    const headless = structuredClone(ofKind('Deployment'));
    delete headless.spec.selector;
    expect(validate(headless)).toMatch(/selector/);
    const policy = structuredClone(ofKind('NetworkPolicy'));
    policy.spec.ingress[0].ports[0].port = { name: 'http' };
    expect(validate(policy)).toMatch(/port/);
  });

  const deployment = ofKind('Deployment');
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  const configMap = ofKind('ConfigMap');
  const settings = configMap.data as Record<string, string>;

  it('names the image the kustomization tags with the package version', () => {
    expect(kustomization.images).toEqual([{ name: container.image, newTag: manifest.version }]);
  });

  it("gives the pod longer than the whole drain, from the ConfigMap's settings or the defaults", () => {
    const config = loadConfig({ ...dockerfileEnv(), ...settings });
    const drainMs = config.drain.delayMs + config.drain.timeoutMs;
    // The image's defaults (NODE_ENV=production) hold the load balancer's delay.
    const defaults = loadConfig({ ...dockerfileEnv(), UPSTREAM_URL: 'https://analytics.example.com' }).drain;
    expect(defaults.delayMs).toBeGreaterThan(0);
    expect(drainMs).toBeGreaterThanOrEqual(defaults.delayMs + defaults.timeoutMs);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(40);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(drainMs + 5_000);
    // Out of the endpoints before the listener stops taking connections.
    const readiness = container.readinessProbe;
    expect(readiness.periodSeconds * readiness.failureThreshold * 1000).toBeLessThan(config.drain.delayMs);
  });

  it('probes /health for liveness and /ready for readiness, on the port the gateway listens on', () => {
    const ports = Object.fromEntries(container.ports.map((port: Doc) => [port.name, port.containerPort]));
    expect(ports.http).toBe(loadConfig(settings).port);
    expect(ports.metrics).toBe(loadConfig(settings).metrics?.port);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/health', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'http' });
  });

  it("runs as the image's non-root user, with a memory limit the image's heap setting fits in", () => {
    const user = /^USER (\d+):(\d+)$/m.exec(read('Dockerfile'));
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: Number(user?.[1]), runAsGroup: Number(user?.[2]) });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    const limit = mebibytes(container.resources.limits.memory);
    expect(limit).toBe(512);
    expect(mebibytes(container.resources.requests.memory)).toBeLessThanOrEqual(limit);
    expect(container.resources.requests.cpu).toBeDefined();
    const oldSpace = Number(/--max-old-space-size=(\d+)/.exec(dockerfileEnv().NODE_OPTIONS ?? '')?.[1]);
    // The old generation's cap, plus the young generation (128 MB on Node 24) and code, within the limit.
    expect(oldSpace + 128 + 64).toBeLessThanOrEqual(limit);
  });

  it('takes REDIS_URL from a Secret, never from the ConfigMap', () => {
    expect(container.env).toContainEqual({
      name: 'REDIS_URL',
      valueFrom: { secretKeyRef: { name: 'analytics-gateway-redis', key: 'url', optional: true } },
    });
    expect(settings.REDIS_URL).toBeUndefined();
    expect(container.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }]);
  });

  it('sets only settings the gateway reads, each with a value it accepts', () => {
    const names = [...Object.keys(settings), ...container.env.map((variable: Doc) => variable.name)];
    expect(names.filter((name) => !gatewayReads.has(name))).toEqual([]);
    expect(() => loadConfig({ ...settings, REDIS_URL: 'redis://redis:6379' })).not.toThrow();
  });

  it('keeps /metrics off the Service: the gateway port only, Prometheus scrapes the pods by their annotations', () => {
    const service = ofKind('Service');
    expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
    const metricsPort = container.ports.find((port: Doc) => port.name === 'metrics').containerPort;
    expect(deployment.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(metricsPort),
      'prometheus.io/path': '/metrics',
    });
  });

  it('lets only the ingress namespace reach the gateway port, and only the monitoring namespace the metrics port', () => {
    const policy = ofKind('NetworkPolicy');
    expect(deployment.spec.template.metadata.labels).toMatchObject(policy.spec.podSelector.matchLabels);
    // Ingress is restricted (nothing else comes in); egress is not named, so it stays open.
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    const rules = policy.spec.ingress.map((rule: Doc) => ({
      ports: rule.ports.map((port: Doc) => port.port),
      from: rule.from.map((peer: Doc) => peer.namespaceSelector.matchLabels['kubernetes.io/metadata.name']),
    }));
    expect(rules).toEqual([
      { ports: ['http'], from: ['ingress-nginx'] },
      { ports: ['metrics'], from: ['monitoring'] },
    ]);
    // Each rule names a port of the container; no peer selects pods (kustomize would put the gateway's labels on it).
    const portNames = container.ports.map((port: Doc) => port.name);
    for (const rule of policy.spec.ingress) {
      for (const port of rule.ports) expect(portNames).toContain(port.port);
      for (const peer of rule.from) expect(Object.keys(peer)).toEqual(['namespaceSelector']);
    }
  });

  it('has its Service, autoscaler and disruption budget pointing at the Deployment', () => {
    const labels = deployment.spec.template.metadata.labels;
    const service = ofKind('Service');
    expect(labels).toMatchObject(service.spec.selector);
    expect(labels).toMatchObject(deployment.spec.selector.matchLabels);
    const portNames = container.ports.map((port: Doc) => port.name);
    for (const port of service.spec.ports) expect(portNames).toContain(port.targetPort);
    const hpa = ofKind('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    const pdb = ofKind('PodDisruptionBudget');
    expect(labels).toMatchObject(pdb.spec.selector.matchLabels);
    // Never a budget that blocks every eviction: at least one pod more than it may take.
    expect(hpa.spec.minReplicas).toBeGreaterThan(pdb.spec.maxUnavailable);
  });
});

describe('the Dockerfile', () => {
  it('sets the settings of a container, each one the gateway (or Node) reads', () => {
    const env = dockerfileEnv();
    expect(env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '4000' });
    expect(Object.keys(env).filter((name) => name !== 'NODE_OPTIONS' && !gatewayReads.has(name))).toEqual([]);
    expect(loadConfig({ ...env, UPSTREAM_URL: 'https://analytics.example.com' })).toMatchObject({
      host: '0.0.0.0',
      port: 4000,
      production: true,
    });
    // Run with no UPSTREAM_URL, the image refuses to start rather than serve the demo sandbox; unless asked.
    expect(() => loadConfig(env)).toThrow(/UPSTREAM_URL is not set/);
    expect(loadConfig({ ...env, SANDBOX: 'on' }).upstream.url).toBeNull();
  });

  it('is based on the Node major .nvmrc names, on Debian, by default, and runs bin.js in exec form', () => {
    const text = read('Dockerfile');
    expect(text).toContain(`ARG NODE_IMAGE=node:${read('.nvmrc').trim()}-bookworm-slim`);
    expect(text).toMatch(/^ENTRYPOINT \["node", "dist\/bin\.js"\]$/m);
    expect(text).toMatch(/^HEALTHCHECK .*\n?.*CMD \["node", /m);
    expect(text).toMatch(/^EXPOSE 4000$/m);
  });
});

// --- compose.yaml ------------------------------------------------------------------------------

interface ComposeService {
  image?: string;
  build?: string;
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
}
const compose = parse(read('compose.yaml')) as { services: Record<string, ComposeService> };
const services = compose.services;

/** A compose value as it is without the variable set: `${NAME:-default}` is its default. */
const unset = (value: string): string => value.replace(/\$\{\w+:-([^}]*)\}/g, '$1');

describe('compose.yaml', () => {
  const deployDoc = readDoc('docs/deploy.md');
  const section = deployDoc.slice(deployDoc.indexOf('## Compose'), deployDoc.indexOf('\n## ', deployDoc.indexOf('## Compose') + 1));

  it("has the services of docs/deploy.md's table, with their images and published ports", () => {
    const rows = tableRows(section).map(([service = '', image = '', ports = '']) => ({
      service: service.replace(/`/g, ''),
      image: image.replace(/`/g, ''),
      ports: ports.replace(/`/g, '').replace(/^none$/, ''),
    }));
    expect(rows.length).toBe(5);
    expect(
      Object.entries(services).map(([service, definition]) => ({
        service,
        image: definition.image ?? '',
        ports: (definition.ports ?? []).join(', '),
      })),
    ).toEqual(rows);
  });

  it('runs two gateways of this version on one Redis, in front of the sandbox unless UPSTREAM_URL is set', () => {
    const gateways = Object.entries(services).filter(([, definition]) => definition.build === '.');
    expect(gateways.map(([name]) => name)).toEqual(['gateway-1', 'gateway-2']);
    for (const [name, gateway] of gateways) {
      expect(gateway.image, name).toBe(`analytics-graphql-gateway:${manifest.version}`);
      const env = gateway.environment ?? {};
      expect(Object.keys(env).filter((variable) => !gatewayReads.has(variable))).toEqual([]);
      // What the gateway reads: the image's ENV lines, then the service's environment.
      const config = loadConfig({
        ...dockerfileEnv(),
        ...Object.fromEntries(Object.entries(env).map(([variable, value]) => [variable, unset(value)])),
      });
      expect(new URL(config.cache.redisUrl ?? '').hostname).toBe('redis');
      const sandbox = optionsFromEnv(services.sandbox?.environment ?? {});
      expect(config.upstream.url).toBe(`http://sandbox:${sandbox.port}`);
      // HAProxy's checks see the 503 within fall x (inter + timeout check), 4 s: the gateway serves on for longer.
      expect(config.drain.delayMs).toBeGreaterThan(4_000);
    }
    expect(services.sandbox?.entrypoint).toEqual(['node', 'dist/sandbox/main.js']);
    expect(optionsFromEnv(services.sandbox?.environment ?? {}).host).toBe('0.0.0.0');
  });

  it('runs Redis with the maxmemory-policy docs/caching.md asks for: one that never evicts keys without an expiry', () => {
    const command = (services.redis as { command?: string[] } | undefined)?.command ?? [];
    const policy = command[command.indexOf('--maxmemory-policy') + 1] ?? '';
    expect(readDoc('docs/caching.md')).toContain(`\`maxmemory-policy ${policy}\``);
    expect(evictsKeysWithoutExpiry(policy)).toBe(false);
    expect(evictsKeysWithoutExpiry('allkeys-lru')).toBe(true);
    expect(command).toContain('--maxmemory');
  });

  it("puts HAProxy in front with docs/operations.md's configuration, the gateways by service name", () => {
    const volume = (services.haproxy?.volumes ?? [])[0] ?? '';
    const [file = ''] = volume.split(':');
    const config = read(file);
    const servers = [...config.matchAll(/^\s*server \S+ ([\w-]+):(\d+) check$/gm)].map((match) => `${match[1]}:${match[2]}`);
    expect(servers).toEqual(['gateway-1:4000', 'gateway-2:4000']);
    const docs = fencesOf('docs/operations.md').find((fence) => fence.lang === 'haproxy')?.text ?? '';
    // The same, bar where it listens, where the gateways are and how they are found.
    const essence = (text: string): string[] =>
      text
        .split('\n')
        .map((line) => line.trim())
        .filter(
          (line) => line !== '' && !line.startsWith('#') && !/^(bind|server|default-server|resolvers|parse-resolv-conf|hold)\b/.test(line),
        );
    expect(essence(docs).length).toBeGreaterThan(10);
    expect(essence(config)).toEqual(essence(docs));
  });

  // Skipped without haproxy outside CI (test/needs.ts).
  itNeeding('haproxy')('has an HAProxy configuration that `haproxy -c` accepts', async () => {
    const [file = ''] = ((services.haproxy?.volumes ?? [])[0] ?? '').split(':');
    const checked = await promisify(execFile)(pathOf('haproxy'), ['-c', '-f', join(ROOT, file)]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(checked, 'haproxy -c').not.toHaveProperty('code');
  });
});
