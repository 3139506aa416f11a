#!/usr/bin/env bash
# Installs the BGP daemons the interop tests and the lab benchmarks run
# (Debian packages: BIRD 2, FRR, GoBGP, ExaBGP, iproute2; setcap and setpriv
# for test/lab/kernel-cap.test.ts), as root, only
# when something is missing. Called by .ci/run and by `npm run bench:lab`.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" != 0 ]; then
  echo "install-daemons: not root, not installing anything (the lab needs root)" >&2
  exit 0
fi

need=()
for cmd in bird birdc vtysh gobgpd gobgp exabgp ip nft ping setcap setpriv; do command -v "$cmd" >/dev/null || need+=("$cmd"); done
[ -x /usr/lib/frr/zebra ] && [ -x /usr/lib/frr/bgpd ] && [ -x /usr/lib/frr/staticd ] && [ -x /usr/lib/frr/bfdd ] || need+=(frr)
if [ ${#need[@]} -gt 0 ]; then
  echo "install-daemons: installing Debian packages (missing: ${need[*]})"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends bird2 frr gobgpd exabgp iproute2 procps iputils-ping nftables libcap2-bin util-linux >/dev/null
fi

# The packages start system-wide daemons; the tests and benchmarks run their
# own, one per network namespace. Stop the system ones after installing: the
# services, and any such daemon the install left running in the host's own
# network namespace (never one inside a namespace, which belongs to a lab).
for svc in bird frr gobgpd exabgp; do systemctl stop "$svc" 2>/dev/null || true; done
if [ ${#need[@]} -gt 0 ]; then
  host_ns=$(readlink /proc/self/ns/net)
  for name in bird gobgpd zebra bgpd staticd bfdd watchfrr; do
    for pid in $(pgrep -x "$name" 2>/dev/null || true); do
      if [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "$host_ns" ]; then kill "$pid" 2>/dev/null || true; fi
    done
  done
fi
