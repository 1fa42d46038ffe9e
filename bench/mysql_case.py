"""stampede against sysbench 1.0.20 (mysql driver) on one MariaDB: issue 15's comparison.

Same method as bench/sysbench_case.py (the pgsql comparison): each tool runs on the tables the
*other* tool loaded (`sysbench ... prepare` fills database sb_sysbench, `stampede init oltp`
fills sb_stampede), rounds are interleaved (stampede, sysbench, sysbench, stampede, ...), every
run has the same clients and seconds, and the figures are the median transactions/s and the
median client CPU per transaction (user + system of the child, from rusage).

The server is a private MariaDB started here from Debian's mariadb-server binaries (a temporary
data directory, a unix socket, no TCP), unless --socket names a running one (user root, no
password). Both tools connect over the unix socket, as a local benchmark would.

    python3 bench/mysql_case.py --stampede target/release/stampede
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

from io_modes_case import build_floor
from sysbench_case import timed

TESTS = ("oltp_point_select", "oltp_read_write")
# sysbench's "transactions: N (X per sec.)" line; stampede prints the same block.
TPS = re.compile(r"^\s+transactions:\s+(\d+)\s+\(([\d.]+) per sec", re.M)


class MariaDb:
    """A private server: its own data directory and socket, stopped and removed at the end."""

    def __init__(self, buffer_pool="1G"):
        self.dir = tempfile.mkdtemp(prefix="stampede-bench-mariadb-")
        self.socket = os.path.join(self.dir, "mysqld.sock")
        user = ["--user=mysql"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "mysql", "mysql")
        subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--datadir={self.dir}/data",
             "--auth-root-authentication-method=normal"] + user,
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={self.dir}/data", f"--socket={self.socket}",
             "--skip-networking", f"--innodb-buffer-pool-size={buffer_pool}",
             "--innodb-log-file-size=512M", "--max-connections=1000", "--skip-name-resolve",
             f"--log-error={self.dir}/error.log", f"--pid-file={self.dir}/mysqld.pid"] + user,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while subprocess.run(["mariadb", "--no-defaults", "-S", self.socket, "-uroot", "-e", "select 1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit(open(f"{self.dir}/error.log").read()[-3000:])
            time.sleep(0.2)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=120)
        shutil.rmtree(self.dir, ignore_errors=True)


def sql(socket, text):
    subprocess.run(["mariadb", "--no-defaults", "-S", socket, "-uroot", "-e", text], check=True,
                   stdout=subprocess.DEVNULL)


def driver(socket, db):
    return ["--db-driver=mysql", f"--mysql-socket={socket}", "--mysql-user=root", f"--mysql-db={db}"]


FLOOR = "floor (bench/floor_mysql.rs)"


def commands(stampede, socket, tables, size, clients, seconds, modes=("auto",), floor=None,
             jobs_list=None):
    """The exact command lines, by (tool, test): each tool on the other tool's data; stampede
    once per I/O mode (`--io`) and engine thread count (`-j`, default min(clients, cores)),
    named `stampede` for auto and `stampede --io MODE` otherwise, `-j J` appended when several
    are run; the floor client (point selects only) on sysbench's tables, as stampede."""
    out = {}
    if floor:
        out[(FLOOR, "oltp_point_select")] = [floor, socket, "root", "sb_sysbench", str(tables),
                                             str(size), str(clients), str(seconds)]
    jobs_list = [min(j, clients) for j in jobs_list or [max(1, min(clients, os.cpu_count() or 1))]]
    jobs_list = sorted(set(jobs_list))
    for test in TESTS:
        common = [f"--tables={tables}", f"--table-size={size}", f"--threads={clients}",
                  f"--time={seconds}"]
        out[("sysbench", test)] = (["sysbench", test] + driver(socket, "sb_stampede") + common
                                   + ["--report-interval=0", "run"])
        for mode in modes:
            for jobs in jobs_list:
                name = "stampede" if mode == "auto" else f"stampede --io {mode}"
                if len(jobs_list) > 1:
                    name += f" -j {jobs}"
                out[(name, test)] = ([stampede, "run", test] + driver(socket, "sb_sysbench")
                                     + common + ["-j", str(jobs), "--io", mode, "--no-check",
                                                 "--no-observe"])
    return out


