"""stampede replay against pgreplay 1.2 (Debian's package) on one PostgreSQL: issue 33's comparison.

Owns: the synthetic capture both tools replay, the side-by-side replays, and the markdown section
of their figures. Touches no engine or stampede code; the server is the harness's (or one this
file starts when run alone).

The capture is a PostgreSQL 15 csvlog written here, line for line in the shape the server writes
(26 columns, as a real `log_destination = csvlog` with `log_statement = all`,
`log_connections` and `log_disconnections` writes them; the shape was copied from one): each
of S sessions opens with `connection authorized`, sends simple-protocol `statement:` lines and
closes with `disconnection`, N statements in all, their times spread evenly over --capture-s
seconds and the sessions' lines interleaved in time order. pgreplay reads it with `-c`
(csvlog); stampede detects the format. The statements: a point SELECT (50% of the units), a
one-row UPDATE (20%), and BEGIN; SELECT; UPDATE; COMMIT (30%), on table kv(k int primary key,
v int) of --rows rows. Each session has keys of its own (see `units`), so no replayed
statement waits for another session's lock, whatever order the sessions' statements overtake
each other in.

Both tools replay as fast as they go: stampede with `--speed max` (each session as fast as the
server answers it); pgreplay has no "max", so `-s` is a factor large enough that the 60 s
capture's schedule is due at once (1e6: 60 us), with `-j` (jump ahead when all sessions are
idle). Rounds alternate stampede, pgreplay, stampede, pgreplay (A B A B); before each run the
table is put back (TRUNCATE, the rows again, VACUUM ANALYZE, CHECKPOINT) so both start from the
same data. Per run: wall time of the process, statements/s (stampede: its JSON's
`replay.statements` over `measured_duration_s`; pgreplay: "SQL statements executed" over its
own "Total run time"; and both over wall time), and client CPU (user + system of the child
from wait4's rusage) per statement. Also: the seconds `stampede replay parse LOG -o FILE`
takes to turn the log into a replay file.

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


def server_cpu(data_dir):
    """The server's CPU seconds so far: the postmaster's own and its reaped children's (every
    backend of a finished session), from /proc/PID/stat (utime, stime, cutime, cstime); None
    when the data directory is not on this machine."""
    try:
        pid = int(open(os.path.join(data_dir, "postmaster.pid")).readline())
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except (OSError, ValueError):
        return None
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


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


def write_log(path, statements, sessions, rows, capture_s, seed=33):
    """A PostgreSQL 15 csvlog of `statements` statements over `sessions` sessions; returns the
    statement count by kind."""
    rng = random.Random(seed)
    # Each session's statements, whole units, dealt round robin until the total is reached.
    per = [[] for _ in range(sessions)]
    n, s = 0, 0
    while n < statements:
        u = units(rng, rows, s, sessions)[: statements - n]
        if u[0] == "BEGIN" and u[-1] != "COMMIT":
            # The log's last unit cut short would leave a transaction open: single SELECTs.
            u = [f"SELECT v FROM kv WHERE k = {s + 1}" for _ in u]
        per[s].extend(u)
        n += len(u)
        s = (s + 1) % sessions
    # Statement i of the log (in time order) goes to the session whose turn it is: the
    # sessions' next statements interleave, each session's in its own order.
    order = []
    left = [len(p) for p in per]
    while any(left):
        for i in range(sessions):
            if left[i]:
                order.append(i)
                left[i] -= 1
    start = datetime.datetime(2026, 11, 29, 9, 0, 0, tzinfo=datetime.timezone.utc)
    step = capture_s / max(len(order), 1)
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
            line(0.001 + j * step, i, nums[i], tag, f"{3 + i}/{nums[i]}", f"statement: {sql}", "app")
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


def commands(stampede, host, port, log, json_path):
    return {
        "stampede": [stampede, "replay", log, "--speed", "max", "-h", host, "-p", str(port),
                     "-U", "postgres", "-d", DB, "--no-observe", "--json", json_path],
        "pgreplay": [PGREPLAY, "-c", "-j", "-s", PGREPLAY_SPEED, "-h", host, "-p", str(port), log],
    }


def one_run(tool, cmd, json_path, expected, data_dir):
    s0 = server_cpu(data_dir)
    out, wall, cpu = timed(cmd)
    s1 = server_cpu(data_dir)
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


def measure(stampede, host, port, statements, sessions, rows, capture_s, rounds, workdir, log=print):
    """Generate the log, time the parse, and run the rounds; returns (figures, commands)."""
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = "%.1f" % os.getloadavg()[0]
    psql(host, port, f"DROP DATABASE IF EXISTS {DB}")
    psql(host, port, f"CREATE DATABASE {DB}")
    logf = os.path.join(workdir, "replaybench.csv")
    t = time.monotonic()
    kinds = write_log(logf, statements, sessions, rows, capture_s)
    log(f"  replay: wrote {statements} statements over {sessions} sessions in "
        f"{time.monotonic() - t:.1f} s ({os.path.getsize(logf) / 2**20:.0f} MiB): {kinds}")
    rfile = os.path.join(workdir, "replaybench.replay")
    parse = [stampede, "replay", "parse", logf, "-o", rfile]
    parses = []
    for _ in range(max(rounds, 2)):
        _, wall, cpu = timed(parse)
        parses.append((wall, cpu))
        log(f"  replay parse: {wall:.2f} s wall, {cpu:.2f} s CPU")
    json_path = os.path.join(workdir, "replay.json")
    cmds = commands(stampede, host, port, logf, json_path)
    res = {"stampede": [], "pgreplay": []}
    for r in range(rounds):
        for tool in ("stampede", "pgreplay"):
            reset(host, port, rows)
            x = one_run(tool, cmds[tool], json_path, statements, host)
            res[tool].append(x)
            log(f"  replay round {r + 1} {tool:8}: {x['rate']:9.0f} statements/s (own figure, "
                f"{x['secs']:.1f} s), {x['wall_rate']:9.0f} /s over {x['wall']:.1f} s wall, "
                f"{x['cpu_s']:.1f} s CPU = {x['cpu_us']:.1f} us/statement, server {x['server_s']:.1f} s CPU, "
                f"{x['busy']:.0%} of the machine's CPUs")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    figures = {"date": started, "commit": commit, "load": load,
               "statements": statements, "sessions": sessions, "rows": rows,
               "capture_s": capture_s, "rounds": rounds, "kinds": kinds,
               "parse_wall": statistics.median(p[0] for p in parses),
               "parse_cpu": statistics.median(p[1] for p in parses),
               "log_mib": os.path.getsize(logf) / 2**20,
               "res": res}
    return figures, [" ".join(parse), " ".join(cmds["stampede"]), " ".join(cmds["pgreplay"])]


def section(fig, cmds, reproduce):
    """The markdown section of RESULTS.md."""
    med = {t: {k: statistics.median(x[k] for x in v) for k in v[0]} for t, v in fig["res"].items()}
    s, p = med["stampede"], med["pgreplay"]
    pgv = subprocess.run([PGREPLAY, "-v"], capture_output=True, text=True)
    pgv = (pgv.stdout + pgv.stderr).strip().splitlines()[0] if (pgv.stdout + pgv.stderr).strip() else "pgreplay"
    kinds = ", ".join(f"{k.upper()} {v:,}" for k, v in sorted(fig["kinds"].items()))
    out = [f"{HEADING} ({pgv})\n",
           f"- {fig['date']}, stampede commit {fig['commit']} (release build), {os.cpu_count()} CPUs, "
           f"load average {fig['load']} at the start (other work on the machine takes CPU from the "
           "server and both clients)\n",
           f"A synthetic PostgreSQL 15 csvlog of {fig['statements']:,} simple-protocol statements over "
           f"{fig['sessions']} sessions, {fig['capture_s']:.0f} s of capture ({kinds}; "
           f"{fig['log_mib']:.0f} MiB), on table kv of {fig['rows']:,} rows, replayed as fast as each "
           f"tool goes: stampede `--speed max`, pgreplay `-s {PGREPLAY_SPEED} -j` (it has no max). "
           f"{fig['rounds']} rounds, alternating (stampede, pgreplay, stampede, ...), the table put "
           "back before each run; medians. Statements/s: each tool's own figure (stampede: "
           "`replay.statements` / `measured_duration_s` of its JSON; pgreplay: \"SQL statements "
           "executed\" / \"Total run time\" of its final statistics) and over the process's wall "
           "time; CPU: the client process's user + system time (rusage); server CPU: the postmaster's "
           "and its finished backends' (/proc/PID/stat), which shows whether the machine or the "
           "replayer was the limit. Unix socket; stampede "
           "with `--no-observe` (its lock-wait sampler would count as client CPU).\n",
           "| | pgreplay | stampede | stampede / pgreplay |",
           "|---|---|---|---|",
           f"| statements/s (own figure) | {p['rate']:,.0f} | {s['rate']:,.0f} | {s['rate'] / p['rate']:.2f}x |",
           f"| statements/s (over wall time) | {p['wall_rate']:,.0f} | {s['wall_rate']:,.0f} | "
           f"{s['wall_rate'] / p['wall_rate']:.2f}x |",
           f"| wall time, s | {p['wall']:.1f} | {s['wall']:.1f} | {s['wall'] / p['wall']:.2f}x |",
           f"| client CPU, s | {p['cpu_s']:.1f} | {s['cpu_s']:.1f} | {s['cpu_s'] / p['cpu_s']:.2f}x |",
           f"| client CPU per statement, us | {p['cpu_us']:.1f} | {s['cpu_us']:.1f} | "
           f"{s['cpu_us'] / p['cpu_us']:.2f}x |",
           f"| server CPU, s | {p['server_s']:.1f} | {s['server_s']:.1f} | {s['server_s'] / p['server_s']:.2f}x |",
           f"| client + server CPU / ({os.cpu_count()} CPUs x wall) | {p['busy']:.0%} | {s['busy']:.0%} | |",
           "",
           f"`stampede replay parse` of the log into a replay file: {fig['parse_wall']:.2f} s wall, "
           f"{fig['parse_cpu']:.2f} s CPU (median of {max(fig['rounds'], 2)}), "
           f"{fig['statements'] / fig['parse_wall']:,.0f} statements/s.\n",
           "Rounds:\n", "```"]
    for t, v in fig["res"].items():
        for i, x in enumerate(v):
            out.append(f"{t:8} round {i + 1}: {x['rate']:9.0f} statements/s own, {x['wall_rate']:9.0f} "
                       f"over {x['wall']:.1f} s wall, {x['cpu_s']:.1f} s CPU, server {x['server_s']:.1f} s CPU")
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
