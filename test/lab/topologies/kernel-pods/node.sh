#!/bin/sh
# One node of kernel-pods.clab.yml (run in its namespace by the lab; TSBGP_NODE,
# TSBGP_WORK set): the pods' /32 routes on the node side (as Felix adds them),
# then the tsbgp agent with kernel programming on, started again whenever it
# exits or is killed (as the kubelet restarts calico-node).
set -u
REPO=${TSBGP_REPO:?TSBGP_REPO must name the repository}
cd "$REPO" || exit 1
case "$TSBGP_NODE" in
  node1) A=198.19.0.2; B=198.19.0.3 ;;
  node2) A=198.19.0.66; B=198.19.0.67 ;;
  node3) A=198.19.0.130; B=198.19.0.131 ;;
esac
# the lab links the pods after starting this script: wait for the veths
for _ in $(seq 100); do ip link show caliB >/dev/null 2>&1 && break; sleep 0.1; done
ip link set caliA up; ip link set caliB up
ip route replace "$A/32" dev caliA
ip route replace "$B/32" dev caliB
while :; do
  node --import tsx "$REPO/src/agent/main.ts" agent --node "$TSBGP_NODE" --control "$TSBGP_WORK/tsbgp.sock" --log-level info --kernel on \
    "$REPO/test/lab/topologies/kernel-pods/manifests" >>"$TSBGP_WORK/agent.log" 2>&1 &
  echo $! >"$TSBGP_WORK/agent.pid"
  wait $!
  sleep 0.2
done
