#!/usr/bin/env python3
"""stampede's benchmark harness: stampede and pgbench side by side on one PostgreSQL.

Every case runs both tools on the same server and data, interleaved A B A B for --rounds rounds,
and reports medians and ratios of
  - tps (committed transactions per second, as each tool prints it),
  - client CPU per transaction: user + system time of the client process (wait4 rusage) divided
    by the transactions it processed,
  - client RSS per connection: the client's peak RSS divided by its connections,
  - instructions per transaction: valgrind --tool=callgrind with 1 client at two transaction
    counts; the difference cancels start-up and connection cost. Each count is the smallest of
    two runs (one run at 69da878 measured 333,683 instructions per pipelined transaction,
    two reruns 11,928 and 12,222). stampede runs under callgrind with `--io epoll`: valgrind
    3.19 keeps its thread lock while a thread blocks in io_uring_enter, so an engine thread
    waiting in its ring can stop the calling thread (one callgrind run hung for 11 minutes: the
    engine thread in io_cqring_wait, the calling thread waiting on valgrind's lock pipe),
  - socket I/O (case `io`): stampede with `--io uring` and with `--io epoll` beside pgbench,
    select-only and tpcb-like, 8 clients, unix socket, at least 5 interleaved rounds,
  - socket I/O modes (case `io-modes`, bench/io_modes_case.py): threads, io_uring, epoll and
    auto beside pgbench and sysbench's oltp_point_select, select-only and tpcb-like, at the
    --io-clients counts, unix socket and TCP: where threads stop winning (the crossover `--io
    auto` uses) and how close auto is to the best mode,
  - load time: `stampede init tpcb -s N` against `pgbench -i -s N` (client- and server-side),
  - sysbench 1.0.20's oltp_point_select and oltp_read_write against stampede's (case
    `sysbench`, bench/sysbench_case.py): each tool on the data the other loaded,
  - connections at scale (cases `pgbouncer-10000`, `direct-5000`, `busy-8`, `trickle-8`;
    `connections` names all four): 10,000 clients through a private pgbouncer and 5,000
    directly, each a rate-limited trickle (select-only, `-R`), beside 8 busy clients and 8
    clients at the same trickle rate: peak client RSS per
    connection, client CPU per transaction over the whole process (connecting included) and in
    the steady state (CPU between the first and the last progress line, from
    /proc/PID/task/*/schedstat, over the transactions those lines report), and the connection
    setup rate. pgbench's `-T` includes connecting, so pgbench gets `-T` plus
    --conn-grace seconds; its steady-state figures come from its progress lines all the same.
  - replay (case `replay`, bench/replay_case.py): `stampede replay --speed max` against pgreplay
    1.2 on synthetic csvlogs of --replay-statements statements over --replay-sessions sessions
    (a capture-shaped and an interleaved log on PostgreSQL, the interleaved one against a null
    endpoint): statements/s, wall time, client and server CPU, and the seconds `stampede replay
    parse` takes.

The server is stampede's own embedded PostgreSQL (`stampede server start`), with a unix socket
and TCP on 127.0.0.1. Results go to bench/RESULTS.md (regenerated, never edited) with the
machine, the date and every exact command.

Usage: bench/run [--quick] [--rounds N] [--seconds S] [--cases a,b,...] [--output FILE]
                 [--io-clients 1,2,...] [--stampede BINARY]
The replay section alone (it replaces only that section of RESULTS.md): bench/run --cases replay
(`--replay-statements 100000` for a smaller log).
The io-modes table alone: bench/run --cases io-modes (`--rounds 1 --seconds 2 --io-clients 1,8
--output /tmp/io.md` checks that it runs).
"""

import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import io_modes_case  # noqa: E402
import replay_case  # noqa: E402
import sysbench_case  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAMPEDE = os.path.join(ROOT, "target", "release", "stampede")
PORT = "55432"

