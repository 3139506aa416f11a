#!/bin/sh
# One lab node (run inside its namespace by the lab, TSBGP_NODE and
# TSBGP_WORK set): an HTTP server answering with the node's name on port 80,
# standing in for the Services behind kube-proxy, and the tsbgp agent,
# started again when it exits or is killed (as the kubelet restarts
# calico-node). TSBGP_MANIFESTS: the manifest layers, space-separated.
set -u
REPO=${TSBGP_REPO:?TSBGP_REPO must name the repository}
MANIFESTS=${TSBGP_MANIFESTS:-$REPO/examples/yaobank/base $REPO/examples/lab/yaobank/manifests}
cd "$REPO" || exit 1
python3 "$REPO/examples/lab/yaobank/http-name.py" "$TSBGP_NODE" >>"$TSBGP_WORK/http.log" 2>&1 &
while :; do
  # shellcheck disable=SC2086 # MANIFESTS is a list of paths
  node --import tsx "$REPO/src/agent/main.ts" agent --node "$TSBGP_NODE" --control "$TSBGP_WORK/tsbgp.sock" --log-level info $MANIFESTS >>"$TSBGP_WORK/agent.log" 2>&1 &
  echo $! >"$TSBGP_WORK/agent.pid"
  wait $!
  sleep 0.2
done
