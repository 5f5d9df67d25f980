#!/usr/bin/env python3
"""The scenario side of `scripts/slurm-oracle sched` (which starts and stops
MariaDB, munged, slurmdbd, slurmctld and the slurmds; this file writes
configuration and talks to the running daemons through the Slurm commands
on PATH).

    slurm-sched-oracle-play.py setup SCN DIR PORT MUNGE_SOCKET DB_PORT DB_NAME
        writes DIR/slurm.conf and DIR/slurmdbd.conf for SCN (slurmdbd on
        PORT, slurmctld on PORT+1, node i on PORT+2+i) and prints the node
        names, one a line
    slurm-sched-oracle-play.py accounts SCN
        creates the cluster, QOS, accounts and users of SCN with sacctmgr
        (slurmdbd must run; slurmctld need not)
    slurm-sched-oracle-play.py play SCN OUT
        plays the timeline of SCN against the slurmctld of $SLURM_CONF and
        writes the golden file OUT
    slurm-sched-oracle-play.py conf DIR OUT
        writes DIR/slurm.conf with its private paths, host and ports masked

The formats are in data/slurm-sched-oracle/README.md.
"""
import os
import re
import struct
import subprocess
import sys
import threading
import time

SYSTEM_USERS = ["daemon", "bin", "sys", "games", "man", "lp", "mail", "news",
                "uucp", "proxy", "www-data", "backup", "list", "irc"]
VERSION_TAG = "slurm-26-05-3-1"


def die(msg):
    raise SystemExit("slurm-sched-oracle-play: " + msg)


def words(line):
    """(head words, {key: value}) of a scenario line; a bare word after the
    head words becomes key -> True."""
    head, kv = [], {}
    for w in line.split():
        if "=" in w:
            k, _, v = w.partition("=")
            kv[k] = v
        elif kv:
            kv[w] = True
        else:
            head.append(w)
    return head, kv


def read_scn(path):
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f]
    lead = []
    while lines and lines[0].startswith("#"):
        lead.append(lines.pop(0))
    body = [l for l in lines if l.strip() and not l.lstrip().startswith("#")]
    return lead, body


class Scenario:
    def __init__(self, path):
        self.path = path
        self.lead, body = read_scn(path)
        self.conf = []          # (key, value)
        self.nodes = (0, 1)
        self.partitions = []    # (name, kv)
        self.accounts = []      # (name, kv)
        self.users = []         # (name, kv)
        self.qos = []           # (name, kv)
        self.timeline = []      # (T, line)
        self.user_map = {}      # scenario user -> system user
        for line in body:
            head, kv = words(line)
            what = head[0]
            if what == "conf":
                k, _, v = line.split(None, 1)[1].partition("=")
                self.conf.append((k.strip(), v.strip()))
            elif what == "nodes":
                self.nodes = (int(head[1]), int(kv.get("cpus", 1)))
            elif what == "partition":
                self.partitions.append((head[1], kv))
            elif what == "account":
                self.accounts.append((head[1], kv))
            elif what == "user":
                self.users.append((head[1], kv))
                self.map_user(head[1])
            elif what == "qos":
                self.qos.append((head[1], kv))
            elif what == "at":
                self.timeline.append((float(head[1]), line.split(None, 2)[2]))
            elif what == "end":
                self.timeline.append((None, "end"))
            else:
                die("%s: unknown line %r" % (path, line))
        for _, l in self.timeline:
            h, kv = words(l)
            if h and h[0] == "submit" and "user" in kv:
                self.map_user(kv["user"])

    def map_user(self, name):
        if name not in self.user_map:
            if len(self.user_map) >= len(SYSTEM_USERS):
                die("more than %d users" % len(SYSTEM_USERS))
            self.user_map[name] = SYSTEM_USERS[len(self.user_map)]

    def node_names(self):
        return ["n%03d" % (i + 1) for i in range(self.nodes[0])]


# --- setup -------------------------------------------------------------------