PIPELINE_SCRIPT = """\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
\\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
\\endpipeline
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def find_pg_bindir():
    try:
        d = sh(["pg_config", "--bindir"]).stdout.strip()
        if os.path.exists(os.path.join(d, "pgbench")):
            return d
    except (OSError, subprocess.CalledProcessError):
        pass
    dirs = sorted(
        (d for d in os.listdir("/usr/lib/postgresql") if d.isdigit()), key=int, reverse=True
    ) if os.path.isdir("/usr/lib/postgresql") else []
    for d in dirs:
        p = os.path.join("/usr/lib/postgresql", d, "bin")
        if os.path.exists(os.path.join(p, "pgbench")):
            return p
    sys.exit("bench: pgbench not found (install postgresql-15)")


def timed(cmd, env=None):
    """Run cmd, return (stdout+stderr, wall seconds, user+sys CPU seconds, max RSS KiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.stdout.close()
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {code}:\n{out[-3000:]}")
    return out, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def parse_run(out):
    tps = float(re.search(r"^tps = ([0-9.]+)", out, re.M).group(1))
    txns = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
    return tps, txns


class Server:
    def __init__(self, bindir, max_connections=300):
        self.dir = tempfile.mkdtemp(prefix="stampede-bench-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.bindir = bindir
        out = sh([STAMPEDE, "server", "start", "--data-dir", self.data, "--pg-bindir", bindir,
                  "--set", f"port={PORT}", "--set", "listen_addresses=127.0.0.1",
                  "--set", f"max_connections={max_connections}"])
        self.settings = out.stderr.strip()
        self.socket = self.data
        self.port = PORT

    def target(self, tcp):
        return ["-h", "127.0.0.1" if tcp else self.socket, "-p", PORT, "-U", "postgres"]

    def stop(self):
        subprocess.run([STAMPEDE, "server", "stop", "--data-dir", self.data], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def case_commands(case, server, pgbench, seconds, clients, tcp, scriptfile):
    t = server.target(tcp)
    jobs = ["-j", "2"]
    common = ["-c", str(clients)] + jobs + ["-T", str(seconds), "-n", "-M", "prepared"]
    if case == "select-only":
        a = [STAMPEDE, "run", "-S"] + common + ["--no-check", "--no-observe"] + t + ["-d", "postgres"]
        b = [pgbench, "-S"] + common + t + ["postgres"]
    elif case == "tpcb-like":
        a = [STAMPEDE, "run", "-b", "tpcb-like"] + common + ["--no-check", "--no-observe"] + t + ["-d", "postgres"]
        b = [pgbench, "-b", "tpcb-like"] + common + t + ["postgres"]
    elif case == "tpcb-pipelined":
        a = [STAMPEDE, "run", "-b", "tpcb-like-pipelined"] + common + ["--no-check", "--no-observe"] + t + ["-d", "postgres"]
        b = [pgbench, "-f", scriptfile] + common + t + ["postgres"]
    else:
        raise ValueError(case)
    return a, b


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def run_pair_rounds(name, a_cmd, b_cmd, rounds, clients, log):
    return run_rounds(name, {"stampede": a_cmd, "pgbench": b_cmd}, rounds, clients, log)


def run_rounds(name, cmds, rounds, clients, log):
    """Each round runs every command of `cmds` (tool -> command) once, in order."""
    res = {tool: [] for tool in cmds}
    for r in range(rounds):
        for tool, cmd in cmds.items():
            out, wall, cpu, rss = timed(cmd)
            tps, txns = parse_run(out)
            res[tool].append({"tps": tps, "cpu_us": cpu * 1e6 / max(txns, 1),
                              "rss_kib_conn": rss / clients, "txns": txns})
            log(f"  {name} round {r + 1} {tool}: {tps:.0f} tps, {cpu * 1e6 / max(txns, 1):.1f} us CPU/txn, "
                f"{rss / clients:.0f} KiB RSS/conn")
    return res


def callgrind_instr(cmd):
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"callgrind {' '.join(cmd)}:\n{out.stderr[-2000:]}")
    m = re.search(r"Collected : (\d+)", out.stderr)
    return int(m.group(1))


def instructions_per_txn(case, server, pgbench, scriptfile, n1, n2):
    """Instructions per transaction from two callgrind runs with 1 client, n1 and n2 transactions."""
    t = server.target(False)
    result = {}
    for tool in ("stampede", "pgbench"):
        counts = []
        for n in (n1, n2):
            base = ["-c", "1", "-j", "1", "-t", str(n), "-n", "-M", "prepared"]
            if tool == "stampede":
                flag = {"select-only": ["-S"], "tpcb-like": ["-b", "tpcb-like"],
                        "tpcb-pipelined": ["-b", "tpcb-like-pipelined"]}[case]
                # epoll: see the module header (valgrind and io_uring_enter).
                cmd = [STAMPEDE, "run"] + flag + base + ["--no-check", "--no-observe", "--io", "epoll"] + \
                    t + ["-d", "postgres"]
            else:
                flag = {"select-only": ["-S"], "tpcb-like": ["-b", "tpcb-like"],
                        "tpcb-pipelined": ["-f", scriptfile]}[case]
                cmd = [pgbench] + flag + base + t + ["postgres"]
            counts.append(min(callgrind_instr(cmd) for _ in range(2)))
        result[tool] = (counts[1] - counts[0]) / (n2 - n1)
    return result


# ----- connections at scale -----

# trickle-8: 8 clients at the trickles' rate, to tell the cost of holding thousands of
# connections from the cost of a transaction that wakes the client from sleep (twice: its slot,
# its response), which a busy client does not pay.
CONN_CASES = ("pgbouncer-10000", "direct-5000", "busy-8", "trickle-8")
PGBOUNCER_PORT = 6432


def raise_nofile():
    """Soft open-file limit to the hard one (in a child between fork and exec: pgbench does not
    raise it itself; stampede does, and pgbouncer gets `ulimit -n` in its launcher)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Pgbouncer:
    """A private pgbouncer 1.18 (Debian's) in front of the server: transaction pooling, trust over
    unix sockets only, in its own directory; as root it runs as postgres (pgbouncer refuses root),
    like crates/stampede/tests/common/pgbouncer.rs. 10,000 clients need an open-file limit above
    max_client_conn, raised with `ulimit -n` in the launcher."""

    def __init__(self, server, max_client_conn, pool_size=20):
        import pwd
        self.bin = next((p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.path.exists(p)), None)
        if not self.bin:
            sys.exit("bench: pgbouncer is not installed (bench/run installs it)")
        self.dir = tempfile.mkdtemp(prefix="stampede-bench-pgbouncer-")
        os.chmod(self.dir, 0o755)
        d = self.dir
        with open(os.path.join(d, "pgbouncer.ini"), "w") as f:
            f.write(f"""[databases]
* = host={server.socket} port={PORT}
[pgbouncer]
unix_socket_dir = {d}
listen_port = {PGBOUNCER_PORT}
auth_type = trust
auth_file = {d}/userlist.txt
pool_mode = transaction
max_client_conn = {max_client_conn}
default_pool_size = {pool_size}
max_db_connections = {pool_size}
ignore_startup_parameters = extra_float_digits,options
logfile = {d}/pgbouncer.log
pidfile = {d}/pgbouncer.pid
listen_backlog = 4096
""")
        with open(os.path.join(d, "userlist.txt"), "w") as f:
            f.write('"postgres" ""\n')
        import resource
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        # Clients, server connections and pgbouncer's own descriptors.
        need = max_client_conn + pool_size + 100
        if hard != resource.RLIM_INFINITY and hard < need:
            sys.exit(f"bench: pgbouncer needs an open-file limit of {need} for {max_client_conn} "
                     f"clients, the hard limit is {hard}: raise it (ulimit -Hn, limits.conf)")
        user = []
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
                u = "postgres"
            except KeyError:
                u = "nobody"
            sh(["chown", "-R", u, d])
            user = ["-u", u]
        cmd = " ".join([self.bin] + user + [os.path.join(d, "pgbouncer.ini")])
        self.proc = subprocess.Popen(["bash", "-c", f"ulimit -n {need} && exec {cmd}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sock = os.path.join(d, f".s.PGSQL.{PGBOUNCER_PORT}")
        deadline = time.monotonic() + 15
        while not os.path.exists(sock):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                sys.exit(f"bench: pgbouncer did not start:\n{self.log()}")
            time.sleep(0.05)
        self.launch = f"bash -c 'ulimit -n {need} && exec {cmd}'"

    def target(self):
        return ["-h", self.dir, "-p", str(PGBOUNCER_PORT), "-U", "postgres"]

    def log(self):
        try:
            return open(os.path.join(self.dir, "pgbouncer.log")).read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: immediate shutdown
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def task_cpu_ns(pid):
    """(CPU time of every thread of `pid` so far in nanoseconds, the set of thread ids), from
    schedstat's first field (time on a CPU, user and system). A thread that has ended is not
    counted, so two readings compare only when their thread sets are equal (pgbench's last
    progress line comes when its other threads may have finished)."""
    total, tids = 0, set()
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                    total += int(f.read().split()[0])
                tids.add(t)
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total, frozenset(tids)


PROGRESS = re.compile(r"^progress: ([0-9.]+) s, ([0-9.]+) tps")


def timed_progress(cmd, progress_s):
    """Run cmd (with -P progress_s) with the open-file limit raised; sample the client's CPU at
    every progress line. Returns (output, wall s, whole-process CPU s, peak RSS KiB,
    steady-state CPU us per transaction or None)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         preexec_fn=raise_nofile)
    lines, marks = [], []
    for line in p.stdout:
        lines.append(line)
        m = PROGRESS.match(line)
        if m:
            marks.append((float(m.group(2)), task_cpu_ns(p.pid)))
    _, status, ru = os.wait4(p.pid, 0)
    p.stdout.close()
    out = "".join(lines)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {code}:\n{out[-3000:]}")
    steady = None
    # From the first progress line to the last one read with the same threads alive: no
    # connecting, no closing in between.
    if len(marks) >= 3 and marks[0][1] is not None:
        end = len(marks) - 1
        while end > 1 and (marks[end][1] is None or marks[end][1][1] != marks[0][1][1]):
            end -= 1
        txns = sum(tps * progress_s for tps, _ in marks[1:end + 1])
        if end >= 2 and txns > 0:
            steady = (marks[end][1][0] - marks[0][1][0]) / 1e3 / txns
    return out, time.monotonic() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, steady


def setup_rate(out, clients):
    """Connections per second while opening the initial ones, as each tool reports it."""
    m = re.search(r"connections: (\d+) opened in ([0-9.]+) s \(([0-9.]+)/s", out)
    if m:
        return float(m.group(3)), float(m.group(2))
    m = re.search(r"initial connection time = ([0-9.]+) ms", out)
    if m:
        secs = float(m.group(1)) / 1e3
        return clients / secs if secs > 0 else float("nan"), secs
    return float("nan"), float("nan")


def conn_case_commands(case, server, bouncer, pgbench, seconds, grace, progress_s):
    """(description, clients, stampede command, pgbench command) of a connections case."""
    P = ["-P", str(progress_s)]
    if case == "pgbouncer-10000":
        clients, rate = 10000, 500
        t = bouncer.target()
        # -M extended: pgbouncer 1.18 has no max_prepared_statements.
        mode = ["-M", "extended"]
        desc = f"10,000 connections through pgbouncer (transaction pooling), trickle -R {rate}"
    elif case == "direct-5000":
        clients, rate = 5000, 500
        t = server.target(False)
        mode = ["-M", "prepared"]
        desc = f"5,000 mostly idle direct connections, trickle -R {rate}"
    elif case == "busy-8":
        clients, rate = 8, None
        t = server.target(False)
        mode = ["-M", "prepared"]
        desc = "8 busy clients (no rate limit), for comparison"
    elif case == "trickle-8":
        clients, rate = 8, 500
        t = server.target(False)
        mode = ["-M", "prepared"]
        desc = f"8 direct clients, trickle -R {rate}, for comparison"
    else:
        raise ValueError(case)
    r = ["-R", str(rate)] if rate else []
    base = ["-S", "-c", str(clients), "-j", "2", "-n"] + mode + r + P
    a = [STAMPEDE, "run"] + base + ["-T", str(seconds), "--no-check", "--no-observe"] + t + ["-d", "postgres"]
    # pgbench's -T runs from before it connects: give it the connecting time on top.
    pg_t = seconds + (grace if clients > 100 else 0)
    b = [pgbench] + base + ["-T", str(pg_t)] + t + ["postgres"]
    return desc, clients, a, b


def wait_for_backends(server, most=30, limit_s=180):
    """Wait until the previous run's backends have exited (thousands take seconds to), so the
    next many-client run finds max_connections free and the machine quiet."""
    psql = os.path.join(server.bindir, "psql")
    sql = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        n = int(sh([psql, "-X", "-At", "-c", sql] + server.target(False) + ["postgres"]).stdout.strip())
        if n <= most:
            return
        time.sleep(1)


def run_conn_case(case, server, bouncer, pgbench, args, log):
    desc, clients, a, b = conn_case_commands(case, server, bouncer, pgbench, args.conn_seconds,
                                             args.conn_grace, args.conn_progress)
    res = {"stampede": [], "pgbench": []}
    for r in range(args.rounds):
        for tool, cmd in (("stampede", a), ("pgbench", b)):
            wait_for_backends(server)
            out, wall, cpu, rss, steady = timed_progress(cmd, args.conn_progress)
            tps, txns = parse_run(out)
            rate, secs = setup_rate(out, clients)
            row = {"tps": tps, "txns": txns, "cpu_us": cpu * 1e6 / max(txns, 1),
                   "steady_us": steady if steady is not None else float("nan"),
                   "rss_kib_conn": rss / clients, "setup_rate": rate, "connect_s": secs,
                   "wall": wall}
            res[tool].append(row)
            log(f"  {case} round {r + 1} {tool}: {txns} txns, {tps:.0f} tps, "
                f"{row['cpu_us']:.1f} us CPU/txn (whole process), {row['steady_us']:.1f} us steady, "
                f"{row['rss_kib_conn']:.1f} KiB RSS/conn, {rate:.0f} connections/s, {wall:.0f} s wall")
    keys = ("tps", "txns", "cpu_us", "steady_us", "rss_kib_conn", "setup_rate", "connect_s")
    s = {k: med([x[k] for x in res["stampede"]]) for k in keys}
    p = {k: med([x[k] for x in res["pgbench"]]) for k in keys}
    return desc, s, p, [" ".join(a), " ".join(b)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--scale", type=int, default=10, help="scale of the data the runs use")
    ap.add_argument("--load-scale", type=int, default=50)
    ap.add_argument("--cases",
                    default="select-only,tpcb-like,tpcb-pipelined,io,load,callgrind,sysbench,connections,replay")
    ap.add_argument("--clients", default="8,64")
    ap.add_argument("--quick", action="store_true", help="1 round, 3 s, scale-5 load: a smoke test")
    ap.add_argument("--output", default=os.path.join(ROOT, "bench", "RESULTS.md"))
    ap.add_argument("--conn-seconds", type=int, default=20,
                    help="measured seconds of the connections cases (-T)")
    ap.add_argument("--conn-grace", type=int, default=60,
                    help="seconds added to pgbench's -T in the many-client cases (it counts connecting)")
    ap.add_argument("--conn-progress", type=int, default=2, help="-P of the connections cases")
    ap.add_argument("--io-clients", default="1,2,4,8,16,32,64",
                    help="client counts of the io-modes case")
    ap.add_argument("--replay-statements", type=int, default=1_000_000,
                    help="statements in the replay case's log")
    ap.add_argument("--replay-sessions", type=int, default=100, help="sessions in the replay case's log")
    ap.add_argument("--replay-rounds", type=int, default=2,
                    help="rounds of the replay case (each replays the whole log with each tool)")
    ap.add_argument("--stampede", help="this stampede binary instead of building a release one")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.seconds, args.load_scale = 1, 3, 5
        args.conn_seconds = 6
    cases = args.cases.split(",")
    if "connections" in cases:
        cases = [c for c in cases if c != "connections"] + list(CONN_CASES)
    conn_cases = [c for c in CONN_CASES if c in cases]
    clients_list = [int(c) for c in args.clients.split(",")]

    global STAMPEDE
    if args.stampede:
        STAMPEDE = os.path.abspath(args.stampede)
    else:
        subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "stampede"], cwd=ROOT, check=True)
    bindir = find_pg_bindir()
    pgbench = os.path.join(bindir, "pgbench")
    lines = []

    def log(s):
        print(s, flush=True)

    # 5,000 direct clients plus the pooler's connections and the loader.
    server = Server(bindir, max_connections=5100 if conn_cases else 300)
    scriptfile = os.path.join(server.dir, "tpcb-pipelined.sql")
    with open(scriptfile, "w") as f:
        f.write(PIPELINE_SCRIPT)
    started = datetime.datetime.now(datetime.timezone.utc)
    commands = []
    try:
        init = [pgbench, "-i", "-q", "-s", str(args.scale)] + server.target(False) + ["postgres"]
        if cases != ["replay"]:
            sh(init)
            commands.append(" ".join(init))
        table = []
        for case in [c for c in cases if c in ("select-only", "tpcb-like", "tpcb-pipelined")]:
            for clients in clients_list:
                for tcp in (False, True):
                    if case == "tpcb-pipelined" and tcp:
                        continue
                    name = f"{case} prepared, {clients} clients, {'TCP' if tcp else 'unix socket'}"
                    log(name)
                    a, b = case_commands(case, server, pgbench, args.seconds, clients, tcp, scriptfile)
                    commands += [" ".join(a), " ".join(b)]
                    res = run_pair_rounds(name, a, b, args.rounds, clients, log)
                    s = {k: med([x[k] for x in res["stampede"]]) for k in ("tps", "cpu_us", "rss_kib_conn")}
                    p = {k: med([x[k] for x in res["pgbench"]]) for k in ("tps", "cpu_us", "rss_kib_conn")}
                    table.append((name, s, p))
        io_rows = []
        if "io" in cases:
            # The measured run's socket I/O (`--io`): io_uring and epoll beside pgbench, 8 clients,
            # unix socket, interleaved; more rounds than the other cases (the difference is ~20%
            # and a round's CPU varies by 10-20% on a shared 2-core machine).
            for case in ("select-only", "tpcb-like"):
                name = f"{case} prepared, 8 clients, unix socket"
                log(f"io {name}")
                a, b = case_commands(case, server, pgbench, args.seconds, 8, False, scriptfile)
                cmds = {"stampede --io uring": a[:2] + ["--io", "uring"] + a[2:],
                        "stampede --io epoll": a[:2] + ["--io", "epoll"] + a[2:],
                        "pgbench": b}
                commands += [" ".join(c) for c in cmds.values()]
                res = run_rounds(name, cmds, max(args.rounds, 5), 8, log)
                io_rows.append((name, {t: {k: med([x[k] for x in v]) for k in ("tps", "cpu_us")}
                                       for t, v in res.items()}))
        io_modes = None
        if "io-modes" in cases:
            log("io-modes")
            rows, cmds = io_modes_case.measure(
                timed, STAMPEDE, pgbench, os.path.join(bindir, "psql"), server,
                [int(c) for c in args.io_clients.split(",")], args.seconds, args.rounds, log)
            io_modes = io_modes_case.table(rows, args.rounds, args.seconds)
            commands += cmds
        instr = []
        if "callgrind" in cases and shutil.which("valgrind"):
            for case, (n1, n2) in (("select-only", (2000, 12000)), ("tpcb-like", (500, 2500)),
                                   ("tpcb-pipelined", (500, 2500))):
                log(f"callgrind {case}")
                instr.append((case, instructions_per_txn(case, server, pgbench, scriptfile, n1, n2), n1, n2))
        loads = []
        if "load" in cases:
            for mode in ("client", "server"):
                a = [STAMPEDE, "init", "tpcb", "-q", "-s", str(args.load_scale)] + \
                    (["--server-side"] if mode == "server" else []) + server.target(False) + ["-d", "postgres"]
                b = [pgbench, "-i", "-q", "-s", str(args.load_scale)] + \
                    (["-I", "dtGvp"] if mode == "server" else []) + server.target(False) + ["postgres"]
                commands += [" ".join(a), " ".join(b)]
                walls = {"stampede": [], "pgbench": []}
                for r in range(args.rounds):
                    for tool, cmd in (("stampede", a), ("pgbench", b)):
                        _, wall, _, _ = timed(cmd)
                        walls[tool].append(wall)
                        log(f"  load -s {args.load_scale} {mode}-side round {r + 1} {tool}: {wall:.2f} s")
                loads.append((mode, med(walls["stampede"]), med(walls["pgbench"])))
            # Leave the data the run cases expect for a later invocation.
            sh(init)
        sysb = None
        if "sysbench" in cases and shutil.which("sysbench"):
            # Issue 5's comparison: each tool on the other tool's data (bench/sysbench_case.py).
            log("sysbench")
            res, cmds = sysbench_case.measure(
                STAMPEDE, server.socket, PORT, 4, 100000, 8, args.seconds, args.rounds, log)
            sysb = sysbench_case.table(res)
            commands += [" ".join(c) for _, c in sorted(cmds.items())]
        replay = None
        if "replay" in cases:
            log("replay")
            fig, cmds = replay_case.measure(
                STAMPEDE, server.socket, PORT, args.replay_statements, args.replay_sessions, 100_000,
                60.0, args.replay_rounds, server.dir, log)
            replay = replay_case.section(fig, cmds, "bench/run --cases replay" + (
                f" --replay-rounds {args.replay_rounds}" if args.replay_rounds != 2 else "") + (
                f" --replay-statements {args.replay_statements}" if args.replay_statements != 1_000_000 else "")
                + (f" --replay-sessions {args.replay_sessions}" if args.replay_sessions != 100 else ""))
        conns = []
        if conn_cases:
            bouncer = None
            try:
                if "pgbouncer-10000" in conn_cases:
                    bouncer = Pgbouncer(server, max_client_conn=10100)
                    commands.append(bouncer.launch)
                for case in conn_cases:
                    log(case)
                    desc, s, p, cmds = run_conn_case(case, server, bouncer, pgbench, args, log)
                    commands += cmds
                    conns.append((desc, s, p))
            finally:
                if bouncer:
                    bouncer.stop()
    finally:
        server.stop()

    if cases == ["replay"]:
        # Only this case ran: its section replaces its own, the rest of the file stays.
        replay_case.splice(args.output, replay)
        print(replay)
        return
    write_results(args, started, table, instr, loads, commands, bindir, conns, sysb, io_rows, io_modes,
                  replay)


def machine():
    model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} CPUs ({model}), {mem:.0f} GiB, {platform.system()} {platform.release()}"


