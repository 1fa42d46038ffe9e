#!/usr/bin/env python3
"""stampede's benchmark harness: stampede and pgbench side by side on one PostgreSQL.

Every case runs both tools on the same server and data, interleaved A B A B for --rounds rounds,
and reports medians and ratios of
  - tps (committed transactions per second, as each tool prints it),
  - client CPU per transaction: user + system time of the client process (wait4 rusage) divided
    by the transactions it processed,
  - client RSS per connection: the client's peak RSS divided by its connections,
  - instructions per transaction: valgrind --tool=callgrind with 1 client at two transaction
    counts; the difference cancels start-up and connection cost (deterministic, noise-free),
  - load time: `stampede init tpcb -s N` against `pgbench -i -s N` (client- and server-side).

The server is stampede's own embedded PostgreSQL (`stampede server start`), with a unix socket
and TCP on 127.0.0.1. Results go to bench/RESULTS.md (regenerated, never edited) with the
machine, the date and every exact command.

Usage: bench/run [--quick] [--rounds N] [--seconds S] [--cases a,b,...]
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
    def __init__(self, bindir):
        self.dir = tempfile.mkdtemp(prefix="stampede-bench-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.bindir = bindir
        out = sh([STAMPEDE, "server", "start", "--data-dir", self.data, "--pg-bindir", bindir,
                  "--set", f"port={PORT}", "--set", "listen_addresses=127.0.0.1",
                  "--set", "max_connections=300"])
        self.settings = out.stderr.strip()
        self.socket = self.data

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
    res = {"stampede": [], "pgbench": []}
    for r in range(rounds):
        for tool, cmd in (("stampede", a_cmd), ("pgbench", b_cmd)):
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
                cmd = [STAMPEDE, "run"] + flag + base + ["--no-check", "--no-observe"] + t + ["-d", "postgres"]
            else:
                flag = {"select-only": ["-S"], "tpcb-like": ["-b", "tpcb-like"],
                        "tpcb-pipelined": ["-f", scriptfile]}[case]
                cmd = [pgbench] + flag + base + t + ["postgres"]
            counts.append(callgrind_instr(cmd))
        result[tool] = (counts[1] - counts[0]) / (n2 - n1)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--scale", type=int, default=10, help="scale of the data the runs use")
    ap.add_argument("--load-scale", type=int, default=50)
    ap.add_argument("--cases", default="select-only,tpcb-like,tpcb-pipelined,load,callgrind")
    ap.add_argument("--clients", default="8,64")
    ap.add_argument("--quick", action="store_true", help="1 round, 3 s, scale-5 load: a smoke test")
    ap.add_argument("--output", default=os.path.join(ROOT, "bench", "RESULTS.md"))
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.seconds, args.load_scale = 1, 3, 5
    cases = args.cases.split(",")
    clients_list = [int(c) for c in args.clients.split(",")]

    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "stampede"], cwd=ROOT, check=True)
    bindir = find_pg_bindir()
    pgbench = os.path.join(bindir, "pgbench")
    lines = []

    def log(s):
        print(s, flush=True)

    server = Server(bindir)
    scriptfile = os.path.join(server.dir, "tpcb-pipelined.sql")
    with open(scriptfile, "w") as f:
        f.write(PIPELINE_SCRIPT)
    started = datetime.datetime.now(datetime.timezone.utc)
    commands = []
    try:
        init = [pgbench, "-i", "-q", "-s", str(args.scale)] + server.target(False) + ["postgres"]
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
    finally:
        server.stop()

    write_results(args, started, table, instr, loads, commands, bindir)


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


def write_results(args, started, table, instr, loads, commands, bindir):
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
    if instr:
        w("## Instructions per transaction (callgrind, 1 client, unix socket)\n")
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
