#!/usr/bin/env bash
# Quick start, command 2 of 2: the whole test suite. Tests that need PostgreSQL start their own
# private servers from the machine's binaries (installed by scripts/install-deps.sh); under CI a
# test that cannot find a server fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh --tests
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
cargo test --workspace --all-targets "$@"
