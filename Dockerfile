# coldgate in a container, to reproduce the CI job locally:
#   docker build -t coldgate . && docker run --rm -v "$PWD":/work coldgate run
# First version: builds the tool on Debian bookworm; the runtime stage carries PostgreSQL 15.

FROM debian:bookworm-slim AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      g++ cmake ninja-build pkg-config ca-certificates \
      libyaml-cpp-dev nlohmann-json3-dev libdtl-dev libcli11-dev libfmt-dev \
      libpqxx-dev libcurl4-openssl-dev libssl-dev libgtest-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY src ./src
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLDGATE_BUILD_TESTS=OFF \
 && cmake --build build --target coldgate \
 && strip build/coldgate

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libyaml-cpp0.7 libfmt9 libpqxx-6.4 libcurl4 libssl3 \
      postgresql-15 postgresql-client-15 git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 1000 coldgate
COPY --from=build /src/build/coldgate /usr/local/bin/coldgate
ENV PATH=/usr/lib/postgresql/15/bin:$PATH
USER coldgate
WORKDIR /work
ENTRYPOINT ["coldgate"]
