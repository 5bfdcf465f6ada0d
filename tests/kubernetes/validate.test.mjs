// The Kubernetes manifests of deploy/kubernetes/, checked offline (no cluster, no network):
// - every document parses, has a kind we check, and lives in the kustomization's namespace;
// - the core kinds (Namespace, ConfigMap, ServiceAccount, Service, DaemonSet, Deployment, Role,
//   RoleBinding) pass kubernetes-models' validators, HTTPRoute passes
//   @kubernetes-models/gateway-api's, and InferencePool passes our schema of its v1 CRD
//   (inferencepool-v1.schema.json, which says which upstream commit it follows);
// - the pieces fit together: the pool selects the DaemonSet's pods on its serving port, names the
//   picker's Service and port, the route and the picker name the pool, mounts name real keys;
// - the endpoint picker's configuration references only plugins it declares, of types we know;
// - the swapd config inside the ConfigMap passes `swapd check --strict` (missing model files are
//   reported, not errors, so no model is needed).
//
//   node tests/kubernetes/validate.test.mjs --swapd build/bin/swapd
// The npm packages come from package-lock.json (scripts/install-browser-test.sh installs them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import Ajv from 'ajv';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { Service } from 'kubernetes-models/v1/Service';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { HTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
// --deploy DIR checks another copy of the manifests (used to see a broken one fail).
const deployDir = resolve(option('--deploy', join(root, 'deploy/kubernetes')));
const swapdOption = option('--swapd', '');
const swapdBinary = swapdOption ? resolve(swapdOption) : '';

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

// The kinds we validate, by apiVersion/kind, with kubernetes-models' classes.
const models = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/ServiceAccount': ServiceAccount,
  'v1/Service': Service,
  'apps/v1/DaemonSet': DaemonSet,
  'apps/v1/Deployment': Deployment,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'gateway.networking.k8s.io/v1/HTTPRoute': HTTPRoute,
};
// strictRequired off: the if/then on endpointPickerRef names "kind" under not{}, which is fine.
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false });
const validateInferencePool = ajv.compile(
  JSON.parse(readFileSync(join(here, 'inferencepool-v1.schema.json'), 'utf8')),
);

// Every manifest, in the kustomization's order: {file, object}.
const kustomization = loadYaml(join(deployDir, 'kustomization.yaml'))[0];
const manifests = kustomization.resources.flatMap((file) =>
  loadYaml(join(deployDir, file)).map((object) => ({ file, object })),
);

function loadYaml(path) {
  return parseYaml(readFileSync(path, 'utf8'), path);
}