def write_results(args, started, table, instr, loads, commands, bindir, conns=(), sysb=None, io_rows=(),
                  io_modes=None, replay=None):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    pgv = sh([os.path.join(bindir, "pgbench"), "--version"]).stdout.strip()
    out = []
    w = out.append
    w("# stampede benchmark results\n")
    w("Regenerated by `bench/run`; never edited by hand.\n")
    w(f"- date: {started.strftime('%Y-%m-%d %H:%M UTC')}")
    w(f"- machine: {machine()}")
    w(f"- stampede: commit {commit}, release build; {pgv}; server: PostgreSQL from {bindir}, "
      f"stampede's embedded settings (client and server on the same machine)")
    w(f"- rounds: {args.rounds} interleaved (stampede, pgbench, stampede, ...), {args.seconds} s each, "
      f"scale {args.scale}; medians shown; ratios are stampede / pgbench; stampede runs with "
      f"`--no-check --no-observe` (its checks and server sampler run in-process and would count as "
      f"client CPU), both tools with `-n` (no pre-run vacuum)\n")
    if table:
        w("## Runs\n")
        w("| case | tps stampede | tps pgbench | tps ratio | CPU us/txn stampede | CPU us/txn pgbench | CPU ratio | RSS KiB/conn stampede | RSS KiB/conn pgbench |")
        w("|---|---|---|---|---|---|---|---|---|")
        for name, s, p in table:
            w(f"| {name} | {s['tps']:.0f} | {p['tps']:.0f} | {s['tps'] / p['tps']:.2f} | {s['cpu_us']:.1f} | "
              f"{p['cpu_us']:.1f} | {s['cpu_us'] / p['cpu_us']:.2f} | {s['rss_kib_conn']:.0f} | {p['rss_kib_conn']:.0f} |")
        w("")
    if io_rows:
        w(f"## Socket I/O: io_uring and epoll ({max(args.rounds, 5)} interleaved rounds)\n")
        w("stampede's default (`--io auto`) is io_uring where the kernel allows it; `--io epoll` "
          "is the fall-back path. Ratios against pgbench in the same rounds.\n")
        w("| case | tool | tps | tps ratio | CPU us/txn | CPU ratio |")
        w("|---|---|---|---|---|---|")
        for name, r in io_rows:
            p = r["pgbench"]
            for tool, x in r.items():
                w(f"| {name} | {tool} | {x['tps']:.0f} | {x['tps'] / p['tps']:.2f} | {x['cpu_us']:.1f} | "
                  f"{x['cpu_us'] / p['cpu_us']:.2f} |")
        w("")
    if io_modes:
        w(io_modes)
    if instr:
        w("## Instructions per transaction (callgrind, 1 client, unix socket; stampede with `--io epoll`)\n")
        w("| case | stampede | pgbench | ratio | transaction counts |")
        w("|---|---|---|---|---|")
        for case, r, n1, n2 in instr:
            w(f"| {case} prepared | {r['stampede']:.0f} | {r['pgbench']:.0f} | {r['stampede'] / r['pgbench']:.2f} | {n1} and {n2} |")
        w("")
    if loads:
        w(f"## Load time, scale {args.load_scale}\n")
        w("| generation | stampede init tpcb | pgbench -i | ratio (pgbench / stampede) |")
        w("|---|---|---|---|")
        for mode, s, p in loads:
            w(f"| {mode}-side | {s:.2f} s | {p:.2f} s | {p / s:.2f}x faster |")
        w("")
    if sysb:
        sbv = sh(["sysbench", "--version"]).stdout.strip()
        w(f"## sysbench OLTP ({sbv}, pgsql driver), 4 tables x 100,000 rows, 8 clients/threads\n")
        w("Each tool runs on the data the other loaded (`sysbench oltp_common prepare` for stampede, "
          "`stampede init oltp` for sysbench); same rounds and seconds as above; CPU is the client "
          "process's user + system time per transaction.\n")
        w(sysb)
        w("")
    if conns:
        w(f"## Connections at scale (select-only, {args.conn_seconds} s measured, -P {args.conn_progress})\n")
        w("CPU per transaction: whole process = the client's rusage over its whole life (connecting "
          "and closing included) / transactions; steady = CPU between the first and the last progress "
          "line / the transactions those lines report. RSS per connection: peak RSS / clients. "
          f"pgbench's -T includes connecting, so it ran {args.conn_grace} s longer in the many-client "
          "cases.\n")
        w("| case | tool | transactions | CPU us/txn, whole process | CPU us/txn, steady | RSS KiB/conn | connections/s |")
        w("|---|---|---|---|---|---|---|")
        for desc, s, p in conns:
            for tool, x in (("stampede", s), ("pgbench", p)):
                w(f"| {desc} | {tool} | {x['txns']:.0f} | {x['cpu_us']:.1f} | {x['steady_us']:.1f} | "
                  f"{x['rss_kib_conn']:.1f} | {x['setup_rate']:.0f} |")
        busy = next((s for d, s, _ in conns if d.startswith("8 busy")), None)
        if busy:
            for desc, s, _ in conns:
                if not desc.startswith("8 "):
                    w(f"\n{desc}: stampede's steady CPU per transaction is "
                      f"{s['steady_us'] / busy['steady_us']:.1f}x its figure at 8 busy clients "
                      f"(whole process: {s['cpu_us'] / busy['cpu_us']:.1f}x).")
        w("")
    if replay:
        w(replay)
    w("## Commands\n")
    w("```")
    seen = set()
    for c in commands:
        if c not in seen:
            seen.add(c)
            w(c)
    w("```")
    text = "\n".join(out) + "\n"
    with open(args.output, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
