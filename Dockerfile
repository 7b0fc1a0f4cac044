# keyreg's container image: distroless static, non-root, CA certificates
# included (docs/fleet.md).
#
# The last stage, release, is what goreleaser builds (.goreleaser.yaml,
# dockers_v2): it copies the static binary goreleaser built for the
# platform ($TARGETPLATFORM/keyreg in its build context), so the image holds
# the release binary itself. To build from source without goreleaser:
#
#   docker build --target source -t keyreg:dev .
#
# The registry is read from /work: mount it (docker run -v "$PWD:/work:ro"
# ghcr.io/keyreg/keyreg lint) or bake it in (FROM ghcr.io/keyreg/keyreg,
# COPY keys.yaml /work/keys.yaml).

# build: the same flags as .goreleaser.yaml's build (CGO off, -trimpath,
# -X main.version).
FROM golang:1.26 AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/keyreg ./cmd/keyreg

# source: the image from a source build.
FROM gcr.io/distroless/static-debian12:nonroot AS source
COPY --from=build /out/keyreg /usr/bin/keyreg
WORKDIR /work
USER nonroot:nonroot
ENTRYPOINT ["/usr/bin/keyreg"]

# release: the image goreleaser publishes, from the release binary.
FROM gcr.io/distroless/static-debian12:nonroot AS release
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/keyreg /usr/bin/keyreg
WORKDIR /work
USER nonroot:nonroot
ENTRYPOINT ["/usr/bin/keyreg"]