def base_conf(d, port, sock, host):
    return [
        ("ClusterName", "sorc"),
        ("SlurmctldHost", "%s(127.0.0.1)" % host),
        ("SlurmctldPort", str(port + 1)),
        ("SlurmUser", "root"),
        ("SlurmdUser", "root"),
        ("AuthType", "auth/munge"),
        ("AuthInfo", "socket=%s" % sock),
        ("CredType", "cred/munge"),
        ("StateSaveLocation", "%s/state" % d),
        ("SlurmdSpoolDir", "%s/spool/%%n" % d),
        ("SlurmctldPidFile", "%s/pid/slurmctld.pid" % d),
        ("SlurmdPidFile", "%s/pid/slurmd-%%n.pid" % d),
        ("SlurmctldLogFile", "%s/log/slurmctld.log" % d),
        ("SlurmdLogFile", "%s/log/slurmd-%%n.log" % d),
        ("SlurmctldDebug", "info"),
        ("SlurmdDebug", "error"),
        ("AccountingStorageType", "accounting_storage/slurmdbd"),
        ("AccountingStorageHost", "127.0.0.1"),
        ("AccountingStoragePort", str(port)),
        ("AccountingStoragePass", "socket=%s" % sock),
        ("AccountingStorageEnforce", "associations,limits,qos"),
        ("JobAcctGatherType", "jobacct_gather/none"),
        ("JobCompType", "jobcomp/none"),
        ("ProctrackType", "proctrack/linuxproc"),
        ("TaskPlugin", "task/none"),
        ("MpiDefault", "none"),
        ("ReturnToService", "2"),
        # The nodes may have more CPUs than the machine.
        ("SlurmdParameters", "config_overrides"),
        ("SlurmdTimeout", "600"),
        ("InactiveLimit", "0"),
        ("KillWait", "2"),
        ("MinJobAge", "3600"),
        ("CompleteWait", "0"),
        ("SelectType", "select/cons_tres"),
        ("SelectTypeParameters", "CR_CPU"),
        ("SchedulerType", "sched/backfill"),
        ("SchedulerParameters", "sched_interval=60,bf_interval=30"),
        ("PriorityType", "priority/multifactor"),
        ("PriorityDecayHalfLife", "0"),
        ("PriorityUsageResetPeriod", "NONE"),
        ("PriorityCalcPeriod", "1"),
        ("PreemptType", "preempt/none"),
    ]


PART_KEYS = {"priority_tier": "PriorityTier", "priority_job_factor": "PriorityJobFactor",
             "preempt_mode": "PreemptMode", "max_time": "MaxTime", "state": "State"}


def setup(scn_path, d, port, sock, db_port, db_name):
    s = Scenario(scn_path)
    host = os.uname().nodename.split(".")[0]
    conf = base_conf(d, port, sock, host)
    for k, v in s.conf:
        for i, (k0, _) in enumerate(conf):
            if k0.lower() == k.lower():
                conf[i] = (k0, v)
                break
        else:
            conf.append((k, v))
    lines = ["%s=%s" % kv for kv in conf]
    n, cpus = s.nodes
    for i, name in enumerate(s.node_names()):
        lines.append("NodeName=%s NodeAddr=127.0.0.1 Port=%d CPUs=%d State=UNKNOWN"
                     % (name, port + 2 + i, cpus))
    for name, kv in s.partitions:
        p = {"Nodes": kv.get("nodes", "ALL"), "MaxTime": "INFINITE", "State": "UP",
             "OverSubscribe": "EXCLUSIVE"}
        for k, v in kv.items():
            if k in PART_KEYS:
                p[PART_KEYS[k]] = v
            elif k == "default":
                p["Default"] = "YES"
            elif k == "nodes":
                pass
            elif re.search("[A-Z]", k):
                p[k] = v
            else:
                die("partition %s: unknown key %s" % (name, k))
        lines.append("PartitionName=%s " % name + " ".join("%s=%s" % kv for kv in p.items()))
    with open(os.path.join(d, "slurm.conf"), "w") as f:
        f.write("\n".join(lines) + "\n")
    dbd = ["AuthType=auth/munge", "AuthInfo=socket=%s" % sock,
           "DbdAddr=127.0.0.1", "DbdHost=localhost", "DbdPort=%d" % port,
           "SlurmUser=root", "DebugLevel=info",
           "LogFile=%s/log/slurmdbd.log" % d, "PidFile=%s/pid/slurmdbd.pid" % d,
           "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1",
           "StoragePort=%d" % db_port, "StorageUser=slurm", "StoragePass=oracle",
           "StorageLoc=%s" % db_name]
    p = os.path.join(d, "slurmdbd.conf")
    with open(p, "w") as f:
        f.write("\n".join(dbd) + "\n")
    os.chmod(p, 0o600)
    print("\n".join(s.node_names()))


