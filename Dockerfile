# backupweb in a container: a static binary on a distroless-style image
# built from scratch, running as an unprivileged user (65532).
#
#   docker build -t backupweb .
#   docker run -d --name backupweb -p 127.0.0.1:8080:8080 \
#     -v /srv/backupweb:/etc/backupweb:ro -v /srv/backups:/backups:ro \
#     -v backupweb-state:/state --env-file /srv/backupweb/env backupweb
#
# The built-in configuration listens on 0.0.0.0:8080 (the container's own
# network) with no authentication, so the image refuses to start with it
# (BACKUPWEB_ALLOW_OPEN=0): mount a folder holding your backupweb.ini and
# user file at /etc/backupweb (docs/operations.md, "Docker"), or run with
# -e BACKUPWEB_ALLOW_OPEN=1 if everyone who can reach it may read every
# backup.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/backupweb/backupweb/internal/buildinfo.Version=${VERSION}" \
      -o /out/backupweb ./cmd/backupweb \
 && mkdir -p /out/state /out/backups \
 && printf '[server]\nlisten = 0.0.0.0:8080\nstate_dir = /state\n\n[backups]\ndir = /backups\n' >/out/backupweb.ini

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/backupweb /usr/bin/backupweb
COPY --from=build --chown=65532:65532 /out/backupweb.ini /etc/backupweb/backupweb.ini
COPY --from=build --chown=65532:65532 /out/state /state
COPY --from=build /out/backups /backups
USER 65532:65532
ENV BACKUPWEB_ALLOW_OPEN=0
EXPOSE 8080
VOLUME ["/state"]
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/bin/backupweb", "healthcheck", "-url", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/usr/bin/backupweb"]
CMD ["serve", "-config", "/etc/backupweb/backupweb.ini"]