function parseYaml(text, where) {
  const docs = parseAllDocuments(text);
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${where}: ${doc.errors[0].message}`);
  }
  return docs.map((doc) => doc.toJS()).filter((o) => o !== null);
}

const typeOf = ({ apiVersion, kind }) => `${apiVersion}/${kind}`;
function find(type, name) {
  const found = manifests.find((m) => typeOf(m.object) === type && m.object.metadata?.name === name);
  assert.ok(found, `no ${type} named ${name} in ${deployDir}`);
  return found.object;
}
function only(type) {
  const all = manifests.filter((m) => typeOf(m.object) === type);
  assert.equal(all.length, 1, `expected one ${type}, found ${all.length}`);
  return all[0].object;
}
function argAfter(args, flag) {
  const i = args.indexOf(flag);
  assert.ok(i >= 0 && i + 1 < args.length, `${flag} missing from ${JSON.stringify(args)}`);
  return args[i + 1];
}

test('the kustomization lists every manifest of the folder, each once', () => {
  const files = readdirSync(deployDir).filter(
    (f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml',
  );
  assert.deepEqual([...kustomization.resources].sort(), files.sort());
  assert.equal(new Set(kustomization.resources).size, kustomization.resources.length);
});

test('every object is of a checked kind and in the kustomization namespace', () => {
  for (const { file, object } of manifests) {
    const type = typeOf(object);
    assert.ok(
      models[type] || type === 'inference.networking.k8s.io/v1/InferencePool',
      `${file}: ${type} is not a kind this test checks`,
    );
    assert.ok(object.metadata?.name, `${file}: ${type} without metadata.name`);
    if (object.kind !== 'Namespace') {
      assert.equal(object.metadata.namespace, kustomization.namespace, `${file}: ${type}`);
    }
  }
  find('v1/Namespace', kustomization.namespace);
});

// These validators check types, required fields, enums and formats; like the API server's schemas
// they allow unknown fields, so a misspelt optional field is not caught here (the tests below
// check the fields this deployment relies on).
test('core kinds and HTTPRoute pass the kubernetes-models validators', () => {
  const errors = [];
  let checked = 0;
  for (const { file, object } of manifests) {
    const Model = models[typeOf(object)];
    if (!Model) continue;
    try {
      new Model(object).validate();
    } catch (error) {
      errors.push(`${file}: ${typeOf(object)} ${object.metadata.name}: ${error.message}`);
    }
    checked++;
  }
  assert.deepEqual(errors, []);
  assert.ok(checked >= 9, `only ${checked} objects checked`);
});

test('InferencePool passes the v1 CRD schema', () => {
  const pools = manifests.filter((m) => m.object.kind === 'InferencePool');
  assert.equal(pools.length, 1);
  for (const { file, object } of pools) {
    const ok = validateInferencePool(object);
    assert.ok(ok, `${file}: ${ajv.errorsText(validateInferencePool.errors, { separator: '; ' })}`);
  }
});

test('the pool selects the swapd pods on their serving port, and probes use it', () => {
  const pool = only('inference.networking.k8s.io/v1/InferencePool');
  const daemonSet = only('apps/v1/DaemonSet');
  const podLabels = daemonSet.spec.template.metadata.labels;
  for (const [key, value] of Object.entries(pool.spec.selector.matchLabels)) {
    assert.equal(podLabels[key], value, `pod template lacks the pool's label ${key}=${value}`);
  }
  const container = daemonSet.spec.template.spec.containers[0];
  const http = container.ports.find((p) => p.name === 'http');
  assert.ok(http, 'swapd container has no port named http');
  assert.deepEqual(pool.spec.targetPorts, [{ number: http.containerPort }]);
  assert.equal(argAfter(container.args, '--listen'), `0.0.0.0:${http.containerPort}`);
  for (const probe of [container.readinessProbe, container.livenessProbe]) {
    assert.equal(probe.httpGet.path, '/health');
    assert.ok([http.name, http.containerPort].includes(probe.httpGet.port));
  }
  // GPU nodes only.
  const pod = daemonSet.spec.template.spec;
  assert.ok(Object.keys(pod.nodeSelector ?? {}).length > 0, 'no nodeSelector');
  assert.ok((pod.tolerations ?? []).length > 0, 'no tolerations');
  // The models' volume is the node's disk, read-only.
  const models = daemonSet.spec.template.spec.volumes.find((v) => v.name === 'models');
  assert.ok(models?.hostPath, 'no hostPath volume named models');
  assert.equal(container.volumeMounts.find((m) => m.name === 'models')?.readOnly, true);
});

test('the swapd pods read config.yaml from the ConfigMap, mounted whole (updates reach it)', () => {
  const daemonSet = only('apps/v1/DaemonSet');
  const spec = daemonSet.spec.template.spec;
  const container = spec.containers[0];
  const configPath = argAfter(container.args, '--config');
  assert.ok(container.args.includes('--watch-config'));
  const mount = container.volumeMounts.find((m) => configPath.startsWith(`${m.mountPath}/`));
  assert.ok(mount, `no volume mounted above ${configPath}`);
  assert.equal(mount.subPath, undefined, 'a subPath mount never sees ConfigMap updates');
  const volume = spec.volumes.find((v) => v.name === mount.name);
  const configMap = find('v1/ConfigMap', volume.configMap?.name);
  const key = configPath.slice(mount.mountPath.length + 1);
  assert.equal(typeof configMap.data[key], 'string', `ConfigMap has no key ${key}`);
});