def load(stampede, socket, tables, size):
    for db in ("sb_sysbench", "sb_stampede"):
        sql(socket, f"DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}")
    subprocess.run(["sysbench", "oltp_common"] + driver(socket, "sb_sysbench")
                   + [f"--tables={tables}", f"--table-size={size}", "prepare"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([stampede, "init", "oltp"] + driver(socket, "sb_stampede")
                   + [f"--tables={tables}", f"--table-size={size}"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for db in ("sb_sysbench", "sb_stampede"):
        sql(socket, "; ".join(f"ANALYZE TABLE {db}.sbtest{t}" for t in range(1, tables + 1)))


def measure(stampede, socket, tables, size, clients, seconds, rounds, log=print, modes=("auto",),
            clients_list=None, floor=None, jobs_list=None):
    """Returns ({(clients, test): {tool: [(tps, us)]}}, commands). Each round runs every tool
    once per test, the order rotated by one each round (no tool always first)."""
    load(stampede, socket, tables, size)
    res, all_cmds = {}, {}
    for c in clients_list or [clients]:
        cmds = commands(stampede, socket, tables, size, c, seconds, modes, floor, jobs_list)
        all_cmds.update({(c, tool, test): v for (tool, test), v in cmds.items()})
        for test in TESTS:
            tools = [tool for (tool, t) in cmds if t == test]
            by = res.setdefault((c, test), {tool: [] for tool in tools})
            for r in range(rounds):
                k = r % len(tools)
                for tool in tools[k:] + tools[:k]:
                    out, _wall, cpu = timed(cmds[(tool, test)])
                    m = TPS.search(out)
                    if not m:
                        raise SystemExit(f"no transactions line in {tool} output:\n{out[-2000:]}")
                    txns, tps = int(m.group(1)), float(m.group(2))
                    us = cpu * 1e6 / max(txns, 1)
                    by[tool].append((tps, us))
                    log(f"  {c} clients round {r + 1} {test:18} {tool:22} {tps:10.1f} tps "
                        f"{us:8.1f} us/txn")
    return res, all_cmds


def table(res):
    lines = [
        "| clients | test | tool | tps | tps / sysbench | CPU us/txn | CPU / sysbench |",
        "|---|---|---|---|---|---|---|",
    ]
    for (clients, test), by in res.items():
        s_tps = statistics.median(x[0] for x in by["sysbench"])
        s_cpu = statistics.median(x[1] for x in by["sysbench"])
        for tool, xs in by.items():
            tps = statistics.median(x[0] for x in xs)
            cpu = statistics.median(x[1] for x in xs)
            lines.append(f"| {clients} | {test} | {tool} | {tps:,.1f} | {tps / s_tps:.2f}x | "
                         f"{cpu:.1f} | {cpu / s_cpu:.2f}x |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stampede", default="target/release/stampede")
    ap.add_argument("--socket", help="a running server's socket (root, no password)")
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=100000)
    ap.add_argument("--clients", default="8", help="client counts, comma-separated")
    ap.add_argument("--io", default="auto",
                    help="stampede's I/O modes to run, comma-separated (auto, threads, epoll)")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", help="stampede's engine threads (-j) to run, comma-separated "
                    "(default: min(clients, cores))")
    ap.add_argument("--floor", action="store_true",
                    help="also run bench/floor_mysql.rs (built here with rustc) on point selects")
    a = ap.parse_args()
    floor = build_floor("floor_mysql") if a.floor else None
    if a.floor and not floor:
        raise SystemExit("--floor: rustc could not build bench/floor_mysql.rs")
    server = None if a.socket else MariaDb()
    socket = a.socket or server.socket
    try:
        clients = [int(c) for c in a.clients.split(",")]
        res, cmds = measure(os.path.abspath(a.stampede), socket, a.tables, a.table_size,
                            clients[0], a.seconds, a.rounds, modes=a.io.split(","),
                            clients_list=clients, floor=floor,
                            jobs_list=[int(j) for j in a.jobs.split(",")] if a.jobs else None)
    finally:
        if server:
            server.stop()
    print(table(res))
    for (clients, tool, test), c in sorted(cmds.items()):
        print(f"{tool} {test} ({clients} clients): {' '.join(c)}")


if __name__ == "__main__":
    main()
