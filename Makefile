# Sediment build and test entry points. `make test` is what CI runs; it
# installs what the tests need itself.

GO      ?= go
BIN     := $(CURDIR)/.bin
export PATH := $(BIN):$(PATH)
export CGO_ENABLED := 1

.PHONY: test vet unit fuzz-smoke build interop clean

test: vet unit

build:
	$(GO) build -o $(BIN)/broker ./cmd/broker

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Every package, race detector on. Integration tests start real clients
# (franz-go, sarama, confluent-kafka-go with its bundled librdkafka) against
# real brokers on loopback.
unit:
	$(GO) test -race -count=1 -timeout 40m ./...

# A short run of every fuzz target beyond its committed seed corpus.
FUZZTIME ?= 20s
fuzz-smoke:
	$(GO) test ./protocol/ -run '^$$' -fuzz FuzzDecodeRequest -fuzztime $(FUZZTIME)
	$(GO) test ./storage/partition/ -run '^$$' -fuzz FuzzParseBatch -fuzztime $(FUZZTIME)
	$(GO) test ./storage/partition/ -run '^$$' -fuzz FuzzParseFooter -fuzztime $(FUZZTIME)
	$(GO) test ./storage/wal/ -run '^$$' -fuzz FuzzRecover -fuzztime $(FUZZTIME)

clean:
	rm -rf $(BIN) data
