#!/usr/bin/env bash
# Quick start, command 1 of 2: install what is missing, build stampede, run the default benchmark
# (TPC-B, pgbench's tpcb-like, on a private PostgreSQL that stampede starts and removes).
# Extra arguments go to `stampede`, e.g. `./quickstart.sh run -c 16 -j 2 -T 30 -P 5`.
set -euo pipefail
cd "$(dirname "$0")"
./scripts/install-deps.sh
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
# The first build compiles about 330 crates: some 6 minutes on 2 cores, seconds afterwards.
# cargo's own progress (a line per crate, then the bar) shows where it is.
if [ ! -x target/release/stampede ]; then
    echo "quickstart: building stampede (release; the first build takes about 6 minutes on 2 cores)" >&2
fi
cargo build --release -p stampede
exec ./target/release/stampede "$@"