def mask_conf(d, out):
    with open(os.path.join(d, "slurm.conf")) as f:
        text = f.read()
    host = os.uname().nodename.split(".")[0]
    m = re.search(r"^AccountingStoragePort=(\d+)$", text, re.M)
    port = int(m.group(1))
    sock = re.search(r"^AuthInfo=socket=(\S+)$", text, re.M).group(1)
    text = text.replace(sock, "@MUNGE@").replace(d, "@DIR@")
    text = re.sub(r"^SlurmctldHost=%s\(" % re.escape(host), "SlurmctldHost=@HOST@(", text, flags=re.M)

    def port_sub(m):
        p = int(m.group(2))
        return "%s@PORT%s@" % (m.group(1), "" if p == port else "+%d" % (p - port))
    text = re.sub(r"^(AccountingStoragePort=|SlurmctldPort=)(\d+)$", port_sub, text, flags=re.M)
    text = re.sub(r"(Port=)(\d+)( CPUs=)", lambda m: port_sub(m) + m.group(3), text)
    with open(out, "w") as f:
        f.write("# The slurm.conf of this golden's run (private paths, host, ports masked).\n")
        f.write(text)


# --- accounts ------------------------------------------------------------------

def run(*argv, env=None, check=False):
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        die("%s failed (%d): %s%s" % (" ".join(argv), r.returncode, r.stdout, r.stderr))
    return r


def sacctmgr(*args):
    for attempt in range(5):
        r = run("sacctmgr", "-i", *args)
        if r.returncode == 0 or "Nothing new added" in r.stdout + r.stderr:
            return r
        time.sleep(1)
    die("sacctmgr %s failed: %s%s" % (" ".join(args), r.stdout, r.stderr))


QOS_KEYS = {"priority": "Priority", "preempt_mode": "PreemptMode", "grp_tres": "GrpTRES",
            "grp_jobs": "GrpJobs", "max_tres_per_user": "MaxTRESPerUser",
            "max_jobs_per_user": "MaxJobsPerUser", "max_wall": "MaxWall", "flags": "Flags",
            "usage_factor": "UsageFactor", "preempt_exempt_time": "PreemptExemptTime",
            "max_tres_per_job": "MaxTRESPerJob", "grp_submit": "GrpSubmitJobs",
            "max_submit_per_user": "MaxSubmitJobsPerUser"}
ASSOC_KEYS = {"fairshare": "Fairshare", "grp_tres": "GrpTRES", "grp_jobs": "GrpJobs",
              "max_jobs_per_user": "MaxJobs", "max_jobs": "MaxJobs", "max_wall": "MaxWall",
              "qos": "QOS", "parent": "Parent", "grp_submit": "GrpSubmitJobs",
              "max_tres_per_job": "MaxTRESPerJob", "default_qos": "DefaultQOS"}


def fields(kv, table, what, skip=()):
    out = []
    for k, v in kv.items():
        if k in skip:
            continue
        if k in table:
            out.append("%s=%s" % (table[k], v))
        elif re.search("[A-Z]", k):
            out.append("%s=%s" % (k, v))
        else:
            die("%s: unknown key %s" % (what, k))
    return out