test('the pool names the picker Service and port; the route and the picker name the pool', () => {
  const pool = only('inference.networking.k8s.io/v1/InferencePool');
  const ref = pool.spec.endpointPickerRef;
  const service = find('v1/Service', ref.name);
  assert.ok(
    service.spec.ports.some((p) => p.port === ref.port.number),
    `Service ${ref.name} has no port ${ref.port.number}`,
  );
  const route = only('gateway.networking.k8s.io/v1/HTTPRoute');
  const backends = route.spec.rules.flatMap((r) => r.backendRefs);
  assert.deepEqual(backends, [
    { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: pool.metadata.name },
  ]);
  const picker = only('apps/v1/Deployment');
  const container = picker.spec.template.spec.containers[0];
  assert.equal(argAfter(container.args, '--pool-name'), pool.metadata.name);
  assert.equal(argAfter(container.args, '--pool-group'), 'inference.networking.k8s.io');
  // The Service reaches the picker's ext_proc port, and its selector the picker's pods.
  const grpc = container.ports.find((p) => p.containerPort === Number(argAfter(container.args, '--grpc-port')));
  assert.ok(grpc, 'the picker container does not expose its --grpc-port');
  const extProc = service.spec.ports.find((p) => p.port === ref.port.number);
  assert.ok([grpc.name, grpc.containerPort].includes(extProc.targetPort));
  for (const [key, value] of Object.entries(service.spec.selector)) {
    assert.equal(picker.spec.template.metadata.labels[key], value);
  }
  // Its service account exists and is bound to a Role that lets it watch the pool and its pods.
  const account = picker.spec.template.spec.serviceAccountName;
  find('v1/ServiceAccount', account);
  const binding = only('rbac.authorization.k8s.io/v1/RoleBinding');
  assert.ok(binding.subjects.some((s) => s.kind === 'ServiceAccount' && s.name === account));
  const role = find('rbac.authorization.k8s.io/v1/Role', binding.roleRef.name);
  const allows = (group, resource) =>
    role.rules.some(
      (r) =>
        r.apiGroups.includes(group) &&
        r.resources.includes(resource) &&
        ['get', 'list', 'watch'].every((v) => r.verbs.includes(v)),
    );
  assert.ok(allows('inference.networking.k8s.io', 'inferencepools'));
  assert.ok(allows('', 'pods'));
});

// Plugin types of llm-d-router (registered in cmd/epp/runner/runner.go at ebab6879 and v0.9.0)
// that this configuration may use.
const knownPluginTypes = new Set([
  'metrics-data-source',
  'core-metrics-extractor',
  'lora-affinity-scorer',
  'queue-scorer',
  'running-requests-size-scorer',
  'kv-cache-utilization-scorer',
  'prefix-cache-scorer',
  'max-score-picker',
  'weighted-random-picker',
  'single-profile-handler',
]);

