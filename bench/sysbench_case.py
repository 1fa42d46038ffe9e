"""stampede against sysbench 1.0.20 (pgsql driver) on one PostgreSQL: issue 5's comparison.

Each tool runs on data the *other* tool loaded: `sysbench ... prepare` fills database sb_sysbench
and stampede runs there; `stampede init oltp` fills database sb_stampede and sysbench runs there.
Rounds are interleaved (stampede, sysbench, stampede, ...), each test runs for the same time with
the same number of clients/threads, and the reported figure is the median transactions/s, plus
client CPU per transaction from the child's rusage (user + system).

Used by bench/harness.py (case "sysbench"); runnable alone for a quick look:
    python3 bench/sysbench_case.py --stampede target/release/stampede --host DIR --port N
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import time

TESTS = ("oltp_point_select", "oltp_read_write")


def timed(cmd, env=None):
    """Run cmd; return (stdout, wall seconds, child CPU seconds user+system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.stdout, wall, cpu


def psql(host, port, sql, db="postgres"):
    subprocess.run(
        ["psql", "-qX", "-h", host, "-p", str(port), "-U", "postgres", "-d", db, "-c", sql],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def sysbench_common(host, port, db, tables, size):
    return [
        "--db-driver=pgsql",
        f"--pgsql-host={host}",
        f"--pgsql-port={port}",
        "--pgsql-user=postgres",
        f"--pgsql-db={db}",
        f"--tables={tables}",
        f"--table-size={size}",
    ]


def commands(stampede, host, port, tables, size, clients, seconds):
    """The exact command lines, by (tool, test): each tool on the other tool's data."""
    out = {}
    for test in TESTS:
        out[("sysbench", test)] = (
            ["sysbench", test]
            + sysbench_common(host, port, "sb_stampede", tables, size)
            + [f"--threads={clients}", f"--time={seconds}", "--report-interval=0", "run"]
        )
        out[("stampede", test)] = [
            stampede, "run", test,
            "-h", host, "-p", str(port), "-U", "postgres", "-d", "sb_sysbench",
            f"--tables={tables}", f"--table-size={size}",
            f"--threads={clients}", "-j", "2", f"--time={seconds}",
            "--no-check", "--no-observe",
        ]
    return out


def load(stampede, host, port, tables, size):
    for db in ("sb_sysbench", "sb_stampede"):
        psql(host, port, f"drop database if exists {db}")
        psql(host, port, f"create database {db}")
    subprocess.run(
        ["sysbench", "oltp_common"] + sysbench_common(host, port, "sb_sysbench", tables, size)
        + ["prepare"],
        check=True, stdout=subprocess.DEVNULL,
    )
    subprocess.run(
        [stampede, "init", "oltp", "-h", host, "-p", str(port), "-U", "postgres",
         "-d", "sb_stampede", f"--tables={tables}", f"--table-size={size}"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    for db in ("sb_sysbench", "sb_stampede"):
        psql(host, port, "vacuum analyze", db)
        psql(host, port, "checkpoint", db)


# sysbench's "transactions: N (X per sec.)" line; stampede prints the same block after its own
# summary (whose "number of failed transactions: 0 (0.000%)" must not match).
TPS = re.compile(r"^\s+transactions:\s+(\d+)\s+\(([\d.]+) per sec", re.M)


def measure(stampede, host, port, tables, size, clients, seconds, rounds, log=print):
    """Interleaved rounds; returns {test: {tool: [(tps, cpu_us_per_txn), ...]}} and the commands."""
    load(stampede, host, port, tables, size)
    cmds = commands(stampede, host, port, tables, size, clients, seconds)
    res = {t: {"stampede": [], "sysbench": []} for t in TESTS}
    for r in range(rounds):
        for test in TESTS:
            order = ("stampede", "sysbench") if r % 2 == 0 else ("sysbench", "stampede")
            for tool in order:
                out, _wall, cpu = timed(cmds[(tool, test)])
                m = TPS.search(out)
                if not m:
                    raise SystemExit(f"no transactions line in {tool} output:\n{out[-2000:]}")
                txns, tps = int(m.group(1)), float(m.group(2))
                res[test][tool].append((tps, cpu * 1e6 / max(txns, 1)))
                log(f"  round {r + 1} {test:18} {tool:9} {tps:10.1f} tps {cpu * 1e6 / max(txns, 1):8.1f} us/txn")
    return res, cmds


def table(res):
    lines = [
        "| test | sysbench tps | stampede tps | ratio | sysbench CPU us/txn | stampede CPU us/txn | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for test, by in res.items():
        s_tps = statistics.median(x[0] for x in by["sysbench"])
        m_tps = statistics.median(x[0] for x in by["stampede"])
        s_cpu = statistics.median(x[1] for x in by["sysbench"])
        m_cpu = statistics.median(x[1] for x in by["stampede"])
        lines.append(
            f"| {test} | {s_tps:,.1f} | {m_tps:,.1f} | {m_tps / s_tps:.2f}x | {s_cpu:.1f} | {m_cpu:.1f} | {m_cpu / s_cpu:.2f}x |"
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stampede", default="target/release/stampede")
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=5432)
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=100000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    res, cmds = measure(os.path.abspath(a.stampede), a.host, a.port, a.tables, a.table_size,
                        a.clients, a.seconds, a.rounds)
    print(table(res))
    for (tool, test), c in sorted(cmds.items()):
        print(f"{tool} {test}: {' '.join(c)}")


if __name__ == "__main__":
    main()
