"""stampede replay against pgreplay 1.2 (Debian's package): issue 33's comparison, three ways.

Owns: the synthetic captures both tools replay, the side-by-side replays, the null endpoint's
start and stop, and the markdown section of their figures. Touches no engine or stampede code;
the PostgreSQL is the harness's (or one this file starts when run alone).

A capture is a PostgreSQL 15 csvlog written here, line for line in the shape the server writes
(26 columns, as a real `log_destination = csvlog` with `log_statement = all`,
`log_connections` and `log_disconnections` writes them; the shape was copied from one): each
of S sessions opens with `connection authorized`, sends simple-protocol `statement:` lines and
closes with `disconnection`, N statements in all over --capture-s seconds. pgreplay reads it
with `-c` (csvlog); stampede detects the format. The statements: a point SELECT (50% of the
units), a one-row UPDATE (20%), and BEGIN; SELECT; UPDATE; COMMIT (30%), on table kv(k int
primary key, v int) of --rows rows. Each session has keys of its own (see `units`), so no
replayed statement waits for another session's lock, whatever order the sessions' statements
overtake each other in.

The same statements are written in two shapes (`write_log`): "capture", as a server logs an
application whose sessions pause between units, and "interleaved", one statement of each
session in turn. pgreplay replays in the log's order and waits whenever the next line's session
is still busy, so the shape sets its pace (the interleaved one is its best case); stampede runs
each session on its own. The comparisons (`CASES`): the capture shape on PostgreSQL, the
interleaved shape on PostgreSQL, and the interleaved shape against bench/null_pg.rs, an
endpoint that answers every statement at once, where what is left is each replayer's own work.

Both tools replay as fast as they go: stampede with `--speed max` (each session as fast as the
server answers it); pgreplay has no "max", so `-s` is a factor large enough that the 60 s
capture's schedule is due at once (1e6: 60 us), with `-j` (jump ahead when all sessions are
idle). Rounds alternate stampede, pgreplay, stampede, pgreplay (A B A B); before each run on
PostgreSQL the table is put back (TRUNCATE, the rows again, VACUUM ANALYZE, CHECKPOINT) so both
start from the same data. Per run: wall time of the process, statements/s (stampede: its JSON's
`replay.statements` over `measured_duration_s`; pgreplay: "SQL statements executed" over its
own "Total run time"; and both over wall time), client CPU (user + system of the child from
wait4's rusage) per statement, and the server's CPU. Also: the seconds `stampede replay parse
LOG -o FILE` takes to turn the log into a replay file.

Used by bench/harness.py (case `replay`; `bench/run --cases replay` runs only it and replaces
only this section of bench/RESULTS.md); runnable alone, with its own server:
    python3 bench/replay_case.py --stampede target/release/stampede --statements 100000
"""

import argparse
import datetime
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time

PGREPLAY = "/usr/bin/pgreplay"
DB = "replaybench"
HEADING = "## Replay: stampede replay against pgreplay"
# pgreplay's `-s`: the capture's 60 s become 60 us.
PGREPLAY_SPEED = "1000000"


def timed(cmd):
    """Run cmd; return (stdout+stderr, wall seconds, child CPU seconds user+system)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.stdout.close()
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {code}:\n{out[-3000:]}")
    return out, wall, ru.ru_utime + ru.ru_stime


def postmaster_pid(data_dir):
    try:
        return int(open(os.path.join(data_dir, "postmaster.pid")).readline())
    except (OSError, ValueError):
        return None


def children(pid):
    """The /proc/PID/stat fields (after the command name) of every child of `pid`."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                f = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(f[1]) == pid:
                out.append(f)
    return out


def server_cpu(data_dir):
    """The server's CPU seconds so far: the postmaster's own, its reaped children's (cutime,
    cstime: every backend of a finished session) and its live children's (the background
    processes, and any backend still connected), from /proc/PID/stat; None when the data
    directory is not on this machine. Read when no replayed session's backend is left
    (`settled`): a backend that exits between the two readings would count in neither."""
    pid = postmaster_pid(data_dir)
    if pid is None:
        return None
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    total = sum(int(x) for x in fields[11:15])
    total += sum(int(f[11]) + int(f[12]) for f in children(pid))
    return total / os.sysconf("SC_CLK_TCK")