test('the endpoint picker configuration is whole and swap-aware', () => {
  const picker = only('apps/v1/Deployment');
  const spec = picker.spec.template.spec;
  const container = spec.containers[0];
  const configPath = argAfter(container.args, '--config-file');
  const mount = container.volumeMounts.find((m) => configPath.startsWith(`${m.mountPath}/`));
  const volume = spec.volumes.find((v) => v.name === mount.name);
  const configMap = find('v1/ConfigMap', volume.configMap.name);
  const text = configMap.data[configPath.slice(mount.mountPath.length + 1)];
  assert.equal(typeof text, 'string', `no key for ${configPath}`);
  const docs = parseYaml(text, `${configMap.metadata.name}: ${configPath}`);
  assert.equal(docs.length, 1);
  const config = docs[0];
  assert.equal(config.apiVersion, 'llm-d.ai/v1alpha1');
  assert.equal(config.kind, 'EndpointPickerConfig');
  const allowedTop = ['apiVersion', 'kind', 'featureGates', 'plugins', 'schedulingProfiles',
    'dataLayer', 'flowControl', 'requestHandler'];
  for (const key of Object.keys(config)) assert.ok(allowedTop.includes(key), `unknown key ${key}`);

  const names = new Set();
  for (const plugin of config.plugins) {
    for (const key of Object.keys(plugin)) {
      assert.ok(['name', 'type', 'parameters'].includes(key), `plugin key ${key}`);
    }
    assert.ok(knownPluginTypes.has(plugin.type), `unknown plugin type ${plugin.type}`);
    const name = plugin.name ?? plugin.type; // the picker names a plugin by its type by default
    assert.ok(!names.has(name), `plugin ${name} declared twice`);
    names.add(name);
  }
  const weights = {};
  for (const profile of config.schedulingProfiles) {
    assert.ok(profile.name, 'a scheduling profile without a name');
    for (const entry of profile.plugins) {
      for (const key of Object.keys(entry)) {
        assert.ok(['pluginRef', 'weight'].includes(key), `profile plugin key ${key}`);
      }
      assert.ok(names.has(entry.pluginRef), `profile ${profile.name}: ${entry.pluginRef} is not declared`);
      if (entry.weight !== undefined) {
        assert.equal(typeof entry.weight, 'number');
        weights[entry.pluginRef] = entry.weight;
      }
    }
  }
  for (const source of config.dataLayer?.sources ?? []) {
    assert.ok(names.has(source.pluginRef), `data source ${source.pluginRef} is not declared`);
    for (const extractor of source.extractors) assert.ok(names.has(extractor.pluginRef));
  }
  // Swap-aware: the affinity gap between "resident" (1.0) and "room" (0.8) outweighs the queue
  // scorer alone, and "full" (0.0) sits below "room" by more than every other scorer together.
  const affinity = weights['lora-affinity-scorer'];
  assert.ok(affinity > 0, 'lora-affinity-scorer is not weighted in a profile');
  const others = Object.entries(weights)
    .filter(([name]) => name !== 'lora-affinity-scorer')
    .reduce((sum, [, w]) => sum + w, 0);
  assert.ok(0.2 * affinity > (weights['queue-scorer'] ?? 0));
  assert.ok(0.8 * affinity > others);
});

test('swapd accepts its ConfigMap config (swapd check --strict)', { skip: !swapdBinary && 'no --swapd' }, () => {
  const daemonSet = only('apps/v1/DaemonSet');
  const container = daemonSet.spec.template.spec.containers[0];
  const configPath = argAfter(container.args, '--config');
  const volume = daemonSet.spec.template.spec.volumes.find((v) => v.name === 'config');
  const text = find('v1/ConfigMap', volume.configMap.name).data[configPath.split('/').pop()];
  const dir = mkdtempSync(join(tmpdir(), 'swapd-k8s-'));
  try {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, text);
    // --listen and --watch-config as the pod passes them: check accepts and ignores them.
    let out;
    try {
      out = execFileSync(
        swapdBinary,
        ['check', '--strict', '--json', '--config', file, '--listen', argAfter(container.args, '--listen')],
        { encoding: 'utf8', env: { ...process.env, HOME: dir } }, // HOME: nothing of ours is read
      );
    } catch (error) {
      out = error.stdout;
      if (!out) throw error;
    }
    const report = JSON.parse(out);
    const problems = report.diagnostics
      .filter((d) => d.severity !== 'hint')
      .map((d) => `${d.line}:${d.column}: ${d.severity}: ${d.message}`);
    assert.deepEqual(problems, []);
    assert.equal(report.valid, true);
    assert.ok(report.summary.models >= 2, 'fewer than two models');
    // The ids the picker routes by are the models' ids; the example has a group and ttls.
    assert.ok(Object.keys(report.config.groups).some((g) => g !== '(default)'), 'no group');
    assert.ok(Object.values(report.config.models).every((m) => m.argv.length > 0));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
