"""stampede against go-tpc 1.0.12 on one PostgreSQL: TPC-C, the same warehouses, the same
number of clients (go-tpc's threads), no keying or think times.

Both run on one database that `stampede init tpcc` loaded (go-tpc's schema), over TCP on
loopback (go-tpc speaks only TCP), alternately (stampede, go-tpc, go-tpc, stampede, ...), for
the same time each. Figures per round: tpmC as each tool reports it (New-Orders per minute),
and client CPU per transaction from the child's rusage (user + system) divided by the
transactions it completed (all five types). The medians are reported, with the ratio
stampede / go-tpc.

Runnable alone (starts its own server); `--out bench/TPCC.md` writes the results file:
    python3 bench/tpcc_case.py --stampede target/release/stampede --out bench/TPCC.md
"""

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

from sysbench_case import timed


def go_tpc_bin():
    for p in (os.environ.get("GO_TPC"), "/usr/local/bin/go-tpc"):
        if p and os.access(p, os.X_OK):
            return p
    raise SystemExit("go-tpc is not installed: scripts/install-deps.sh --tests builds it")


def commands(stampede, go_tpc, port, db, warehouses, clients, seconds, json_path):
    go = [
        go_tpc, "tpcc", "run", "-d", "postgres", "-H", "127.0.0.1", "-P", str(port),
        "-U", "postgres", "-D", db, "--conn-params", "sslmode=disable",
        "--warehouses", str(warehouses), "-T", str(clients), "--time", f"{seconds}s",
        "--interval", f"{seconds}s",
    ]
    st = [
        stampede, "run", "tpcc", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
        "-d", db, "-w", str(warehouses), "-c", str(clients), "-j", "2", "-T", str(seconds),
        "-P", "0", "--no-check", "--no-observe", "--json", json_path,
    ]
    return {"go-tpc": go, "stampede": st}


# go-tpc's closing block: "[Summary] NEW_ORDER - Takes(s): 30.0, Count: 1234, TPM: ..." per type
# (and NEW_ORDER_ERR etc. for failures), then "tpmC: 2467.3, tpmTotal: ..., efficiency: ...".
GO_SUMMARY = re.compile(r"^\[Summary\] ([A-Z_]+) - Takes\(s\): [\d.]+, Count: (\d+)", re.M)
GO_TPMC = re.compile(r"^tpmC: ([\d.]+)", re.M)


def parse_go(out):
    counts = {t: int(n) for t, n in GO_SUMMARY.findall(out) if not t.endswith("_ERR")}
    m = GO_TPMC.search(out)
    if not m or not counts:
        raise SystemExit(f"no summary in go-tpc's output:\n{out[-2000:]}")
    return float(m.group(1)), sum(counts.values())


def parse_stampede(json_path):
    with open(json_path) as f:
        r = json.load(f)
    return r["tpcc"]["tpmc"], sum(l["count"] for l in r["tpcc"]["response_limits"])


def measure(stampede, go_tpc, port, db, warehouses, clients, seconds, rounds, log=print):
    """Interleaved rounds; returns {tool: [(tpmc, cpu_us_per_txn), ...]} and the commands."""
    tmp = tempfile.mkdtemp(prefix="stampede-tpcc-")
    json_path = os.path.join(tmp, "run.json")
    cmds = commands(stampede, go_tpc, port, db, warehouses, clients, seconds, json_path)
    res = {"stampede": [], "go-tpc": []}
    for r in range(rounds):
        order = ("stampede", "go-tpc") if r % 2 == 0 else ("go-tpc", "stampede")
        for tool in order:
            out, _wall, cpu = timed(cmds[tool])
            tpmc, txns = parse_go(out) if tool == "go-tpc" else parse_stampede(json_path)
            us = cpu * 1e6 / max(txns, 1)
            res[tool].append((tpmc, us))
            log(f"  round {r + 1} {tool:9} tpmC {tpmc:10.1f}  {txns:8} txns  {us:8.1f} us CPU/txn")
    shutil.rmtree(tmp, ignore_errors=True)
    return res, cmds


