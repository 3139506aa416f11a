import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CalicoTree, corpusCases, labelValue, toManifests, yamlDocs } from '../../scripts/corpus/cases.js';
import { birdView, firstDifference, tsbgpView } from '../../scripts/corpus/compare.js';
import { loadTexts } from '../../src/kubernetes/manifests.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { plan } from '../../src/kubernetes/plan.js';
import { planJson } from '../../src/agent/views.js';

// Inputs written for this test in the shape of Calico's test fixtures.
const INPUT = `
kind: Node
apiVersion: projectcalico.org/v3
metadata:
  name: a
  labels:
    reflector: yes
    rack: "7"
spec:
  bgp:
    ipv4Address: 192.0.2.10/24
    asNumber: 65010
    routeReflectorClusterID: 224.0.0.9
---
kind: Service
apiVersion: v1
metadata:
  name: web
spec:
  clusterIP: 198.19.0.10
status:
  loadBalancer:
    ingress:
      - ip: 203.0.113.1/32
`;

describe('the corpus tool: Calico inputs as tsbgp manifests', () => {
  it('labels read as YAML 1.1 does: yes/on are "true", no/off "false", the rest as written', () => {
    expect(['yes', 'On', 'y', true].map(labelValue)).toEqual(['true', 'true', 'true', 'true']);
    expect(['no', 'OFF', 'n', false].map(labelValue)).toEqual(['false', 'false', 'false', 'false']);
    expect(['yess', 7, 'rack-a'].map(labelValue)).toEqual(['yess', '7', 'rack-a']);
  });

  it("a Calico Node becomes a Kubernetes Node with calico-node's annotations; a Service loses its status and lands in default", () => {
    const [n, svc] = toManifests(yamlDocs(INPUT));
    expect(n).toMatchObject({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'a',
        labels: { reflector: 'true', rack: '7', 'kubernetes.io/hostname': 'a' },
        annotations: {
          'projectcalico.org/IPv4Address': '192.0.2.10/24',
          'projectcalico.org/ASNumber': '65010',
          'projectcalico.org/RouteReflectorClusterID': '224.0.0.9',
        },
      },
    });
    expect(svc).toEqual({ kind: 'Service', apiVersion: 'v1', metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: '198.19.0.10' } });
    const loaded = loadTexts([{ file: 'x.json', text: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [n, svc] }) }]);
    expect(loaded.issues.filter((i) => i.severity === 'error')).toEqual([]);
  });

  it('compares a plan with a BIRD configuration per dimension, naming the first difference', () => {
    const objs = [
      ...toManifests(yamlDocs(INPUT)).slice(0, 1),
      { apiVersion: 'projectcalico.org/v3', kind: 'BGPConfiguration', metadata: { name: 'default' }, spec: { nodeToNodeMeshEnabled: false } },
      { apiVersion: 'projectcalico.org/v3', kind: 'BGPPeer', metadata: { name: 'tor' }, spec: { peerIP: '198.51.100.1', asNumber: 65001 } },
    ];
    const loaded = loadTexts([{ file: 'x.json', text: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }) }]);
    const p = plan(stateOf(loaded.resources), 'a');
    const bird = (passive: string, o: { routerId?: string; addPaths?: string } = {}) => ({
      'bird.cfg': `router id ${o.routerId ?? '192.0.2.10'};\ntemplate bgp t { local as 65010; ${o.addPaths ?? 'add paths on;'} }\nprotocol bgp Global_198_51_100_1 from t {\n  neighbor 198.51.100.1 as 65001;\n  source address 192.0.2.10;\n  ${passive}\n  export none;\n}\n`,
    });
    const inside = { 4: '192.0.2.10' };
    const t = tsbgpView(p, planJson(p), [], inside);
    expect(firstDifference('peers', birdView(bird(''), [], inside), t)).toBeUndefined();
    expect(firstDifference('peers', birdView(bird('passive on;'), [], inside), t)).toBe('peer 198.51.100.1:179 passive: Calico true, tsbgp false');
    expect(firstDifference('peers', birdView(bird('', { addPaths: '' }), [], inside), t)).toBe('peer 198.51.100.1:179 addPaths: Calico "off", tsbgp "both"');
    expect(firstDifference('peers', birdView(bird('', { routerId: '25.79.212.8' }), [], inside), t)).toBe(
      'router id: Calico "25.79.212.8", tsbgp "192.0.2.10"',
    );
    expect(firstDifference('sent', birdView(bird(''), [], inside), t)).toBeUndefined();
  });

  it("gives a case what its Go test gives confd: a table row's envVars, a test's endpoint-status files", () => {
    const root = mkdtempSync(join(tmpdir(), 'tsbgp-corpus-'));
    try {
      const put = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      // Go test files written for this test in the shape of confd's.
      put(
        'confd/tests/mesh_test.go',
        'cases := []c{\n\t{name: "h", goldenDir: "x/hashed", envVars: map[string]string{"CALICO_ROUTER_ID": "hash"}},\n\t{name: "p", goldenDir: "x/plain"},\n}\n',
      );
      put(
        'confd/tests/daemon_test.go',
        'func TestA(t *testing.T) {\n\td := start(t, withEndpointStatus(map[string]string{\n\t\t"pod1": `{"ifaceName":"cali1","ipv4Nets":["198.19.0.2/32"],"bgpPeerName":"p"}`,\n\t}))\n\td.expectOutput("x/pods")\n}\n\nfunc TestB(t *testing.T) {\n\td.expectOutput("x/plain")\n}\n',
      );
      for (const c of ['x/hashed', 'x/plain', 'x/pods']) {
        put(`confd/tests/compiled_templates/${c}/bird.cfg`, 'router id 192.0.2.10;\n');
        put(`confd/tests/mock_data/calicoctl/${c}/input.yaml`, INPUT);
      }
      const cases = Object.fromEntries(corpusCases(new CalicoTree(root)).map((c) => [c.name, { env: c.env, endpointStatus: c.endpointStatus }]));
      expect(cases).toEqual({
        'x/hashed': { env: { CALICO_ROUTER_ID: 'hash' }, endpointStatus: {} },
        'x/plain': { env: {}, endpointStatus: {} },
        'x/pods': { env: {}, endpointStatus: { pod1: '{"ifaceName":"cali1","ipv4Nets":["198.19.0.2/32"],"bgpPeerName":"p"}' } },
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
