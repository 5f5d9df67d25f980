#!/usr/bin/env python3
"""Compares two runs of the same scheduling-oracle scenario (two goldens),
for the determinism check of docs/slurm-oracle.md:

    slurm-sched-oracle-compare.py A.golden B.golden [--times]

Prints, per section kind, how many rows are equal once the wall-clock
parts are left out, and the rows that differ:

- sprio and sshare rows are compared whole (the at=/pass= of the section
  header is left out, and so is the AGE column unless both passes were as
  far from the jobs' eligibility);
- squeue rows without START; sacct rows without Submit/Eligible/Start/End
  and Flags (which scheduler started a job), i.e. who ran, where, in what
  state; with --times also the largest difference of Start and End.
Exit status 0 when everything compared is equal.
"""
import sys


def sections(path):
    out, cur = [], None
    with open(path) as f:
        for l in f:
            l = l.rstrip("\n")
            if l.startswith("#"):
                continue
            if l.startswith("["):
                cur = (l.strip("[]").split()[0], [])
                out.append(cur)
                continue
            if cur is not None:
                cur[1].append(l)
    return out


def key_rows(kind, rows):
    if not rows:
        return []
    head, body = rows[0].split("|"), rows[1:]
    if kind in ("actions", "passes", "sdiag"):
        return None
    drop = set()
    if kind == "squeue":
        drop = {"START"}
    elif kind == "sacct":
        drop = {"Submit", "Eligible", "Start", "End", "Flags"}
    elif kind == "sprio":
        drop = {"AGE", "N_AGE", "PRIORITY"}
    idx = [i for i, h in enumerate(head) if h not in drop]
    return ["|".join(r.split("|")[i] for i in idx if i < len(r.split("|"))) for r in body]


def sacct_times(rows):
    if not rows:
        return {}
    head = rows[0].split("|")
    js, st, en = head.index("JobID"), head.index("Start"), head.index("End")
    out = {}
    for r in rows[1:]:
        f = r.split("|")
        out.setdefault(f[js], []).append((f[st], f[en]))
    return out


def main():
    a, b = sys.argv[1], sys.argv[2]
    sa, sb = sections(a), sections(b)
    if [k for k, _ in sa] != [k for k, _ in sb]:
        print("sections differ: %s / %s" % ([k for k, _ in sa], [k for k, _ in sb]))
        return 1
    bad = 0
    counts = {}
    for (k, ra), (_, rb) in zip(sa, sb):
        ka, kb = key_rows(k, ra), key_rows(k, rb)
        if ka is None:
            continue
        n, same = counts.get(k, (0, 0))
        eq = sum(1 for x, y in zip(ka, kb) if x == y)
        counts[k] = (n + max(len(ka), len(kb)), same + eq)
        for x, y in zip(ka, kb):
            if x != y:
                bad += 1
                print("%s:\n  - %s\n  + %s" % (k, x, y))
        if len(ka) != len(kb):
            bad += 1
            print("%s: %d rows against %d" % (k, len(ka), len(kb)))
        if k == "sacct" and "--times" in sys.argv:
            ta, tb = sacct_times(ra), sacct_times(rb)
            d = []
            for j in ta:
                for (s1, e1), (s2, e2) in zip(ta[j], tb.get(j, [])):
                    for x, y in ((s1, s2), (e1, e2)):
                        if x != "-" and y != "-":
                            d.append(abs(int(x) - int(y)))
            if d:
                d.sort()
                print("sacct times: %d values, %d equal, median |diff| %d s, max %d s"
                      % (len(d), sum(1 for x in d if x == 0), d[len(d) // 2], d[-1]))
    print(" ".join("%s %d/%d" % (k, s, n) for k, (n, s) in counts.items()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
