# Sediment build and test entry points. `make test` is what CI runs; it
# installs what the tests need itself.

GO      ?= go
BIN     := $(CURDIR)/.bin
export PATH := $(BIN):$(PATH)
export CGO_ENABLED := 1

.PHONY: test vet unit minio etcd fuzz-smoke build interop java-interop python-interop compose duckdb-node clean print-interop-pkgs bench

# Debian packages the interop tests need (installed by .ci/run).
INTEROP_PKGS := kcat python3-kafka python3-confluent-kafka python3-snappy python3-lz4 python3-zstandard postgresql python3-venv openjdk-17-jdk-headless maven

# The MinIO server the object-store and broker tests run against
# (storage/objectstore/miniotest finds it in .bin).
MINIO_MODULE  := github.com/minio/minio
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c

test: vet minio etcd unit

build:
	$(GO) build -o $(BIN)/broker ./cmd/broker

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags interop ./cmd/broker/ ./table/catalog/ ./interop/... ./bench/
	$(GO) vet -tags compose ./cmd/broker/
	$(GO) vet -tags lockrank ./storage/...

# Every package, race detector on. Integration tests start real clients
# (franz-go, sarama, confluent-kafka-go with its bundled librdkafka) against
# real brokers on loopback, and a real MinIO server. Then the storage path
# again with its lock order checked (-tags lockrank, storage/internal/lockrank).
unit: minio etcd
	$(GO) test -race -count=1 -timeout 40m ./...
	$(GO) test -race -count=1 -timeout 20m -tags lockrank ./storage/internal/... ./storage/wal/... ./storage/readcache/... ./storage/partition/...

# Installs the pinned MinIO server into .bin unless the binary there is
# already that version (go version -m reads it from the binary). About 5
# minutes the first time; a no-op after.
minio:
	@if $(GO) version -m $(BIN)/minio 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+$(MINIO_MODULE)[[:space:]]+$(MINIO_VERSION)([[:space:]]|$$)"; then \
	  echo "MinIO $(MINIO_VERSION) is in $(BIN)"; \
	else \
	  echo "installing MinIO $(MINIO_VERSION) into $(BIN) (about 5 minutes the first time)"; \
	  GOBIN=$(BIN) CGO_ENABLED=0 $(GO) install $(MINIO_MODULE)@$(MINIO_VERSION); \
	fi

# The etcd server the bench suite's cluster target runs (bench/etcd.go
# finds it in .bin, or at SEDIMENT_ETCD): built from the etcd server
# module go.mod already pins, so it needs no download beyond the module
# cache (about 20 s). Rebuilt when go.mod or go.sum change.
etcd: .bin/etcd
.bin/etcd: go.mod go.sum
	$(GO) build -o $@ go.etcd.io/etcd/server/v3

# A short run of every fuzz target beyond its committed seed corpus.
FUZZTIME ?= 20s
fuzz-smoke:
	$(GO) test ./protocol/ -run '^$$' -fuzz FuzzDecodeRequest -fuzztime $(FUZZTIME)
	$(GO) test ./storage/record/ -run '^$$' -fuzz FuzzParseBatch -fuzztime $(FUZZTIME)
	$(GO) test ./storage/dataobject/ -run '^$$' -fuzz FuzzParseFooter -fuzztime $(FUZZTIME)
	$(GO) test ./storage/wal/ -run '^$$' -fuzz FuzzRecover -fuzztime $(FUZZTIME)
	$(GO) test ./storage/wal/ -run '^$$' -fuzz FuzzCorruptAt -fuzztime $(FUZZTIME)
	$(GO) test ./storage/record/ -run '^$$' -fuzz FuzzDecodeRecords -fuzztime $(FUZZTIME)
	$(GO) test ./table/ -run '^$$' -fuzz FuzzConvertJSON -fuzztime $(FUZZTIME)

# The benchmark suite (bench/README.md): one workload, reports in
# bench/out/NAME. make bench WORKLOAD=bench/workloads/catch-up-read.yaml
# BENCH_TARGETS="--launch sediment --minio" (needs make minio), or a
# cluster of three brokers on etcd beside one broker:
# BENCH_TARGETS="--vs sediment,cluster --minio".
WORKLOAD      ?= bench/workloads/max-throughput.yaml
BENCH_TARGETS ?= --vs sediment,kfake
bench: build etcd
	$(BIN)/broker bench --workload $(WORKLOAD) $(BENCH_TARGETS) --out bench/out/$(basename $(notdir $(WORKLOAD)))