def settled(data_dir, count, limit_s=30.0):
    """Wait until the postmaster has `count` children again (the replayer's backends have
    exited and been reaped), at most `limit_s`."""
    pid = postmaster_pid(data_dir)
    deadline = time.monotonic() + limit_s
    while pid is not None and len(children(pid)) > count and time.monotonic() < deadline:
        time.sleep(0.05)


def psql(host, port, sql, db="postgres"):
    subprocess.run(["psql", "-qX", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", str(port),
                    "-U", "postgres", "-d", db, "-c", sql], check=True, stdout=subprocess.DEVNULL)


def reset(host, port, rows):
    """The table as every run starts from it."""
    psql(host, port, "DROP TABLE IF EXISTS kv", DB)
    psql(host, port, "CREATE TABLE kv (k int PRIMARY KEY, v int NOT NULL)", DB)
    psql(host, port, f"INSERT INTO kv SELECT g, 0 FROM generate_series(1, {rows}) g", DB)
    psql(host, port, "VACUUM ANALYZE kv", DB)
    psql(host, port, "CHECKPOINT", DB)


def units(rng, rows, session, sessions):
    """One unit of session `session`'s work: its statements (simple protocol, literal values).
    Each session has its own keys (k = session + 1 modulo sessions): as in a real capture, no
    session's statement is logged while it waits for a lock another holds. Shared keys would
    make a log no server could have written (session A's next statement logged while its
    UPDATE still waits for B's COMMIT, logged later), on which pgreplay, replaying in log
    order, waits forever."""
    x = rng.random()
    k = session + 1 + sessions * rng.randrange(rows // sessions)
    if x < 0.5:
        return [f"SELECT v FROM kv WHERE k = {k}"]
    if x < 0.7:
        return [f"UPDATE kv SET v = v + 1 WHERE k = {k}"]
    return ["BEGIN", f"SELECT v FROM kv WHERE k = {k}",
            f"UPDATE kv SET v = v + {rng.randint(1, 9)} WHERE k = {k}", "COMMIT"]


# The time a replayed session needs between two statements of one unit in the simulated capture:
# the server's answer and the client's round trip (a point SELECT or UPDATE on a small table).
IN_UNIT_GAP_S = 0.0001


def write_log(path, statements, sessions, rows, capture_s, shape="interleaved", seed=33):
    """A PostgreSQL 15 csvlog of `statements` statements over `sessions` sessions; returns the
    statement count by kind.

    `shape` is how the sessions' statements lie in the log:
    - "interleaved": one statement of each session in turn, evenly spaced, as if all sessions
      were always busy: a statement's session is free again long before its next statement
      comes up in the log, so a replayer that follows the log's order is never held up;
    - "capture": as a server writes the log of an application with pauses: each session runs
      a unit (a statement, or BEGIN ... COMMIT) with IN_UNIT_GAP_S between its statements,
      then waits a random (exponential) pause until its next unit, the pauses sized to fill
      `capture_s`; the lines are in the order of their times, so a unit's statements come up
      close together in the log."""
    rng = random.Random(seed)
    # Each session's units, whole, dealt round robin until the total is reached.
    per = [[] for _ in range(sessions)]
    n, s = 0, 0
    while n < statements:
        u = units(rng, rows, s, sessions)[: statements - n]
        if u[0] == "BEGIN" and u[-1] != "COMMIT":
            # The log's last unit cut short would leave a transaction open: single SELECTs.
            u = [f"SELECT v FROM kv WHERE k = {s + 1}" for _ in u]
        per[s].append(u)
        n += len(u)
        s = (s + 1) % sessions
    # (time in seconds, session) of every statement, in the log's order.
    timed = []
    if shape == "interleaved":
        left = [sum(len(u) for u in p) for p in per]
        j, total = 0, sum(left)
        step = capture_s / max(total, 1)
        while any(left):
            for i in range(sessions):
                if left[i]:
                    timed.append((0.001 + j * step, i))
                    left[i] -= 1
                    j += 1
    elif shape == "capture":
        for i, us in enumerate(per):
            busy = sum(len(u) - 1 for u in us) * IN_UNIT_GAP_S
            mean_pause = max(capture_s - busy, 0.0) / max(len(us), 1)
            t = 0.001 + rng.random() * mean_pause
            for u in us:
                for k in range(len(u)):
                    timed.append((t, i))
                    t += IN_UNIT_GAP_S if k + 1 < len(u) else rng.expovariate(1 / mean_pause)
        timed.sort()
    else:
        raise ValueError(shape)
    per = [[sql for u in p for sql in u] for p in per]
    order = [i for _, i in timed]
    times = [t for t, _ in timed]
    capture_s = max(capture_s, times[-1] if times else 0.0)
    start = datetime.datetime(2026, 11, 29, 9, 0, 0, tzinfo=datetime.timezone.utc)
    pid0 = 40000

    def ts(sec):
        t = start + datetime.timedelta(seconds=sec)
        return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d} UTC"

    sess_start = start.strftime("%Y-%m-%d %H:%M:%S UTC")
    kinds = {}
    with open(path, "w") as f:

        def q(v):
            # PostgreSQL's csvlog quotes every text column it fills, doubling inner quotes.
            return '"' + v.replace('"', '""') + '"'

        def line(sec, i, num, tag, vxid, msg, app):
            pid = pid0 + i
            sid = f"{int(start.timestamp()):x}.{pid:x}"
            f.write(f"{ts(sec)},{q('postgres')},{q(DB)},{pid},{q('[local]')},{sid},{num},{q(tag)},"
                    f"{sess_start},{vxid},0,LOG,00000,{q(msg)},,,,,,,,,{q(app)},{q('client backend')},,0\n")

        nums = [1] * sessions
        intx = [False] * sessions
        for i in range(sessions):
            line(0.0, i, nums[i], "authentication", f"{3 + i}/1",
                 f"connection authorized: user=postgres database={DB} application_name=app", "")
            nums[i] += 1
        nxt = [0] * sessions
        for j, i in enumerate(order):
            sql = per[i][nxt[i]]
            nxt[i] += 1
            kind = sql.split()[0].lower()
            kinds[kind] = kinds.get(kind, 0) + 1
            tag = "idle in transaction" if intx[i] else "idle"
            line(times[j], i, nums[i], tag, f"{3 + i}/{nums[i]}", f"statement: {sql}", "app")
            nums[i] += 1
            intx[i] = (intx[i] or kind == "begin") and kind != "commit"
        end = capture_s + 0.002
        for i in range(sessions):
            line(end, i, nums[i], "idle", "",
                 f"disconnection: session time: 0:01:00.002 user=postgres database={DB} host=[local]",
                 "app")
    return kinds


