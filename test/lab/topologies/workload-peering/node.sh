#!/bin/sh
# node1 of workload-peering.clab.yml (run in its namespace by the lab;
# TSBGP_NODE, TSBGP_WORK set). What Felix does for a pod that a BGPPeer's
# localWorkloadSelector chose: the pod's /32 route on the node side, the
# localWorkloadPeeringIPV4 address on the host side of its veth, and its
# endpoint-status file naming the BGPPeer. Then the tsbgp agent reading that
# directory, programming the kernel as calico-node's BIRD does (its learned
# routes give the pod's routes their interface: BIRD's `gateway recursive`).
set -u
REPO=${TSBGP_REPO:?TSBGP_REPO must name the repository}
cd "$REPO" || exit 1
# the lab links the pod after starting this script: wait for the veth
for _ in $(seq 100); do ip link show caliA >/dev/null 2>&1 && break; sleep 0.1; done
ip link set caliA up
ip route replace 198.19.0.2/32 dev caliA metric 1024
ip addr add 169.254.0.179/32 dev caliA
mkdir -p "$TSBGP_WORK/endpoint-status"
# Felix writes the file in place (os.WriteFile), as here.
printf '%s' '{"ifaceName":"caliA","mac":"ee:ee:ee:ee:ee:ee","ipv4Nets":["198.19.0.2/32"],"bgpPeerName":"router-pods"}' >"$TSBGP_WORK/endpoint-status/default.pod1-eth0"
exec node --import tsx "$REPO/src/agent/main.ts" agent --node "$TSBGP_NODE" --control "$TSBGP_WORK/tsbgp.sock" --log-level info --kernel on \
  --endpoint-status-dir "$TSBGP_WORK/endpoint-status" "$REPO/test/lab/topologies/workload-peering/cluster.yaml" >>"$TSBGP_WORK/agent.log" 2>&1
