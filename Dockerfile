# syntax=docker/dockerfile:1
# Multi-stage build of the static waitroom binary; runs as a non-root user.
# The build step is scripts/build, the same one `make build` runs.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=unknown
ARG DATE=unknown
RUN scripts/build /out/waitroom "$VERSION" "$COMMIT" "$DATE"
RUN mkdir -p /out/data && touch /out/data/.keep

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/waitroom /usr/local/bin/waitroom
COPY configs/ /etc/waitroom/
# The embedded store's journals; mount a volume here.
COPY --from=build --chown=65532:65532 /out/data /var/lib/waitroom
USER 65532:65532
WORKDIR /var/lib/waitroom
# 8080: the proxy (serve.listen), 9090: the operator API (admin.listen),
# 8082: the seat-hold sidecar (inventory.listen). Configs inside a container
# must listen on 0.0.0.0, not the examples' 127.0.0.1.
EXPOSE 8080 9090 8082
ENTRYPOINT ["/usr/local/bin/waitroom"]
# The waiting-room proxy, from a configuration mounted at this path:
#   docker run -v $PWD/waitroom.yaml:/etc/waitroom/waitroom.yaml:ro -p 8080:8080 IMAGE
# Other commands replace it, e.g. `IMAGE demo --listen 0.0.0.0:8080` or
# `IMAGE inventory -c /etc/waitroom/inventory.yaml --listen :8082`.
CMD ["serve", "-c", "/etc/waitroom/waitroom.yaml"]
