#!/usr/bin/env bash
# Installs what stampede needs on Debian/Ubuntu and is missing: PostgreSQL server binaries (the
# embedded default and the test suite start private servers from them), a C toolchain (mimalloc,
# ring), and Rust if cargo is absent. With --tests, also what only the test suite uses: openssl
# (TLS tests), sysbench (OLTP comparisons) and chromium (the HTML test) where the distribution
# packages it, MariaDB with Galera (the MySQL protocol's tests), pgbouncer, pg_auto_failover,
# pgreplay (the replay benchmark), podman (the container image's test), moto's server (the
# CloudWatch test) and tpchgen-cli (the TPC-H load's comparison), both from PyPI.
# Idempotent: installs nothing when all is there.
set -euo pipefail

TESTS=0
[ "${1:-}" = "--tests" ] && TESTS=1

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "install-deps: not root and no sudo; install postgresql-15 build-essential openssl yourself" >&2
  fi
fi

have_pg() {
  ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1
}

missing=()
have_pg || missing+=(pg)
command -v cc >/dev/null || missing+=(build-essential)
[ $TESTS = 1 ] && { command -v openssl >/dev/null || missing+=(openssl); }
command -v pkg-config >/dev/null || missing+=(pkg-config)
# sysbench 1.0.20 (pgsql driver included): the OLTP tests compare schemas and runs with it.
[ $TESTS = 1 ] && { command -v sysbench >/dev/null || missing+=(sysbench); }
# MariaDB (Debian's mariadb-server and mariadb-client, 10.11 on Debian 12): the MySQL protocol's
# tests start private servers from its binaries (crates/testkit/src/mariadb.rs). The package's
# system service is never started (policy-rc.d below); the tests use their own data directories.
[ $TESTS = 1 ] && { [ -x /usr/sbin/mariadbd ] && command -v mariadb >/dev/null || missing+=(mariadb-server mariadb-client); }
# Galera (Debian's galera-4 provider) and what the rsync state transfer runs (rsync, and ss from
# iproute2 or lsof): the tests' private Galera clusters (crates/testkit/src/galera.rs). Debian's
# mariadb-server depends on all of them; checked on their own for a MariaDB installed otherwise.
[ $TESTS = 1 ] && { [ -e /usr/lib/galera/libgalera_smm.so ] || missing+=(galera-4); }
[ $TESTS = 1 ] && { command -v rsync >/dev/null || missing+=(rsync); }
[ $TESTS = 1 ] && { command -v ss >/dev/null || command -v lsof >/dev/null || missing+=(iproute2); }
# pgbouncer: the many-connections test and bench/run start a private one (transaction pooling).
# Its postinst would start a system service on port 6432; the policy-rc.d below stops that (in a
# container without an init it could not start anyway), and ours never uses that port.
[ $TESTS = 1 ] && { [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer); }
# pg_auto_failover (Debian's pg_autoctl and the monitor's pgautofailover extension for
# postgresql-15): the planned-failover test's private formation (crates/testkit/src/autofailover.rs).
# Neither package starts a service; the test runs its own monitor and nodes.
[ $TESTS = 1 ] && { command -v pg_autoctl >/dev/null || missing+=(pg-auto-failover-cli); }
[ $TESTS = 1 ] && { ls /usr/share/postgresql/*/extension/pgautofailover.control >/dev/null 2>&1 \
  || missing+=(pgaf); }
# pgreplay (Debian's 1.2): bench/run's replay comparison replays the same log with it.
[ $TESTS = 1 ] && { command -v pgreplay >/dev/null || missing+=(pgreplay); }
# podman (Debian's 4.3): crates/stampede/tests/image.rs builds the offline image with
# scripts/image.sh and runs a fleet from its exported file system.
[ $TESTS = 1 ] && { command -v podman >/dev/null || missing+=(podman); }
command -v cargo >/dev/null || [ -x "$HOME/.cargo/bin/cargo" ] || missing+=(rust)

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  pkgs=()
  for m in "${missing[@]}"; do
    case "$m" in
      pg)
        # Debian 12's postgresql-15; elsewhere the distribution's default major version.
        if apt-cache show postgresql-15 >/dev/null 2>&1; then pkgs+=(postgresql-15); else pkgs+=(postgresql); fi
        ;;
      rust) pkgs+=(cargo rustc) ;;
      # The monitor's extension for postgresql-15, where the distribution has it (after update).
      pgaf)
        if apt-cache show postgresql-15-auto-failover >/dev/null 2>&1; then
          pkgs+=(postgresql-15-auto-failover)
        fi
        ;;
      *) pkgs+=("$m") ;;
    esac
  done
  # Only the binaries are needed: don't let the package start a system cluster we never use.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
    $SUDO chmod +x /usr/sbin/policy-rc.d
    trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi

# Headless Chromium for the HTML report test (crates/stampede/tests/html_in_chromium.rs), when
# the distribution packages it (Debian's `chromium`; Ubuntu ships only a snap stub, so skip it).
if [ $TESTS = 1 ] && ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  apt-cache show chromium >/dev/null 2>&1 || $SUDO apt-get update -qq || true
  if apt-cache show chromium >/dev/null 2>&1 && ! apt-cache show chromium 2>/dev/null | grep -q 'snap'; then
    echo "install-deps: installing chromium" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "install-deps: no chromium package here; the HTML test skips (fails under CI=true)" >&2
  fi
fi

# moto's server (PyPI `moto[server]`, with boto3): a local CloudWatch-compatible server for the
# `--cloudwatch` test (crates/stampede/tests/cloudwatch.rs), which starts it on a loopback port.
# Installed for the user with pip when `moto_server` is not on PATH nor in ~/.local/bin (the
# test looks there too; python3-pip from Debian if pip is missing; `--break-system-packages`
# where the system Python refuses user installs). Held at 5.2.5, the release the test was run
# against (its CloudWatch speaks awsQuery and JSON, not RPC v2 CBOR: see crates/stampede's
# Cargo.toml on the SDK's version).
if [ $TESTS = 1 ] && ! command -v moto_server >/dev/null && [ ! -x "$HOME/.local/bin/moto_server" ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "install-deps: installing python3-pip (for moto)" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq || true
    $SUDO apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  echo "install-deps: installing moto[server] (pip)" >&2
  MOTO='moto[server]==5.2.5'
  python3 -m pip install -q --user "$MOTO" 2>/dev/null \
    || python3 -m pip install -q --user --break-system-packages "$MOTO" \
    || python3 -m pip install -q "$MOTO"
fi

# tpchgen-cli 4.0.0 (PyPI; the same dbgen port as the `tpchgen` crate `stampede init tpch`
# uses): crates/stampede/tests/tpch_load.rs loads its CSV files with psql's \copy and compares
# each table with stampede's load; bench/tpch_case.py times the two loads. Installed for the user
# with pip, as moto's server above.
if [ $TESTS = 1 ] && ! command -v tpchgen-cli >/dev/null && [ ! -x "$HOME/.local/bin/tpchgen-cli" ]; then
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "install-deps: installing python3-pip (for tpchgen-cli)" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq || true
    $SUDO apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  fi
  echo "install-deps: installing tpchgen-cli (pip)" >&2
  TPCHGEN='tpchgen-cli==4.0.0'
  python3 -m pip install -q --user "$TPCHGEN" 2>/dev/null \
    || python3 -m pip install -q --user --break-system-packages "$TPCHGEN" \
    || python3 -m pip install -q "$TPCHGEN"
fi

# go-tpc 1.0.12 (TPC-C's peer: tests/tpcc_cli.rs runs its `check` on stampede's data and runs
# stampede on data it prepared; bench/ compares the two), built from the Go module proxy into
# /usr/local/bin. `go install ...@latest` is refused by the proxy here, so the module is
# downloaded at its version and built from a writable copy.
if [ $TESTS = 1 ] && [ ! -x /usr/local/bin/go-tpc ]; then
  GO=$(command -v go || ls /usr/local/go/bin/go 2>/dev/null || true)
  if [ -z "$GO" ]; then
    echo "install-deps: installing golang-go (to build go-tpc)" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get install -y -qq --no-install-recommends golang-go >/dev/null
    GO=$(command -v go)
  fi
  echo "install-deps: building go-tpc 1.0.12" >&2
  work=$(mktemp -d)
  dir=$(GOFLAGS=-mod=mod "$GO" mod download -json github.com/pingcap/go-tpc@v1.0.12 \
    | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  cp -r "$dir" "$work/go-tpc" && chmod -R u+w "$work/go-tpc"
  (cd "$work/go-tpc" && GOFLAGS=-mod=mod "$GO" build -o "$work/go-tpc-bin" ./cmd/go-tpc)
  $SUDO install -m 0755 "$work/go-tpc-bin" /usr/local/bin/go-tpc
  rm -rf "$work"
fi
