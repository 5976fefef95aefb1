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
EXPOSE 8082
ENTRYPOINT ["/usr/local/bin/waitroom"]
# The seat-hold sidecar. `waitroom serve` (the proxy) becomes the default
# command when it lands; until then the image runs the sidecar.
CMD ["inventory", "-c", "/etc/waitroom/inventory.yaml", "--listen", ":8082"]
