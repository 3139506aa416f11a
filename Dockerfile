# tsbgp node agent image: build with the dev toolchain, run with production deps only.
FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
RUN npm run build

FROM node:20-slim
# Port 179 is privileged: give the node binary just cap_net_bind_service so the
# agent can run as a non-root user (see deploy/daemonset.yaml).
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcap2-bin \
 && setcap cap_net_bind_service=+ep /usr/local/bin/node \
 && apt-get purge -y libcap2-bin && apt-get autoremove -y \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 tsbgp \
 && useradd --system --uid 10001 --gid tsbgp --no-create-home --shell /usr/sbin/nologin tsbgp
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY bin ./bin
USER 10001:10001
EXPOSE 179 9900
ENTRYPOINT ["node", "/app/bin/tsbgp.js"]
CMD ["agent"]
