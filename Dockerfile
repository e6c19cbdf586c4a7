# coldgate in a container: the CI job, reproduced on any machine with docker or podman.
#   docker build -t coldgate .
#   docker run --rm -v "$PWD":/work coldgate run          # in your project's checkout
# The runtime stage carries coldgate, the PostgreSQL server binaries, psql and git, so the
# default `local` provider runs inside the container, python3-psycopg2, which the bundled
# demo's application stage needs (config/demo/game_server.py), and libjs-chart.js, which
# `coldgate history page` embeds. Build arguments:
#   PG_MAJOR=15       the PostgreSQL major version (15 is bookworm's own; any other comes from
#                     apt.postgresql.org, PGDG): match your CI runner's and `database.version`
#   COLDGATE_UID=1000 the uid of the non-root user the container runs as: make it yours
#                     (`--build-arg COLDGATE_UID=$(id -u)`) so it can write into the mounted
#                     checkout (coldgate-out/, snapshots/*.new)
# Tested with podman on Debian bookworm: ci/docker-test.sh.

FROM debian:bookworm-slim AS build
RUN set -eux; \
    apt-get update -qq; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      g++ cmake ninja-build pkg-config ca-certificates \
      libyaml-cpp-dev nlohmann-json3-dev libdtl-dev libcli11-dev libfmt-dev \
      libpqxx-dev libcurl4-openssl-dev libssl-dev >/dev/null; \
    rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY src ./src
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLDGATE_BUILD_TESTS=OFF >/dev/null \
 && cmake --build build --target coldgate \
 && strip build/coldgate build/coldgate-exec

FROM debian:bookworm-slim AS runtime
ARG PG_MAJOR=15
ARG COLDGATE_UID=1000
ENV LANG=C.UTF-8 \
    PG_MAJOR=${PG_MAJOR}
# No "main" cluster from the server package's postinst: coldgate makes its own throwaway ones.
# safe.directory: the mounted checkout belongs to the host's user, and git (measure::git_info,
# `coldgate ab`'s worktrees) must still read it.
RUN set -eux; \
    mkdir -p /etc/postgresql-common/createcluster.d; \
    echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/coldgate.conf; \
    apt-get update -qq; \
    export DEBIAN_FRONTEND=noninteractive; \
    if [ "$PG_MAJOR" != 15 ]; then \
      apt-get install -y -qq --no-install-recommends postgresql-common ca-certificates >/dev/null; \
      /usr/share/postgresql-common/pgdg/apt.postgresql.org.sh -y >/dev/null; \
    fi; \
    apt-get install -y -qq --no-install-recommends \
      libyaml-cpp0.7 libfmt9 libpqxx-6.4 libcurl4 libssl3 ca-certificates git python3-psycopg2 libjs-chart.js \
      "postgresql-$PG_MAJOR" "postgresql-client-$PG_MAJOR" >/dev/null; \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb; \
    git config --system --add safe.directory '*'; \
    useradd --create-home --uid "$COLDGATE_UID" --shell /bin/sh coldgate
COPY --from=build /src/build/coldgate /usr/local/bin/coldgate
COPY --from=build /src/build/coldgate-exec /usr/local/libexec/coldgate/coldgate-exec
ENV PATH=/usr/lib/postgresql/${PG_MAJOR}/bin:$PATH
USER coldgate
WORKDIR /work
ENTRYPOINT ["coldgate"]
CMD ["run"]
