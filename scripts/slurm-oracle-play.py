#!/usr/bin/env python3
"""The scenario side of scripts/slurm-oracle (which starts and stops the
daemons; this file only writes configuration and talks to a running
slurmctld through the Slurm commands on PATH).

    slurm-oracle-play.py setup SCN DIR PORT MUNGE_SOCKET
        writes DIR/slurm.conf and DIR/topology.conf (or, for `yaml` lines,
        DIR/topology.yaml) for the machine of SCN
        (node n... on 127.0.0.1, slurmctld on PORT, slurmd on PORT+1+i) and
        prints the node names, one a line, in slurm.conf order
    slurm-oracle-play.py play SCN OUT
        plays the actions of SCN against the slurmctld of $SLURM_CONF and
        writes the golden file OUT
    slurm-oracle-play.py hostlists CASES OUT
        runs `scontrol show hostnames|hostlist` for every case of CASES
        (lines "expand<TAB>expr" / "compress<TAB>names") and writes OUT

See docs/slurm-oracle.md for the golden format.
"""
import os
import re
import subprocess
import sys
import time


def read_scn(path):
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f]
    lead = []
    while lines and lines[0].startswith("#"):
        lead.append(lines.pop(0))
    return lead, lines


def expand_simple(expr):
    """Expands the node expressions the scenarios use: comma lists of
    prefix[a-b,c,...] (one bracket group) and plain names."""
    out = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", expr):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\]", item)
        if not m:
            out.append(item)
            continue
        pre, body = m.groups()
        for part in body.split(","):
            lo, _, hi = part.partition("-")
            hi = hi or lo
            for v in range(int(lo), int(hi) + 1):
                out.append(pre + str(v).zfill(len(lo)))
    return out


def machine(lines):
    kind, conf, yaml = None, [], []
    for l in lines:
        if l.startswith("topology "):
            kind = l.split()[1]
        elif l.startswith("conf "):
            conf.append(l[5:])
        elif l.startswith("yaml "):
            yaml.append(l[5:])
    nodes = []
    lists = [m.group(1) for m in (re.search(r"\bNodes=(\S+)", c) for c in conf) if m]
    # topology.yaml (ring, torus3d): every `nodes:` value, in file order.
    lists += [m.group(1) for m in (re.match(r"\s*(?:-\s*)?nodes:\s*(\S+)", y) for y in yaml) if m]
    for expr in lists:
        for n in expand_simple(expr):
            if n not in nodes:
                nodes.append(n)
    return kind, conf, yaml, nodes


def setup(scn, d, port, sock):
    _, lines = read_scn(scn)
    kind, conf, yaml, nodes = machine(lines)
    host = os.uname().nodename.split(".")[0]
    slot = os.path.basename(os.path.normpath(d))
    # A topology.yaml, when given, is what slurmctld reads (torus3d has no
    # topology.conf form).
    name, text = ("topology.yaml", yaml) if yaml else ("topology.conf", conf)
    with open(os.path.join(d, name), "w") as f:
        f.write("\n".join(text) + "\n")
    c = f"""ClusterName=oracle
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/pid/slurmctld.pid
SlurmdPidFile={d}/pid/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=error
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=600
InactiveLimit=0
KillWait=5
CompleteWait=30
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1,max_switch_wait=100000
PriorityType=priority/basic
TopologyPlugin=topology/{kind}
"""
    for i, n in enumerate(nodes):
        c += f"NodeName={n} NodeAddr=127.0.0.1 Port={port + 1 + i} CPUs=1 State=UNKNOWN\n"
    c += ("PartitionName=oracle Nodes=ALL Default=YES MaxTime=INFINITE "
          "State=UP OverSubscribe=EXCLUSIVE\n")
    with open(os.path.join(d, "slurm.conf"), "w") as f:
        f.write(c)
    print("\n".join(nodes))


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True)


def squeue():
    """{slurm job id: (state, nodes, reason)} of the jobs squeue shows."""
    r = run("squeue", "-h", "-o", "%i|%T|%N|%r")
    if r.returncode != 0:
        raise SystemExit("squeue failed: " + r.stderr)
    jobs = {}
    for l in r.stdout.splitlines():
        i, state, nodes, reason = l.split("|", 3)
        jobs[int(i)] = (state, nodes, reason)
    return jobs


def cycles():
    r = run("sdiag")
    m = re.search(r"Total cycles:\s*(\d+)", r.stdout)
    return int(m.group(1)) if m else 0


