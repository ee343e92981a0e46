# Multi-stage build on Debian 12; the runtime image carries only the daemon and its shared libraries.
FROM debian:12 AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ cmake ninja-build pkg-config git ca-certificates prometheus-cpp-dev libcpp-httplib-dev \
      libcurl4-openssl-dev libsimdjson-dev libboost-dev libspdlog-dev catch2 libyaml-cpp-dev \
      libsqlite3-dev libssl-dev nlohmann-json3-dev libjemalloc-dev libxxhash-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# tests/ops/CMakeLists.txt configures with these flags in CI: change both together.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DFIRSTWORK_BUILD_TESTS=OFF \
      -DFIRSTWORK_BUILD_BENCH=OFF \
 && cmake --build /build --target firstworkd \
 && install -D -m 0755 /build/src/app/firstworkd /out/usr/bin/firstworkd

FROM debian:12-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libcurl4 libsimdjson14 libspdlog1.10 libfmt9 libyaml-cpp0.7 libsqlite3-0 \
      libprometheus-cpp-core1.0 libcpp-httplib0.11 libssl3 libjemalloc2 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd -g 65532 firstwork && useradd -u 65532 -g 65532 -M -s /usr/sbin/nologin firstwork \
 && install -d -o 65532 -g 65532 /var/lib/firstwork
COPY --from=build /out/ /
USER 65532:65532
EXPOSE 9500
ENTRYPOINT ["/usr/bin/firstworkd"]
CMD ["run", "--config", "/etc/firstwork/firstwork.yaml"]