# pgreplay's final statistics.
PGR_STMTS = re.compile(r"SQL statements executed:\s+(\d+)")
# "Total run time: 1 minutes 46.887 seconds" (hours and minutes only when non-zero).
PGR_TIME = re.compile(r"Total run time:\s+(?:(\d+) hours? )?(?:(\d+) minutes? )?([0-9.]+) seconds")
PGR_ERRORS = re.compile(r"\((\d+) or [0-9.]+% of these completed with error\)")


# The comparisons, each a log shape on an endpoint: PostgreSQL, or bench/null_pg.rs, which
# answers every statement at once (the replayers' own ceiling, with the server's work taken out).
CASES = [
    ("capture", "postgres",
     "a log shaped as a server writes it (sessions pause between units, a unit's statements close "
     "together in the log), on PostgreSQL"),
    ("interleaved", "postgres",
     "the sessions' statements interleaved one by one (pgreplay's best case: a statement's session "
     "is free again long before its next one comes up in the log), on PostgreSQL"),
    ("interleaved", "null",
     "the interleaved log against bench/null_pg.rs, an endpoint that answers every statement at once: "
     "each replayer's own ceiling"),
]


def commands(stampede, host, port, log, json_path):
    return {
        "stampede": [stampede, "replay", log, "--speed", "max", "-h", host, "-p", str(port),
                     "-U", "postgres", "-d", DB, "--no-observe", "--json", json_path],
        "pgreplay": [PGREPLAY, "-c", "-j", "-s", PGREPLAY_SPEED, "-h", host, "-p", str(port), log],
    }


