#!/bin/sh
# One node of borrowed-ip.clab.yml (run in its namespace by the lab; TSBGP_NODE,
# TSBGP_WORK set): the pods' routes on the node side as Felix writes them
# (`proto boot metric 1024`, proxy ARP on the veth), then the tsbgp agent with
# kernel programming on, started again whenever it exits.
set -u
REPO=${TSBGP_REPO:?TSBGP_REPO must name the repository}
cd "$REPO" || exit 1
case "$TSBGP_NODE" in
  node1) PODS="caliA=198.19.0.70" ;;   # borrowed from node2's block
  node2) PODS="caliA=198.19.0.66" ;;
  node3) PODS="caliA=198.19.0.130 caliH=198.19.2.5" ;;  # caliH: node3's /32 block
esac
for p in $PODS; do
  dev=${p%%=*}; ip=${p#*=}
  # the lab links the pods after starting this script: wait for the veth
  for _ in $(seq 100); do ip link show "$dev" >/dev/null 2>&1 && break; sleep 0.1; done
  ip link set "$dev" up
  echo 1 > "/proc/sys/net/ipv4/conf/$dev/proxy_arp"
  ip route replace "$ip/32" dev "$dev" proto boot metric 1024
done
while :; do
  node --import tsx "$REPO/src/agent/main.ts" agent --node "$TSBGP_NODE" --control "$TSBGP_WORK/tsbgp.sock" --log-level info --kernel on \
    "$REPO/test/lab/topologies/borrowed-ip/manifests" >>"$TSBGP_WORK/agent.log" 2>&1 &
  echo $! >"$TSBGP_WORK/agent.pid"
  wait $!
  sleep 0.2
done
