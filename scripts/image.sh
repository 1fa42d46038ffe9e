#!/usr/bin/env bash
# Builds stampede's container image offline: no base image, no registry. It takes a stampede
# binary (builds one with `cargo build --release -p stampede`, or takes --binary PATH), copies it
# with the shared libraries `ldd` says it loads (and the dynamic loader) into a build context,
# and runs `podman build` on a `FROM scratch` build file. The image runs `stampede` as a fleet's
# process does (`stampede fleet manifest`): against a remote server, which it reaches over TCP
# (the embedded servers need PostgreSQL's or MariaDB's binaries, which are not in the image).
# The Containerfile at the repository's root builds the same layout from base images, for
# machines with a network.
#
# What the binary needs at run time besides its libraries, and so what the image holds:
# - /etc/ssl/certs/ca-certificates.crt (copied from this machine when present): the roots that
#   `sslmode=verify-full` / `--ssl-mode=VERIFY_IDENTITY` check a server against
#   (rustls-native-certs reads that file, or SSL_CERT_FILE);
# - /etc/nsswitch.conf `hosts: files dns`: glibc's own resolvers (built into libc.so.6 since
#   2.34, so no libnss_* to copy) in the usual order; Kubernetes mounts /etc/hosts and
#   /etc/resolv.conf into every container;
# - /tmp (mode 1777); no /etc/passwd: the image runs as uid 65534, which has no name, so give
#   the user name with -U (or PGUSER), as the manifest's recipe does (libpq alike fails without
#   a name for its uid).
#
# Usage: scripts/image.sh [--binary PATH] [--tag IMAGE]... [--context DIR]
#   --binary PATH   the binary to put in the image (env STAMPEDE_BIN); default: build a release
#   --tag IMAGE     name the image IMAGE (repeat for more; env STAMPEDE_IMAGE, one name);
#                   default: stampede:VERSION (VERSION-gSHA when built here from a git tree) and
#                   stampede:latest
#   --context DIR   build in DIR and keep it (default: a temporary directory, removed after)
# Environment: PODMAN (default `podman`; e.g. `podman --storage-driver vfs` where overlay
# cannot be mounted).
# Prints the image's name (the first tag) as the last line of stdout; everything else goes to
# stderr.
#
# Why this works where `podman run` does not: the build file has no RUN step, so the build
# starts no container (no OCI runtime, no resource limits to set); building, `podman create`
# and `podman export` need only the storage, which the default overlay driver provided here.
set -euo pipefail

say() { echo "image.sh: $*" >&2; }
die() { say "$*"; exit 1; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${STAMPEDE_BIN:-}
TAGS=()
[ -n "${STAMPEDE_IMAGE:-}" ] && TAGS+=("$STAMPEDE_IMAGE")
CONTEXT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) BIN=${2:?--binary needs a path}; shift 2 ;;
    --binary=*) BIN=${1#*=}; shift ;;
    --tag) TAGS+=("${2:?--tag needs an image name}"); shift 2 ;;
    --tag=*) TAGS+=("${1#*=}"); shift ;;
    --context) CONTEXT=${2:?--context needs a directory}; shift 2 ;;
    --context=*) CONTEXT=${1#*=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 0 ;;
    *) die "unknown argument $1 (--help)" ;;
  esac
done

read -r -a PODMAN_CMD <<<"${PODMAN:-podman}"
command -v "${PODMAN_CMD[0]}" >/dev/null \
  || die "${PODMAN_CMD[0]} not found (scripts/install-deps.sh --tests installs podman)"
command -v ldd >/dev/null || die "ldd not found (Debian's libc-bin)"

SHA=""
if [ -z "$BIN" ]; then
  say "building the release binary (cargo build --release -p stampede)"
  (cd "$ROOT" && cargo build --release -p stampede >&2)
  TARGET_DIR=${CARGO_TARGET_DIR:-$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps \
    | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')}
  BIN=$TARGET_DIR/release/stampede
  SHA=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || true)
fi
[ -x "$BIN" ] || die "no executable at $BIN"

if [ ${#TAGS[@]} -eq 0 ]; then
  VERSION=$("$BIN" --version | awk '{print $2}')
  [ -n "$VERSION" ] || die "$BIN --version said no version"
  TAGS=("stampede:$VERSION${SHA:+-g$SHA}" "stampede:latest")
fi

if [ -n "$CONTEXT" ]; then
  rm -rf "$CONTEXT" && mkdir -p "$CONTEXT"
else
  CONTEXT=$(mktemp -d "${TMPDIR:-/tmp}/stampede-image.XXXXXX")
  trap 'rm -rf "$CONTEXT"' EXIT
fi
ROOTFS=$CONTEXT/rootfs
mkdir -p "$ROOTFS/usr/local/bin" "$ROOTFS/etc/ssl/certs" "$ROOTFS/tmp"
chmod 1777 "$ROOTFS/tmp"

# The binary without its DWARF (a debug build's is hundreds of MB): symbols stay, so a panic's
# backtrace still names its functions.
if command -v strip >/dev/null; then
  strip --strip-debug -o "$ROOTFS/usr/local/bin/stampede" "$BIN"
else
  cp "$BIN" "$ROOTFS/usr/local/bin/stampede"
fi
chmod 0755 "$ROOTFS/usr/local/bin/stampede"

# Every library at the path the loader finds it at (`name => /path (addr)`), and the loader
# itself at the path the binary names (`/lib64/ld-linux-x86-64.so.2 (addr)`); the vDSO is the
# kernel's. A static binary has none: ldd says so and exits non-zero.
libs=$(ldd "$BIN" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' || true)
for lib in $libs; do
  mkdir -p "$ROOTFS$(dirname "$lib")"
  cp -L "$lib" "$ROOTFS$lib"
done
[ -n "$libs" ] || say "$BIN loads no shared libraries (static): none copied"

if [ -r /etc/ssl/certs/ca-certificates.crt ]; then
  cp -L /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/"
else
  say "no /etc/ssl/certs/ca-certificates.crt here: the image has no CA roots (sslmode=verify-full needs sslrootcert)"
fi
echo "hosts: files dns" >"$ROOTFS/etc/nsswitch.conf"

cat >"$CONTEXT/Containerfile" <<'EOF'
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
USER 65534:65534
ENTRYPOINT ["/usr/local/bin/stampede"]
EOF

# --layers=false: one image, no intermediate images kept as a cache for the next build.
tag_args=()
for t in "${TAGS[@]}"; do tag_args+=(--tag "$t"); done
say "podman build ${TAGS[*]} from $BIN ($(echo $libs | wc -w) libraries)"
"${PODMAN_CMD[@]}" build --quiet --layers=false "${tag_args[@]}" -f "$CONTEXT/Containerfile" "$CONTEXT" >&2
echo "${TAGS[0]}"