def process_cpu(pid):
    """A process's own CPU seconds (utime + stime, /proc/PID/stat)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def one_run(tool, cmd, json_path, expected, server_cpu_now, settle=lambda: None):
    s0 = server_cpu_now()
    out, wall, cpu = timed(cmd)
    settle()
    s1 = server_cpu_now()
    if tool == "stampede":
        v = json.load(open(json_path))
        r = v["replay"]
        n, secs = r["statements"], v["measured_duration_s"]
        failed = r.get("failed", 0)
    else:
        m, t, e = PGR_STMTS.search(out), PGR_TIME.search(out), PGR_ERRORS.search(out)
        if not (m and t):
            raise SystemExit(f"no statistics in pgreplay's output:\n{out[-3000:]}")
        secs = int(t.group(1) or 0) * 3600 + int(t.group(2) or 0) * 60 + float(t.group(3))
        n, failed = int(m.group(1)), int(e.group(1)) if e else -1
    if n != expected or failed:
        raise SystemExit(f"{tool} replayed {n} statements ({failed} failed), the log has {expected}:\n"
                         f"{out[-3000:]}")
    server = s1 - s0 if s0 is not None and s1 is not None else float("nan")
    return {"rate": n / secs, "secs": secs, "wall": wall, "wall_rate": n / wall,
            "cpu_s": cpu, "cpu_us": cpu * 1e6 / n, "n": n, "server_s": server,
            "busy": (cpu + server) / (wall * os.cpu_count())}


class NullEndpoint:
    """bench/null_pg.rs, compiled with rustc -O and listening on a socket of its own."""

    def __init__(self, workdir, port):
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "null_pg.rs")
        self.bin = os.path.join(workdir, "null_pg")
        subprocess.run(["rustc", "-O", "--edition", "2021", "-o", self.bin, src], check=True)
        self.dir = tempfile.mkdtemp(prefix="null-pg-", dir=workdir)
        self.port = port
        self.proc = subprocess.Popen([self.bin, self.dir, str(port)])
        sock = os.path.join(self.dir, f".s.PGSQL.{port}")
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        else:
            raise SystemExit("bench/null_pg.rs did not start")

    def cpu(self):
        return process_cpu(self.proc.pid)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def measure(stampede, host, port, statements, sessions, rows, capture_s, rounds, workdir, log=print):
    """Generate the logs, time the parse, and run each comparison's rounds; returns (figures,
    commands)."""
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = "%.1f" % os.getloadavg()[0]
    psql(host, port, f"DROP DATABASE IF EXISTS {DB}")
    psql(host, port, f"CREATE DATABASE {DB}")
    logs, kinds = {}, None
    for shape in dict.fromkeys(c[0] for c in CASES):
        logs[shape] = os.path.join(workdir, f"replaybench-{shape}.csv")
        t = time.monotonic()
        kinds = write_log(logs[shape], statements, sessions, rows, capture_s, shape)
        log(f"  replay: wrote the {shape} log, {statements} statements over {sessions} sessions in "
            f"{time.monotonic() - t:.1f} s ({os.path.getsize(logs[shape]) / 2**20:.0f} MiB): {kinds}")
    rfile = os.path.join(workdir, "replaybench.replay")
    parse = [stampede, "replay", "parse", logs[CASES[0][0]], "-o", rfile]
    parses = []
    for _ in range(max(rounds, 2)):
        _, wall, cpu = timed(parse)
        parses.append((wall, cpu))
        log(f"  replay parse: {wall:.2f} s wall, {cpu:.2f} s CPU")
    json_path = os.path.join(workdir, "replay.json")
    null = NullEndpoint(workdir, int(port) + 1) if any(c[1] == "null" for c in CASES) else None
    pg_cpu = lambda: server_cpu(host)  # noqa: E731
    res, all_cmds = {}, [" ".join(parse)]
    try:
        for shape, endpoint, _ in CASES:
            key = f"{shape} on {endpoint}"
            if endpoint == "null":
                cmds = commands(stampede, null.dir, null.port, logs[shape], json_path)
                # Nothing to count against: the endpoint keeps nothing.
                cmds["stampede"].append("--no-check")
                cpu_now = null.cpu
            else:
                cmds = commands(stampede, host, port, logs[shape], json_path)
                cpu_now = pg_cpu
            all_cmds += [" ".join(cmds["stampede"]), " ".join(cmds["pgreplay"])]
            res[key] = {"stampede": [], "pgreplay": []}
            for r in range(rounds):
                for tool in ("stampede", "pgreplay"):
                    settle = lambda: None  # noqa: E731
                    if endpoint == "postgres":
                        reset(host, port, rows)
                        pid = postmaster_pid(host)
                        idle = len(children(pid)) if pid else 0
                        settle = lambda: settled(host, idle)  # noqa: E731
                    x = one_run(tool, cmds[tool], json_path, statements, cpu_now, settle)
                    res[key][tool].append(x)
                    log(f"  replay {key}, round {r + 1} {tool:8}: {x['rate']:9.0f} statements/s (own "
                        f"figure, {x['secs']:.1f} s), {x['wall_rate']:9.0f} /s over {x['wall']:.1f} s "
                        f"wall, {x['cpu_s']:.1f} s CPU = {x['cpu_us']:.1f} us/statement, server "
                        f"{x['server_s']:.1f} s CPU, {x['busy']:.0%} of the machine's CPUs")
    finally:
        if null:
            null.stop()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    figures = {"date": started, "commit": commit, "load": load,
               "statements": statements, "sessions": sessions, "rows": rows,
               "capture_s": capture_s, "rounds": rounds, "kinds": kinds,
               "parse_wall": statistics.median(p[0] for p in parses),
               "parse_cpu": statistics.median(p[1] for p in parses),
               "log_mib": os.path.getsize(logs[CASES[0][0]]) / 2**20,
               "res": res}
    return figures, all_cmds


def table(res):
    """One comparison's table: medians of its rounds."""
    med = {t: {k: statistics.median(x[k] for x in v) for k in v[0]} for t, v in res.items()}
    s, p = med["stampede"], med["pgreplay"]
    return [
        "| | pgreplay | stampede | stampede / pgreplay |",
        "|---|---|---|---|",
        f"| statements/s (own figure) | {p['rate']:,.0f} | {s['rate']:,.0f} | **{s['rate'] / p['rate']:.2f}x** |",
        f"| statements/s (over wall time) | {p['wall_rate']:,.0f} | {s['wall_rate']:,.0f} | "
        f"{s['wall_rate'] / p['wall_rate']:.2f}x |",
        f"| wall time, s | {p['wall']:.1f} | {s['wall']:.1f} | {s['wall'] / p['wall']:.2f}x |",
        f"| client CPU, s | {p['cpu_s']:.1f} | {s['cpu_s']:.1f} | {s['cpu_s'] / p['cpu_s']:.2f}x |",
        f"| client CPU per statement, us | {p['cpu_us']:.1f} | {s['cpu_us']:.1f} | "
        f"{s['cpu_us'] / p['cpu_us']:.2f}x |",
        f"| server CPU, s | {p['server_s']:.1f} | {s['server_s']:.1f} | {s['server_s'] / p['server_s']:.2f}x |",
        f"| client + server CPU / ({os.cpu_count()} CPUs x wall) | {p['busy']:.0%} | {s['busy']:.0%} | |",
    ]


