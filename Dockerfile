# Sediment broker image: a static binary (CGO_ENABLED=0) on a small base,
# run as an unprivileged user. docker-compose.yml builds it; by hand:
#   docker build -t sediment .
#   docker run -p 9092:9092 -p 9644:9644 sediment serve --listen 0.0.0.0:9092 \
#     --advertise localhost:9092 --http-listen 0.0.0.0:9644 --data-dir /data

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/broker ./cmd/broker

# Alpine rather than scratch: its busybox wget serves the healthcheck.
FROM alpine:3.22
RUN addgroup -S -g 10001 sediment \
 && adduser -S -D -H -u 10001 -G sediment sediment \
 && mkdir -p /data \
 && chown sediment:sediment /data
COPY --from=build /out/broker /usr/local/bin/broker
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 9092 9644
ENTRYPOINT ["/usr/local/bin/broker"]
CMD ["serve", "--listen", "0.0.0.0:9092", "--http-listen", "0.0.0.0:9644", "--data-dir", "/data"]
