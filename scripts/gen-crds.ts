/**
 * Generates deploy/crds/: CustomResourceDefinitions for the Calico resources
 * tsbgp reads (crd.projectcalico.org/v1), from src/kubernetes/schema.ts,
 * the schema src/kubernetes/validate.ts checks manifests against. The API server then
 * rejects obviously wrong objects early; the validator stays the authority
 * (cross-field rules, CIDR host bits, selectors). `spec` keeps unknown fields,
 * so Calico's own fields survive when these CRDs stand in for Calico's.
 *
 *   node --import tsx scripts/gen-crds.ts          # rewrite deploy/crds/
 *   node --import tsx scripts/gen-crds.ts --check  # exit 1 if out of date
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { KINDS, type Field, type Kind } from '../src/kubernetes/schema.js';
import { MAX_UPDATE_PERIOD_SECONDS, NODE_STATUS_CLASSES } from '../src/agent/node-status.js';

export { KINDS };

export const GROUP = 'crd.projectcalico.org';

function openApi(f: Field): Record<string, unknown> {
  const d = f.doc ? { description: f.doc } : {};
  switch (f.t) {
    case 'string':
      return { type: 'string', ...d, ...(f.enum ? { enum: [...f.enum] } : {}), ...(f.pattern ? { pattern: f.pattern } : {}) };
    case 'integer':
      return { type: 'integer', ...d, ...(f.min !== undefined ? { minimum: f.min } : {}), ...(f.max !== undefined ? { maximum: f.max } : {}) };
    case 'boolean':
      return { type: 'boolean', ...d };
    case 'intOrString':
      return { 'x-kubernetes-int-or-string': true, ...d };
    case 'array':
      return {
        type: 'array',
        ...d,
        items: openApi(f.items),
        ...(f.minItems !== undefined ? { minItems: f.minItems } : {}),
        ...(f.maxItems !== undefined ? { maxItems: f.maxItems } : {}),
      };
    case 'object':
      return {
        type: 'object',
        ...d,
        properties: Object.fromEntries(Object.entries(f.props).map(([k, v]) => [k, openApi(v)])),
        ...(f.required?.length ? { required: [...f.required] } : {}),
        ...(f.minProperties !== undefined ? { minProperties: f.minProperties } : {}),
        ...(f.maxProperties !== undefined ? { maxProperties: f.maxProperties } : {}),
      };
  }
}

export function crdFor(k: Kind): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${k.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: k.kind, listKind: `${k.kind}List`, plural: k.plural, singular: k.kind.toLowerCase() },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: { ...openApi(k.spec), 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * CalicoNodeStatus, which the agent answers (src/agent/node-status.ts):
 * the request's spec as Calico defines it, a status subresource (the agent
 * writes only that) whose fields the API server keeps as written.
 */
export function nodeStatusCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `caliconodestatuses.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: 'CalicoNodeStatus', listKind: 'CalicoNodeStatusList', plural: 'caliconodestatuses', singular: 'caliconodestatus' },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Node', type: 'string', jsonPath: '.spec.node', description: 'The node that reports' },
            { name: 'Classes', type: 'string', jsonPath: '.spec.classes', description: 'What it reports' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: {
                  type: 'object',
                  properties: {
                    node: { type: 'string', description: 'The node whose status is asked for.' },
                    classes: {
                      type: 'array',
                      description: 'What to report.',
                      items: { type: 'string', enum: [...NODE_STATUS_CLASSES] },
                      'x-kubernetes-list-type': 'set',
                    },
                    updatePeriodSeconds: {
                      type: 'integer',
                      minimum: 0,
                      maximum: MAX_UPDATE_PERIOD_SECONDS,
                      description: 'How often the status is refreshed (0: only when the request changes).',
                    },
                  },
                },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

const HEADER = '# Generated by scripts/gen-crds.ts from src/kubernetes/schema.ts; do not edit.\n';

/** File name → content, for every file in deploy/crds/. */
export function renderCrdFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const k of KINDS) files.set(`${GROUP}_${k.plural}.yaml`, HEADER + stringify(crdFor(k), { lineWidth: 0 }));
  files.set(
    `${GROUP}_caliconodestatuses.yaml`,
    HEADER.replace('src/kubernetes/schema.ts', 'src/agent/node-status.ts') + stringify(nodeStatusCrd(), { lineWidth: 0 }),
  );
  const kustomization = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [...files.keys()] };
  files.set('kustomization.yaml', HEADER + stringify(kustomization));
  return files;
}

export const CRD_DIR = fileURLToPath(new URL('../deploy/crds/', import.meta.url));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [name, text] of renderCrdFiles()) {
    const path = join(CRD_DIR, name);
    if (check) {
      let old = '';
      try {
        old = readFileSync(path, 'utf8');
      } catch {
        /* missing */
      }
      if (old !== text) {
        stale++;
        process.stderr.write(`out of date: ${path}\n`);
      }
    } else writeFileSync(path, text);
  }
  process.exit(stale > 0 ? 1 : 0);
}