def table(res):
    g_t = statistics.median(x[0] for x in res["go-tpc"])
    s_t = statistics.median(x[0] for x in res["stampede"])
    g_c = statistics.median(x[1] for x in res["go-tpc"])
    s_c = statistics.median(x[1] for x in res["stampede"])
    return "\n".join([
        "| | go-tpc 1.0.12 | stampede | stampede / go-tpc |",
        "|---|---|---|---|",
        f"| tpmC (median) | {g_t:,.1f} | {s_t:,.1f} | {s_t / g_t:.2f}x |",
        f"| client CPU per transaction, us (median) | {g_c:.1f} | {s_c:.1f} | {s_c / g_c:.2f}x |",
    ])


def write(a, res, cmds, lines):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    cpus = os.cpu_count()
    with open(a.out, "w") as f:
        f.write("# TPC-C: stampede against go-tpc 1.0.12\n\n")
        f.write("Written by `python3 bench/tpcc_case.py --out bench/TPCC.md`; never edited by hand.\n\n")
        f.write(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
        f.write(f"- machine: {cpus} CPUs, client and server on the same machine\n")
        f.write(f"- stampede: commit {commit}, release build; server: stampede's embedded PostgreSQL "
                "settings, TCP on loopback (go-tpc speaks only TCP)\n")
        f.write(f"- {a.warehouses} warehouses loaded by `stampede init tpcc`; {a.clients} clients "
                f"(go-tpc's threads); {a.rounds} interleaved rounds of {a.seconds} s; no keying or "
                "think times; medians; stampede with `--no-check --no-observe` (its checks and "
                "server sampler would count as client CPU)\n")
        f.write("- client CPU per transaction: the process's user + system time over the "
                "transactions of all five types it completed\n\n")
        f.write(table(res) + "\n\n## Rounds\n\n```\n" + "\n".join(lines) + "\n```\n\n")
        f.write("## Commands\n\n```\n")
        for tool, c in sorted(cmds.items()):
            f.write(f"{tool}: {' '.join(c)}\n")
        f.write("```\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stampede", default="target/release/stampede")
    ap.add_argument("--warehouses", type=int, default=2)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", help="write the results as Markdown to this file")
    a = ap.parse_args()
    stampede = os.path.abspath(a.stampede)
    go_tpc = go_tpc_bin()
    port = free_port()
    data = tempfile.mkdtemp(prefix="stampede-tpcc-server-")
    os.chmod(data, 0o755)
    data = os.path.join(data, "data")
    subprocess.run(
        [stampede, "server", "start", "--data-dir", data, "--set", f"port={port}",
         "--set", "listen_addresses=127.0.0.1"],
        check=True, capture_output=True,
    )
    try:
        target = ["-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]
        subprocess.run(["psql", "-qX", *target, "-d", "postgres", "-c", "create database tpcc"],
                       check=True)
        t = time.monotonic()
        subprocess.run([stampede, "init", "tpcc", "-w", str(a.warehouses), "-q", *target,
                        "-d", "tpcc"], check=True)
        print(f"loaded {a.warehouses} warehouses in {time.monotonic() - t:.1f} s")
        lines = []
        res, cmds = measure(stampede, go_tpc, port, "tpcc", a.warehouses, a.clients, a.seconds,
                            a.rounds, log=lambda s: (print(s), lines.append(s)))
        print(table(res))
        for tool, c in sorted(cmds.items()):
            print(f"{tool}: {' '.join(c)}")
        if a.out:
            write(a, res, cmds, lines)
    finally:
        subprocess.run([stampede, "server", "stop", "--data-dir", data], capture_output=True)
        shutil.rmtree(os.path.dirname(data), ignore_errors=True)


if __name__ == "__main__":
    main()
