"""The io-modes table (issue 21): stampede's socket I/O modes beside pgbench and sysbench.

For select-only prepared and tpcb-like prepared, at each client count (1, 2, 4, 8, 16, 32, 64 by
default) and over a unix socket and TCP, every round runs, one after the other:
  - stampede with `--io threads` (one OS thread per client, a blocking socket each),
  - stampede with `--io uring`, `--io epoll`, and `--io auto` (the default, which picks one of
    them by the cores each client has: engine::THREADS_CORES_PER_CLIENT),
  - pgbench with the same options,
  - for select-only, sysbench 1.0.20's oltp_point_select with the pgsql driver (a primary-key
    point select per event, as select-only is; on sysbench's own table sbtest1, loaded once by
    `sysbench oltp_common prepare`),
  - for select-only, the floor of a thread-per-client driver (bench/floor.rs, built here with
    `rustc -O`): a blocking thread per connection that does nothing but the transaction, so the
    table shows what `--io threads` costs above it (stampede's share) and what it costs above
    pgbench (the design's share),
rotating the order by one tool each round, so no tool always runs first (A B A B ...). Medians of
the rounds are reported: tps, and client CPU per transaction (the child's user + system time from
wait4's rusage, divided by the transactions it processed), with ratios against pgbench. The table
shows where threads stop beating io_uring (the crossover engine::THREADS_CORES_PER_CLIENT is
set from) and how far `--io auto` is from the best mode at each row (the goal: within 5%).

-j is the machine's CPU count capped at the clients for every tool that takes it (threads mode
ignores it: one thread per client).

Used by bench/harness.py (case `io-modes`, client counts from --io-clients).
"""

import os
import re
import statistics
import subprocess
import tempfile

# sysbench's "transactions: N (X per sec.)" line.
SYSBENCH_TPS = re.compile(r"^\s+transactions:\s+(\d+)\s+\(([\d.]+) per sec", re.M)
IO_LINE = re.compile(r"I/O: (\w+)")
MODES = ("threads", "uring", "epoll", "auto")
CASES = ("select-only", "tpcb-like")


def sysbench_target(server, tcp):
    host = "127.0.0.1" if tcp else server.socket
    return ["--db-driver=pgsql", f"--pgsql-host={host}", f"--pgsql-port={server.port}",
            "--pgsql-user=postgres", "--pgsql-db=sb_io", "--tables=1", "--table-size=100000"]


