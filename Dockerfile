# tsbgp node agent image: build with the dev toolchain, run with production deps only.
# The runtime holds what package.json "files" publishes (dist/src, bin) plus
# package.json itself (`tsbgp version` reads it) and the production node_modules.
# NODE_VERSION: the Node.js LTS line; 20 is what CI tests (package.json engines: >=20).
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: "prepare" builds dist/ on install, but src/ is copied below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# tsconfig.build.json compiles src/ only, into dist/src/ (rootDir "."), as package.json "main" expects.
RUN npm run build

FROM node:${NODE_VERSION}-slim
# The agent runs as a non-root user (see deploy/daemonset.yaml); the node binary
# gets just the two file capabilities it needs: cap_net_bind_service (port 179)
# and cap_net_admin (kernel routes, --kernel=on, written over rtnetlink from node).
# iproute2's `ip` only reads (route dumps, `ip route get`) and gets none: a file
# capability on `ip` would not work anyway, since iproute2 drops it unless
# CAP_NET_ADMIN is also inheritable, which runtimes no longer grant (src/kernel/README.md).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcap2-bin iproute2 \
 && setcap cap_net_bind_service,cap_net_admin=+ep /usr/local/bin/node \
 && apt-get purge -y libcap2-bin && apt-get autoremove -y \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 tsbgp \
 && useradd --system --uid 10001 --gid tsbgp --no-create-home --shell /usr/sbin/nologin tsbgp
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist/src ./dist/src
COPY bin ./bin
# `kubectl exec -n kube-system ds/tsbgp -- tsbgp status` (the socket path comes from $TSBGP_CONTROL).
RUN ln -s /app/bin/tsbgp.js /usr/local/bin/tsbgp
USER 10001:10001
EXPOSE 179 9900
ENTRYPOINT ["node", "/app/bin/tsbgp.js"]
CMD ["agent", "--in-cluster", "--metrics=0.0.0.0:9900", "--kernel=on"]
