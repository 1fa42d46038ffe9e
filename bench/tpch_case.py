"""TPC-H load time: `stampede init tpch --scale SF` against psql's `\\copy` of the same rows,
written beforehand by `tpchgen-cli` (PyPI's, 4.0.0: the same generator as stampede's), into the
same server.

Both loads end in the same state: the eight tables of the spec's types (stampede's DDL for
both), their rows, the spec's primary keys built after the data, `VACUUM ANALYZE`. stampede
generates its rows as it loads them (no files); psql reads the CSV files `tpchgen-cli csv`
wrote before the timing starts (generating them is not timed), with one `\\copy` per table in
one session, then the keys and the vacuum in the same order. Each round times each load from
an empty database (DROP DATABASE / CREATE DATABASE before it, not timed), the tools
alternating; the medians are reported, with the ratio psql / stampede (above 1: stampede is
faster), for the whole load and for the data alone (stampede's "client-side generate" step
against the `\\copy`s).

Runnable alone (starts its own server); `--out bench/TPCH.md` writes the results file:
    python3 bench/tpch_case.py --stampede target/release/stampede --out bench/TPCH.md
"""

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]
KEYS = {
    "region": "r_regionkey", "nation": "n_nationkey", "supplier": "s_suppkey",
    "customer": "c_custkey", "part": "p_partkey", "partsupp": "ps_partkey, ps_suppkey",
    "orders": "o_orderkey", "lineitem": "l_orderkey, l_linenumber",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p


def timed(cmd):
    t = time.monotonic()
    p = run(cmd)
    return time.monotonic() - t, p


# stampede's closing line (pgbench's format): "done in 12.34 s (drop tables 0.01 s, ...)".
STEP = re.compile(r"([a-z -]+?) ([\d.]+) s")


def steps_of(stderr):
    line = next(l for l in stderr.splitlines() if l.startswith("done in "))
    inner = line[line.index("(") + 1:line.rindex(")")]
    return {m.group(1).strip(): float(m.group(2)) for m in STEP.finditer(inner)}


def fresh(psql, db):
    run(psql + ["-d", "postgres", "-c", f"DROP DATABASE IF EXISTS {db}"])
    run(psql + ["-d", "postgres", "-c", f"CREATE DATABASE {db}"])
    run(psql + ["-d", "postgres", "-c", "CHECKPOINT"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stampede", default="target/release/stampede")
    ap.add_argument("--scale", default="1")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="stampede's -j")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", help="write the results as Markdown to this file")
    a = ap.parse_args()
    stampede = os.path.abspath(a.stampede)
    cli = shutil.which("tpchgen-cli") or os.path.expanduser("~/.local/bin/tpchgen-cli")
    if not os.access(cli, os.X_OK):
        raise SystemExit("tpchgen-cli is not installed: scripts/install-deps.sh --tests installs it")
    port = free_port()
    top = tempfile.mkdtemp(prefix="stampede-tpch-bench-")
    os.chmod(top, 0o755)
    data = os.path.join(top, "data")
    files = os.path.join(top, "csv")
    os.makedirs(files)
    t = time.monotonic()
    run([cli, "csv", "-s", a.scale, "-q", "-o", files])
    print(f"tpchgen-cli csv -s {a.scale}: {time.monotonic() - t:.1f} s (not timed below)")
    run([stampede, "server", "start", "--data-dir", data, "--set", f"port={port}",
         "--set", "listen_addresses=127.0.0.1"])
    target = ["-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]
    psql = ["psql", "-qX", "-v", "ON_ERROR_STOP=1", *target]
    lines, res = [], {"stampede": [], "psql": []}
    cmds = {}
    try:
        # stampede's DDL, taken from a load of its own (the comments dropped with the rows).
        fresh(psql, "tpch")
        run([stampede, "init", "tpch", "--scale", "0.01", "-q", "-n", *target, "-d", "tpch"])
        ddl = run(["pg_dump", *target, "-d", "tpch", "--schema-only", "--no-comments",
                   "--section=pre-data", "--no-owner"]).stdout
        ddl_file = os.path.join(top, "ddl.sql")
        with open(ddl_file, "w") as f:
            f.write(ddl)
        copy_file = os.path.join(top, "copy.sql")
        with open(copy_file, "w") as f:
            for tb in TABLES:
                f.write(f"\\copy {tb} FROM '{files}/{tb}.csv' WITH (FORMAT csv, HEADER true)\n")
        keys_file = os.path.join(top, "keys.sql")
        with open(keys_file, "w") as f:
            for tb in reversed(TABLES):
                f.write(f"ALTER TABLE {tb} ADD PRIMARY KEY ({KEYS[tb]});\n")
        vac_file = os.path.join(top, "vacuum.sql")
        with open(vac_file, "w") as f:
            for tb in reversed(TABLES):
                f.write(f"VACUUM ANALYZE {tb};\n")
        st = [stampede, "init", "tpch", "--scale", a.scale, "-j", str(a.jobs), "-q", *target,
              "-d", "tpch"]
        ps = {k: psql + ["-d", "tpch", "-f", f] for k, f in
              (("create", ddl_file), ("copy", copy_file), ("keys", keys_file),
               ("vacuum", vac_file))}
        cmds = {"stampede": " ".join(st),
                "psql": "; ".join(" ".join(c) for c in ps.values())}
        for r in range(a.rounds):
            order = ("stampede", "psql") if r % 2 == 0 else ("psql", "stampede")
            for tool in order:
                fresh(psql, "tpch")
                if tool == "stampede":
                    total, p = timed(st)
                    s = steps_of(p.stderr)
                    rows = s.get("client-side generate", float("nan"))
                    detail = ", ".join(f"{k} {v:.1f}" for k, v in s.items())
                else:
                    parts = {k: timed(c)[0] for k, c in ps.items()}
                    total = sum(parts.values())
                    rows = parts["copy"]
                    detail = ", ".join(f"{k} {v:.1f}" for k, v in parts.items())
                res[tool].append((total, rows))
                line = f"round {r + 1} {tool:8} {total:7.1f} s (data {rows:.1f} s; {detail})"
                print(line)
                lines.append(line)
    finally:
        subprocess.run([stampede, "server", "stop", "--data-dir", data], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)
    s_all = statistics.median(x[0] for x in res["stampede"])
    p_all = statistics.median(x[0] for x in res["psql"])
    s_rows = statistics.median(x[1] for x in res["stampede"])
    p_rows = statistics.median(x[1] for x in res["psql"])
    table = "\n".join([
        f"| scale {a.scale} | psql \\copy of tpchgen-cli's files | stampede init tpch -j {a.jobs} "
        "| psql / stampede |",
        "|---|---|---|---|",
        f"| whole load, s (median) | {p_all:.1f} | {s_all:.1f} | {p_all / s_all:.2f}x |",
        f"| the rows alone, s (median) | {p_rows:.1f} | {s_rows:.1f} | {p_rows / s_rows:.2f}x |",
    ])
    print(table)
    for k, c in cmds.items():
        print(f"{k}: {c}")
    if a.out:
        commit = run(["git", "rev-parse", "--short", "HEAD"]).stdout.strip()
        with open(a.out, "w") as f:
            f.write("# TPC-H load: stampede init tpch against psql's \\copy of tpchgen-cli's files\n\n")
            f.write("Written by `python3 bench/tpch_case.py --out bench/TPCH.md`; never edited by hand.\n\n")
            f.write(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            f.write(f"- machine: {os.cpu_count()} CPUs, client and server on the same machine; "
                    f"load average at the end {load} (other work shares the machine)\n")
            f.write(f"- stampede: commit {commit}, {os.path.relpath(stampede)}; server: stampede's "
                    "embedded PostgreSQL settings, TCP on loopback\n")
            f.write("- both: the same DDL, rows, primary keys after the data and VACUUM ANALYZE; "
                    "the CSV files written before the timing\n\n")
            f.write(table + "\n\n## Rounds\n\n```\n" + "\n".join(lines) + "\n```\n\n")
            f.write("## Commands\n\n```\n")
            for k, c in cmds.items():
                f.write(f"{k}: {c}\n")
            f.write("```\n")


if __name__ == "__main__":
    main()