# Clients from Debian packages (kcat, kafka-python, confluent-kafka-python)
# against a real broker, the Iceberg SQL catalog on a real PostgreSQL
# (Debian's postgresql), and DuckDB (npm @duckdb/node-api) reading a table
# topic's Parquet files; the Java client, Kafka's tools, Streams, Connect
# and a reference Apache Kafka (java-interop), and the Python clients from
# PyPI (python-interop). A missing package fails with the apt-get line.
interop: duckdb-node java-interop python-interop
	$(GO) test -tags interop -count=1 -timeout 40m -run Interop ./cmd/broker/ ./table/catalog/ ./interop/... ./bench/

# The pinned Maven project (interop/java/pom.xml: Kafka 4.4.0's client,
# tools, Streams, Connect and broker): compiled, with its classpath written
# to interop/java/target/classpath.txt for the Go tests and the bench suite.
java-interop:
	@command -v java >/dev/null && command -v mvn >/dev/null || \
	  { echo "make java-interop needs a JDK 17 and Maven: apt-get install -y openjdk-17-jdk-headless maven" >&2; exit 1; }
	mvn -B -q -f interop/java/pom.xml compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt

# The Python clients from PyPI (interop/python/requirements.txt, every
# version pinned) in a venv of Debian's python3 at .bin/pyvenv, unless it
# already holds exactly these requirements.
PYVENV := $(BIN)/pyvenv
python-interop:
	@if cmp -s interop/python/requirements.txt $(PYVENV)/requirements.txt; then \
	  echo "the clients of interop/python/requirements.txt are in $(PYVENV)"; \
	else \
	  echo "installing interop/python/requirements.txt into $(PYVENV)"; \
	  /usr/bin/python3 -m venv $(PYVENV) || \
	    { echo "make python-interop needs Python's venv module: apt-get install -y python3-venv" >&2; exit 1; }; \
	  $(PYVENV)/bin/pip install -q --disable-pip-version-check -r interop/python/requirements.txt && \
	  cp interop/python/requirements.txt $(PYVENV)/requirements.txt; \
	fi

# docker-compose.yml brought up for real, both profiles: the one-node broker
# (TestComposeUp: builds the image, produces from this machine, kills the
# broker container, reads every record back) and the cluster
# (TestComposeClusterUp: etcd and three brokers, produce and consume through
# each, leaders against etcd's own/ keys, one broker killed and its
# partitions taken over), each ended with `down -v`. Needs the published
# ports free (9000, 9001, 9092-9095, 9644-9647, 2379); not part of
# `make test`. With Docker's compose plugin it uses that; without, it
# installs podman and podman-compose (scripts/compose/podman-setup.sh) and
# builds stand-ins for the base images it cannot pull
# (scripts/compose/standins.sh), all kept in COMPOSE_TOOLS. A cold build of
# the image took over 40 minutes on 2 busy cores; COMPOSE_BUILD=0 reuses
# the sediment:dev image already built.
COMPOSE_TOOLS ?= $(BIN)/compose
COMPOSE_TESTS := -tags compose -count=1 -timeout 120m -run '^(TestComposeUp|TestComposeClusterUp)$$' -v ./cmd/broker/
compose:
	@if docker compose version >/dev/null 2>&1; then \
	  $(GO) test $(COMPOSE_TESTS); \
	else \
	  $(MAKE) minio && \
	  scripts/compose/podman-setup.sh $(COMPOSE_TOOLS) && \
	  CONTAINERS_CONF=$(COMPOSE_TOOLS)/containers.conf scripts/compose/standins.sh $(COMPOSE_TOOLS)/standins $(BIN)/minio && \
	  CONTAINERS_CONF=$(COMPOSE_TOOLS)/containers.conf PATH=$(COMPOSE_TOOLS)/venv/bin:$$PATH $(GO) test $(COMPOSE_TESTS); \
	fi

# DuckDB for Node, pinned, into .bin/node (the DuckDB interop test finds it
# there) unless that version is already installed.
DUCKDB_NODE_VERSION := 1.5.6-r.1
duckdb-node:
	@if [ "$$(node -p "require('$(BIN)/node/node_modules/@duckdb/node-api/package.json').version" 2>/dev/null)" = "$(DUCKDB_NODE_VERSION)" ]; then \
	  echo "@duckdb/node-api $(DUCKDB_NODE_VERSION) is in $(BIN)/node"; \
	else \
	  echo "installing @duckdb/node-api $(DUCKDB_NODE_VERSION) into $(BIN)/node"; \
	  npm install --prefix $(BIN)/node --no-save --no-audit --no-fund @duckdb/node-api@$(DUCKDB_NODE_VERSION); \
	fi

clean:
	rm -rf $(BIN) data

print-interop-pkgs:
	@echo $(INTEROP_PKGS)