def prepare_sysbench(server, psql):
    """sysbench's own table for oltp_point_select, in database sb_io."""
    for sql in ("DROP DATABASE IF EXISTS sb_io", "CREATE DATABASE sb_io"):
        subprocess.run([psql, "-qX", "-h", server.socket, "-p", server.port, "-U", "postgres",
                        "-d", "postgres", "-c", sql], check=True, stdout=subprocess.DEVNULL)
    cmd = ["sysbench", "oltp_common"] + sysbench_target(server, False) + ["prepare"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([psql, "-qX", "-h", server.socket, "-p", server.port, "-U", "postgres",
                    "-d", "sb_io", "-c", "VACUUM ANALYZE"], check=True, stdout=subprocess.DEVNULL)
    return " ".join(cmd)


def build_floor(name="floor"):
    """bench/NAME.rs (a floor client) compiled with rustc -O into a temporary directory; None
    without rustc."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.rs")
    out = os.path.join(tempfile.mkdtemp(prefix="stampede-floor-"), name)
    r = subprocess.run(["rustc", "-O", "--edition", "2021", src, "-o", out], capture_output=True)
    return out if r.returncode == 0 else None


def commands(stampede, pgbench, server, case, clients, tcp, seconds, with_sysbench, floor=None):
    """tool -> command line for one row of the table."""
    jobs = str(max(1, min(clients, os.cpu_count() or 1)))
    common = ["-c", str(clients), "-j", jobs, "-T", str(seconds), "-n", "-M", "prepared"]
    t = server.target(tcp)
    flag = ["-S"] if case == "select-only" else ["-b", "tpcb-like"]
    out = {}
    for mode in MODES:
        out[f"stampede --io {mode}"] = [stampede, "run"] + flag + common + \
            ["--io", mode, "--no-check", "--no-observe"] + t + ["-d", "postgres"]
    out["pgbench"] = [pgbench] + flag + common + t + ["postgres"]
    if floor and case == "select-only":
        addr = f"127.0.0.1:{server.port}" if tcp else f"{server.socket}/.s.PGSQL.{server.port}"
        out["floor (bench/floor.rs)"] = [floor, addr, str(clients), str(seconds)]
    if with_sysbench and case == "select-only":
        out["sysbench oltp_point_select"] = ["sysbench", "oltp_point_select"] + \
            sysbench_target(server, tcp) + [f"--threads={clients}", f"--time={seconds}",
                                            "--report-interval=0", "run"]
    return out


def parse(tool, out):
    """(tps, transactions, the I/O stampede used or None)."""
    if tool.startswith("sysbench"):
        m = SYSBENCH_TPS.search(out)
        if not m:
            raise RuntimeError(f"no transactions line in sysbench's output:\n{out[-2000:]}")
        return float(m.group(2)), int(m.group(1)), None
    tps = float(re.search(r"^tps = ([0-9.]+)", out, re.M).group(1))
    txns = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
    io = IO_LINE.search(out)
    return tps, txns, io.group(1) if io else None


def measure(timed, stampede, pgbench, psql, server, clients_list, seconds, rounds, log):
    """Returns (rows, commands): rows are (case, clients, socket, {tool: medians})."""
    with_sysbench = subprocess.run(["sh", "-c", "command -v sysbench"],
                                   capture_output=True).returncode == 0
    floor = build_floor()
    all_cmds = [f"rustc -O --edition 2021 bench/floor.rs -o {floor}"] if floor else []
    if with_sysbench:
        all_cmds.append(prepare_sysbench(server, psql))
    rows = []
    for case in CASES:
        for clients in clients_list:
            for tcp in (False, True):
                sock = "TCP" if tcp else "unix socket"
                cmds = commands(stampede, pgbench, server, case, clients, tcp, seconds, with_sysbench,
                                floor)
                all_cmds += [" ".join(c) for c in cmds.values()]
                tools = list(cmds)
                res = {tool: [] for tool in tools}
                chosen = {}
                for r in range(rounds):
                    k = r % len(tools)
                    for tool in tools[k:] + tools[:k]:
                        out, _wall, cpu, _rss = timed(cmds[tool])
                        tps, txns, io = parse(tool, out)
                        if io:
                            chosen[tool] = io
                        res[tool].append((tps, cpu * 1e6 / max(txns, 1)))
                        log(f"  io-modes {case} {clients} clients {sock} round {r + 1} {tool}: "
                            f"{tps:.0f} tps, {cpu * 1e6 / max(txns, 1):.1f} us CPU/txn")
                med = {tool: {"tps": statistics.median(x[0] for x in v),
                              "cpu_us": statistics.median(x[1] for x in v),
                              "io": chosen.get(tool)} for tool, v in res.items()}
                rows.append((case, clients, sock, med))
    return rows, all_cmds


def table(rows, rounds, seconds):
    """The markdown section."""
    out = [f"## Socket I/O modes: threads, io_uring, epoll, auto ({rounds} interleaved rounds, "
           f"{seconds} s each)\n",
           "Medians; ratios against pgbench in the same rounds (tps: higher is better; CPU per "
           "transaction: lower is better). `auto` shows the mode it chose; `auto / best` is its "
           "tps against the best of threads, io_uring and epoll on that row. sysbench runs "
           "oltp_point_select (pgsql driver) on its own table for the select-only rows; `floor` "
           "is bench/floor.rs, a blocking thread per connection doing nothing but the "
           "transaction (the least a thread-per-client driver can cost).\n",
           "| case | clients | socket | tool | tps | tps / pgbench | CPU us/txn | CPU / pgbench |",
           "|---|---|---|---|---|---|---|---|"]
    ahead = {}
    for case, clients, sock, med in rows:
        p = med["pgbench"]
        for tool, x in med.items():
            name = tool if not (tool.endswith("auto") and x["io"]) else f"{tool} ({x['io']})"
            out.append(f"| {case} | {clients} | {sock} | {name} | {x['tps']:.0f} | "
                       f"{x['tps'] / p['tps']:.2f} | {x['cpu_us']:.1f} | {x['cpu_us'] / p['cpu_us']:.2f} |")
        best = max(med[f"stampede --io {m}"]["tps"] for m in ("threads", "uring", "epoll"))
        auto = med["stampede --io auto"]["tps"]
        out.append(f"| {case} | {clients} | {sock} | auto / best | | {auto / best:.2f} | | |")
        t, u = med["stampede --io threads"], med["stampede --io uring"]
        a = ahead.setdefault((case, sock), ([], []))
        (a[0] if t["tps"] >= u["tps"] and t["cpu_us"] <= u["cpu_us"] else a[1]).append(str(clients))
    out.append("")
    out.append("The crossover: threads against io_uring (ahead = more tps and less CPU per "
               "transaction), by client count.\n")
    for (case, sock), (yes, no) in sorted(ahead.items()):
        out.append(f"- {case}, {sock}: threads ahead at {', '.join(yes) or 'none'}; "
                   f"not ahead at {', '.join(no) or 'none'}.")
    out.append("")
    return "\n".join(out)