def section(fig, cmds, reproduce):
    """The markdown section of RESULTS.md."""
    pgv = subprocess.run([PGREPLAY, "-v"], capture_output=True, text=True)
    pgv = (pgv.stdout + pgv.stderr).strip().splitlines()[0] if (pgv.stdout + pgv.stderr).strip() else "pgreplay"
    kinds = ", ".join(f"{k.upper()} {v:,}" for k, v in sorted(fig["kinds"].items()))
    out = [f"{HEADING} ({pgv})\n",
           f"- {fig['date']}, stampede commit {fig['commit']} (release build), {os.cpu_count()} CPUs, "
           f"load average {fig['load']} at the start (other work on the machine takes CPU from the "
           "server and both clients)\n",
           f"Synthetic PostgreSQL 15 csvlogs of {fig['statements']:,} simple-protocol statements over "
           f"{fig['sessions']} sessions, {fig['capture_s']:.0f} s of capture ({kinds}; "
           f"{fig['log_mib']:.0f} MiB), on table kv of {fig['rows']:,} rows, replayed as fast as each "
           f"tool goes: stampede `--speed max`, pgreplay `-s {PGREPLAY_SPEED} -j` (it has no max). "
           "The same statements in two shapes (bench/replay_case.py `write_log`): as a server "
           "logs an application whose sessions pause between units (a unit's statements "
           f"{IN_UNIT_GAP_S * 1e6:.0f} us apart, exponential pauses filling the capture), and "
           "interleaved one statement per session in turn. pgreplay sends in the log's order and "
           "waits whenever the next line's session is still busy, so the shape sets its pace; "
           "stampede runs every session on its own and does not care. "
           f"{fig['rounds']} rounds per comparison, alternating (stampede, pgreplay, stampede, ...), "
           "the table put back before each run on PostgreSQL; medians. Statements/s: each tool's "
           "own figure (stampede: `replay.statements` / `measured_duration_s` of its JSON; "
           "pgreplay: \"SQL statements executed\" / \"Total run time\" of its final statistics) and "
           "over the process's wall time; CPU: the client process's user + system time (rusage); "
           "server CPU: the postmaster's, its background "
           "processes' and its backends' (/proc/PID/stat, read once the replayer's backends have "
           "exited), or the null endpoint's own, which shows whether the machine or the replayer "
           "was the limit. Unix "
           "sockets; stampede with `--no-observe` (its lock-wait sampler would count as client "
           "CPU).\n"]
    for (shape, endpoint, words), key in zip(CASES, fig["res"]):
        out += [f"**{words[0].upper() + words[1:]}:**\n"] + table(fig["res"][key]) + [""]
    out += [f"`stampede replay parse` of the log into a replay file: {fig['parse_wall']:.2f} s wall, "
            f"{fig['parse_cpu']:.2f} s CPU (median of {max(fig['rounds'], 2)}), "
            f"{fig['statements'] / fig['parse_wall']:,.0f} statements/s.\n",
            "Rounds:\n", "```"]
    for key, by_tool in fig["res"].items():
        for t, v in by_tool.items():
            for i, x in enumerate(v):
                out.append(f"{key:23} {t:8} round {i + 1}: {x['rate']:9.0f} statements/s own, "
                           f"{x['wall_rate']:9.0f} over {x['wall']:.1f} s wall, {x['cpu_s']:.1f} s CPU, "
                           f"server {x['server_s']:.1f} s CPU")
    out += ["```", "", f"Reproduce: `{reproduce}`. Commands:\n", "```"] + cmds + ["```", ""]
    return "\n".join(out)