def settle():
    """Waits until no job is completing and two scheduling passes have
    ended since, then returns squeue's view."""
    deadline = time.time() + 120
    while True:
        while True:
            jobs = squeue()
            busy = [j for j, (s, _, r) in jobs.items()
                    if s in ("COMPLETING", "CONFIGURING")
                    or (s == "PENDING" and r == "None")]
            if not busy:
                break
            if time.time() > deadline:
                raise SystemExit("jobs %s do not settle" % busy)
            time.sleep(0.2)
        c0 = cycles()
        t0 = time.time()
        while cycles() < c0 + 2 and time.time() < t0 + 10:
            time.sleep(0.2)
        jobs = squeue()
        if not any(s in ("COMPLETING", "CONFIGURING") or (s == "PENDING" and r == "None")
                   for s, _, r in jobs.values()):
            return jobs


def play(scn, out):
    lead, lines = read_scn(scn)
    version = run("slurmctld", "-V").stdout.split()
    golden = list(lead) + [" ".join(version)]
    ids = {}          # scenario name -> slurm job id
    names = {}        # slurm job id -> scenario name
    started = set()   # slurm job ids started and not cancelled
    order = []        # slurm job ids in submission order
    decisions = 0
    for line in lines:
        golden.append(line)
        w = line.split()
        if not w or line.startswith("#") or w[0] in ("topology", "conf", "yaml"):
            continue
        if w[0] == "submit":
            name, args = w[1], ["sbatch", "--parsable", "-o", "/dev/null",
                                "-J", w[1]]
            for opt in w[2:]:
                k, _, v = opt.partition("=")
                if k == "nodes":
                    args.append("-N%s" % v)
                elif k == "segment":
                    args.append("--segment=%s" % v)
                elif k == "consolidate":
                    args.append("--consolidate-segments")
                elif k == "exclusive":
                    args.append("--exclusive=%s" % v)
                elif k == "switches":
                    args.append("--switches=%s" % v)
                else:
                    raise SystemExit("%s: unknown option %s" % (scn, opt))
            args += ["--wrap", "sleep 1000000"]
            r = run(*args)
            if r.returncode != 0:
                msg = [l for l in r.stderr.splitlines() if l.strip()]
                golden.append("reject %s %s" % (name, msg[-1] if msg else "exit %d" % r.returncode))
                continue
            jid = int(r.stdout.strip().split(";")[0])
            ids[name], names[jid] = jid, name
            order.append(jid)
        elif w[0] == "cancel":
            jid = ids.get(w[1])
            if jid is None:
                golden.append("# %s was never queued; nothing to cancel" % w[1])
                continue
            r = run("scancel", str(jid))
            if r.returncode != 0:
                raise SystemExit("scancel %s failed: %s" % (jid, r.stderr))
            order.remove(jid)
            started.discard(jid)
            del ids[w[1]]
        else:
            raise SystemExit("%s: unknown action %s" % (scn, line))
        t0 = time.time()
        jobs = settle()
        print("%6.2f s  %s" % (time.time() - t0, line), file=sys.stderr)
        new = sorted(j for j in order
                     if j not in started and j in jobs and jobs[j][0] != "PENDING")
        for j in new:
            golden.append("start %s %s" % (names[j], jobs[j][1]))
            started.add(j)
            decisions += 1
        lost = [j for j in order if j not in jobs]
        if lost:
            raise SystemExit("jobs %s left the queue unasked" % [names[j] for j in lost])
        first = True
        for j in order:
            if jobs[j][0] == "PENDING":
                golden.append("pending %s %s" % (names[j], jobs[j][2]))
                if first:
                    decisions += 1
                    first = False
    golden.append("# decisions: %d" % decisions)
    with open(out, "w") as f:
        f.write("\n".join(golden) + "\n")
    print("%s: %d decisions" % (os.path.basename(scn)[:-len(".scn")], decisions))


def hostlists(cases, out):
    version = run("scontrol", "-V").stdout.split()
    res = [" ".join(version)]
    with open(cases) as f:
        for l in f:
            kind, arg = l.rstrip("\n").split("\t", 1)
            r = run("scontrol", "show", "hostnames" if kind == "expand" else "hostlist", arg)
            if r.returncode != 0 or r.stderr.strip():
                res.append("refuse " + arg)
            elif kind == "expand":
                res.append("expand %s\t%s" % (arg, " ".join(r.stdout.split())))
            else:
                res.append("compress %s\t%s" % (arg, r.stdout.strip()))
    with open(out, "w") as f:
        f.write("\n".join(res) + "\n")
    print("hostlists: %d cases" % (len(res) - 1))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["setup"] and len(a) == 5:
        setup(a[1], a[2], int(a[3]), a[4])
    elif a[:1] == ["play"] and len(a) == 3:
        play(a[1], a[2])
    elif a[:1] == ["hostlists"] and len(a) == 3:
        hostlists(a[1], a[2])
    else:
        sys.exit(__doc__)