def accounts(scn_path):
    s = Scenario(scn_path)
    sacctmgr("add", "cluster", "sorc")
    for name, kv in s.qos:
        sacctmgr("add", "qos", name, *fields(kv, QOS_KEYS, "qos " + name, skip=("preempt",)))
    for name, kv in s.qos:
        if "preempt" in kv:
            sacctmgr("modify", "qos", "where", "name=%s" % name, "set", "Preempt=%s" % kv["preempt"])
    all_qos = ",".join(["normal"] + [q for q, _ in s.qos if q != "normal"])
    for name, kv in s.accounts:
        kv = dict(kv)
        kv.setdefault("qos", all_qos)
        sacctmgr("add", "account", name, "cluster=sorc",
                 *fields(kv, ASSOC_KEYS, "account " + name))
    seen = set()
    for name, kv in s.users:
        kv = dict(kv)
        kv.setdefault("qos", all_qos)
        acct = kv.pop("account")
        extra = [] if name in seen else ["DefaultAccount=%s" % acct]
        seen.add(name)
        sacctmgr("add", "user", s.user_map[name], "cluster=sorc", "account=%s" % acct,
                 *extra, *fields(kv, ASSOC_KEYS, "user " + name))
    r = run("sacctmgr", "-n", "-P", "show", "assoc", "format=account,user,fairshare,qos")
    print(r.stdout, end="")


# --- talking to slurmctld -------------------------------------------------------

TENV = dict(os.environ, SLURM_TIME_FORMAT="%s")


def sdiag():
    """(main cycles, backfill cycles, backfilled jobs)"""
    out = run("sdiag").stdout
    main, _, bf = out.partition("Backfilling stats")
    m = re.search(r"Total cycles:\s*(\d+)", main)
    b = re.search(r"Total cycles:\s*(\d+)", bf)
    j = re.search(r"Total backfilled jobs \(since last slurm start\):\s*(\d+)", bf)
    return (int(m.group(1)) if m else 0, int(b.group(1)) if b else 0,
            int(j.group(1)) if j else 0)


def squeue_all():
    """[(slurm id, name, state, reason, nodes, start, end, priority)] of every job
    slurmctld knows, by id."""
    r = run("squeue", "-h", "-t", "all", "-o", "%i|%j|%T|%r|%N|%S|%e|%Q", env=TENV)
    if r.returncode != 0:
        die("squeue failed: " + r.stderr)
    jobs = []
    for l in r.stdout.splitlines():
        i, name, state, reason, nodes, start, end, prio = l.split("|")
        jobs.append((int(i), name, state, reason, nodes, start, end, prio))
    return sorted(jobs)


ACTIVE = ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED",
          "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT")


def epoch(s):
    try:
        v = int(s)
    except ValueError:
        return None
    return v if v > 0 else None