def splice(path, text):
    """Put `text` in place of this case's section of `path` (from its heading to the next `## `),
    or before `## Commands` when it has none: the rest of the file stays as it was."""
    old = open(path).read() if os.path.exists(path) else ""
    lines = old.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith(HEADING)), None)
    if start is None:
        start = end = next((i for i, l in enumerate(lines) if l == "## Commands"), len(lines))
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    new = "\n".join(lines[:start] + text.rstrip("\n").split("\n") + [""] + lines[end:])
    with open(path, "w") as f:
        f.write(new if new.endswith("\n") else new + "\n")


def main():
    import harness
    ap = argparse.ArgumentParser()
    ap.add_argument("--stampede", default="target/release/stampede")
    ap.add_argument("--statements", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--capture-s", type=float, default=60.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--output", help="splice the section into this results file")
    a = ap.parse_args()
    harness.STAMPEDE = os.path.abspath(a.stampede)
    server = harness.Server(harness.find_pg_bindir())
    try:
        fig, cmds = measure(harness.STAMPEDE, server.socket, server.port, a.statements, a.sessions,
                            a.rows, a.capture_s, a.rounds, server.dir)
    finally:
        server.stop()
    text = section(fig, cmds, "python3 bench/replay_case.py " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(a).items() if v is not None and k != "output"))
    print(text)
    if a.output:
        splice(a.output, text)


if __name__ == "__main__":
    main()