class Player:
    def __init__(self, scn, out):
        self.s = scn
        self.out = out
        self.golden = ["slurm %s tag=%s" % (run("slurmctld", "-V").stdout.split()[1], VERSION_TAG)]
        self.golden += scn.lead
        self.ids = {}           # scenario name -> [slurm ids]
        self.names = {}         # slurm id -> scenario name
        self.sys_to_user = {v: k for k, v in scn.user_map.items()}
        conf = open(os.environ["SLURM_CONF"]).read()
        self.state_dir = re.search(r"^StateSaveLocation=(\S+)$", conf, re.M).group(1)
        m = re.search(r"^SchedulerParameters=.*\bbf_interval=(\d+)", conf, re.M)
        self.bf_interval = int(m.group(1)) if m else 30
        self.actions = []
        self.sections = []
        self.last_event = 0
        self.released = False
        self.t0 = int(time.time())
        self.passes = []
        self.stop = False
        threading.Thread(target=self.watch_passes, daemon=True).start()

    def watch_passes(self):
        """Notes the start of every priority pass (the controller writes it
        to StateSaveLocation/priority_last_decay_ran after each)."""
        while not self.stop:
            p = self.last_pass()
            if p and (not self.passes or self.passes[-1] != p):
                self.passes.append(p)
            time.sleep(0.25)

    def now(self):
        return int(time.time()) - self.t0

    def rel(self, s):
        v = epoch(s)
        return "-" if v is None else str(v - self.t0)

    def last_pass(self):
        try:
            with open(os.path.join(self.state_dir, "priority_last_decay_ran"), "rb") as f:
                return struct.unpack(">q", f.read(8))[0]
        except (OSError, struct.error):
            return 0

    def job_ids(self, spec):
        out = []
        for name in spec.split(","):
            if name not in self.ids:
                die("unknown job %s" % name)
            out += [str(i) for i in self.ids[name]]
        return out

    def wait_quiet(self, main=0, bf=0, deadline=600):
        """Waits until no job is completing or configuring, then for `main`
        main-scheduler and `bf` backfill cycles to end."""
        t_end = time.time() + deadline
        while True:
            while any(j[2] in ("COMPLETING", "CONFIGURING") for j in squeue_all()):
                if time.time() > t_end:
                    die("jobs keep completing")
                time.sleep(0.2)
            m0, b0, _ = sdiag()
            # Backfill skips its cycle when nothing changed since the last
            # one (or nothing pends): wait for it at most two intervals.
            bf_end = time.time() + 2 * self.bf_interval + 5
            if not any(j[2] == "PENDING" for j in squeue_all()):
                bf_end = 0      # nothing for backfill to do
            while True:
                m, b, _ = sdiag()
                if m >= m0 + main and (b >= b0 + bf or time.time() > bf_end):
                    break
                if time.time() > t_end:
                    die("no scheduling cycles (main %d -> %d, backfill %d -> %d)" % (m0, m, b0, b))
                time.sleep(0.2)
            if not any(j[2] in ("COMPLETING", "CONFIGURING") for j in squeue_all()):
                return m - m0, b - b0

    def events_epoch(self):
        """Epoch second of the last submit/release/job end."""
        last = self.last_event
        for j in squeue_all():
            if j[2] not in ACTIVE:
                e = epoch(j[6])
                if e:
                    last = max(last, e)
        return last

    def wait_pass(self):
        e = self.events_epoch()
        t_end = time.time() + 200
        while self.last_pass() <= e:
            if time.time() > t_end:
                die("no priority pass after %d" % e)
            time.sleep(0.5)
            e = self.events_epoch()

    def snapshot_wait(self, prio, main=2, bf=1):
        if prio:
            self.wait_quiet(main=2 if self.released else 0)
            self.wait_pass()
            self.released = False
        else:
            return self.wait_quiet(main=main, bf=bf)

    def sprio(self, t):
        self.snapshot_wait(True)
        r = run("sprio", "-h", "-o",
                "%i|%r|%u|%o|%Y|%S|%A|%B|%F|%J|%P|%n|%Q|%N|%T|%a|%b|%f|%j|%p|%q")
        at, p = self.now(), self.last_pass() - self.t0
        rows = []
        for l in r.stdout.splitlines():
            f = [x.strip() for x in l.split("|")]
            jid = int(f[0])
            f[0] = self.names.get(jid, f[0])
            f[2] = self.sys_to_user.get(f[2], f[2])
            rows.append((jid, "|".join(f)))
        sec = ["[sprio %s at=%d pass=%d]" % (t, at, p),
               "JOBID|PARTITION|USER|ACCOUNT|PRIORITY|SITE|AGE|ASSOC|FAIRSHARE|JOBSIZE|PARTPRIO|"
               "QOSNAME|QOS|NICE|TRES|N_AGE|N_ASSOC|N_FAIRSHARE|N_JOBSIZE|N_PARTPRIO|N_QOS"]
        sec += [row for _, row in sorted(rows, key=lambda x: x[0])]
        self.golden += sec

    def sshare(self, t):
        self.snapshot_wait(True)
        r = run("sshare", "-l", "-a", "-P")
        at, p = self.now(), self.last_pass() - self.t0
        lines = r.stdout.splitlines()
        head = lines[0].split("|")
        iu, ir = head.index("User"), head.index("TRESRunMins")
        sec = ["[sshare %s at=%d pass=%d]" % (t, at, p), lines[0]]
        for l in lines[1:]:
            f = l.split("|")
            f[iu] = self.sys_to_user.get(f[iu], f[iu])
            f[ir] = "*"
            sec.append("|".join(f))
        self.golden += sec

    def squeue(self, t, kv):
        dm, db = self.snapshot_wait(False, int(kv.get("main", 2)), int(kv.get("bf", 1)))
        jobs = squeue_all()
        at = self.now()
        sec = ["[squeue %s at=%d main=%d bf=%d]" % (t, at, dm, db),
               "JOBID|STATE|REASON|NODELIST|START|PRIORITY"]
        for i, name, state, reason, nodes, start, end, prio in jobs:
            if state not in ACTIVE:
                continue
            sec.append("|".join([self.names.get(i, name), state, reason, nodes or "-",
                                 self.rel(start), prio]))
        self.golden += sec

    def submit(self, kv):
        name = kv["id"]
        user = kv["user"]
        args = ["sbatch", "--parsable", "-o", "/dev/null", "-e", "/dev/null",
                "--chdir=%s" % os.path.join(os.path.dirname(self.state_dir), "cwd"),
                "-J", name, "--uid=%s" % self.s.user_map[user], "-N", kv["nodes"],
                "-t", kv["time"]]
        for k, opt in (("account", "-A"), ("qos", "-q"), ("partition", "-p")):
            if k in kv:
                args += [opt, kv[k]]
        if "hold" in kv:
            args.append("-H")
        if "nice" in kv:
            args.append("--nice=%s" % kv["nice"])
        args += ["--wrap", "exec sleep %s" % kv["run"]]
        r = run(*args)
        if r.returncode != 0:
            msg = [l for l in r.stderr.splitlines() if l.strip()]
            self.golden.append("# reject %s: %s" % (name, msg[-1] if msg else r.returncode))
            return "reject " + (msg[-1] if msg else str(r.returncode))
        jid = int(r.stdout.strip().split(";")[0])
        self.ids.setdefault(name, []).append(jid)
        self.names[jid] = name
        return None

    def end(self):
        t_end = time.time() + 3600
        idle_since = None
        while True:
            jobs = [j for j in squeue_all() if j[2] in ACTIVE]
            if not jobs:
                break
            # Nothing runs and jobs still pend (held, or kept by a limit
            # no end of a job can lift): after 30 s of that, cancel them.
            # (A job waiting for its begin time, as a requeued one does,
            # will run: not that.)
            if all(j[2] == "PENDING" and j[3] != "BeginTime" for j in jobs):
                idle_since = idle_since or time.time()
                if time.time() - idle_since > 30:
                    run("scancel", *[str(j[0]) for j in jobs])
                    self.golden.append("# end: nothing ran for 30 s; cancelled the pending jobs %s"
                                       % ",".join(self.names.get(j[0], j[1]) for j in jobs))
                    idle_since = None
            else:
                idle_since = None
            if time.time() > t_end:
                die("jobs do not end: %s" % jobs)
            time.sleep(1)
        want = sorted(self.names)
        fmt = ("JobID,JobName,Account,User,QOS,Partition,Timelimit,Submit,Eligible,Start,End,"
               "NNodes,ReqTRES,AllocTRES,State,Flags,NodeList")
        t_end = time.time() + 300
        while True:
            r = run("sacct", "-a", "-X", "-D", "-P", "-n", "-S", "now-1days",
                    "--format=" + fmt, env=TENV)
            rows = [l.split("|") for l in r.stdout.splitlines() if l]
            done = {int(f[0]) for f in rows if f[0].isdigit() and epoch(f[10])}
            if all(j in done for j in want):
                break
            if time.time() > t_end:
                die("sacct lacks jobs: %s" % [j for j in want if j not in done])
            time.sleep(1)
        sec = ["[sacct]", "JobID|Account|User|QOS|Partition|Timelimit|Submit|Eligible|Start|End|"
               "NNodes|ReqTRES|AllocTRES|State|Flags|NodeList"]
        keyed = []
        for f in rows:
            jid = int(f[0]) if f[0].isdigit() else None
            if jid not in self.names:
                continue
            tl = f[6]
            m = re.fullmatch(r"(?:(\d+)-)?(\d+):(\d+):(\d+)", tl)
            if m:
                d_, h, mi, s = (int(x or 0) for x in m.groups())
                tl = str(d_ * 1440 + h * 60 + mi + (1 if s else 0))
            state = f[14].split()[0]
            keyed.append((jid, epoch(f[9]) or 0, "|".join([
                self.names[jid], f[2], self.sys_to_user.get(f[3], f[3]), f[4], f[5], tl,
                self.rel(f[7]), self.rel(f[8]), self.rel(f[9]), self.rel(f[10]), f[11],
                f[12], f[13], state, f[15], f[16]])))
        sec += [row for _, _, row in sorted(keyed)]
        self.golden += sec
        m, b, j = sdiag()
        self.golden += ["[sdiag]", "main_cycles=%d backfill_cycles=%d backfilled_jobs=%d" % (m, b, j)]

    def play(self):
        acts = ["[actions]"]
        ai = len(self.golden)
        self.golden.append(None)   # the [actions] section goes here
        for t, line in self.s.timeline:
            if t is not None:
                while time.time() < self.t0 + t:
                    time.sleep(min(0.2, self.t0 + t - time.time()))
            at = self.now()
            head, kv = words(line)
            what = head[0]
            tt = "%g" % t if t is not None else "end"
            note = None
            if what == "submit":
                note = self.submit(kv)
                self.last_event = int(time.time())
            elif what in ("release", "hold", "cancel"):
                spec = head[1] if len(head) > 1 else next(iter(kv))
                ids = self.job_ids(spec)
                if what == "cancel":
                    run("scancel", *ids, check=True)
                else:
                    run("scontrol", what, ",".join(ids), check=True)
                self.last_event = int(time.time())
                self.released = self.released or what == "release"
            elif what == "scontrol":
                r = run("scontrol", *line.split()[1:])
                if r.returncode != 0:
                    die("%s: %s" % (line, r.stderr))
                self.last_event = int(time.time())
            elif what == "sprio":
                self.sprio(tt)
            elif what == "sshare":
                self.sshare(tt)
            elif what == "squeue":
                self.squeue(tt, kv)
            elif what == "pass":
                self.wait_pass()
            elif what == "end":
                self.end()
            else:
                die("unknown action %r" % line)
            acts.append("%d|%s" % (at, "end" if t is None else "at %s %s" % (tt, line))
                        + ("" if note is None else " # " + note))
            print("%5d s  %s" % (self.now(), line), file=sys.stderr, flush=True)
        self.stop = True
        self.golden += ["[passes]", " ".join(str(p - self.t0) for p in self.passes)]
        self.golden[ai:ai + 1] = acts
        with open(self.out, "w") as f:
            f.write("\n".join(self.golden) + "\n")


def play(scn_path, out):
    p = Player(Scenario(scn_path), out)
    p.play()
    print("%s: %d jobs" % (os.path.basename(scn_path)[:-4], len(p.names)))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["setup"] and len(a) == 7:
        setup(a[1], a[2], int(a[3]), a[4], int(a[5]), a[6])
    elif a[:1] == ["accounts"] and len(a) == 2:
        accounts(a[1])
    elif a[:1] == ["play"] and len(a) == 3:
        play(a[1], a[2])
    elif a[:1] == ["conf"] and len(a) == 3:
        mask_conf(a[1], a[2])
    else:
        sys.exit(__doc__)
