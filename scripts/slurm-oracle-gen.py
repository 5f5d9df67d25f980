#!/usr/bin/env python3
"""Writes the scenario inputs and hostlist cases of the Slurm oracle.

    python3 scripts/slurm-oracle-gen.py scenarios DIR   # DIR/<name>.scn
    python3 scripts/slurm-oracle-gen.py hostlists       # one case a line on stdout

Everything is drawn from random.Random with a fixed seed per file, so the
output is the same on every run; the generated .scn files are checked in
next to the hand-written ones (data/slurm-oracle/scenarios/). See
docs/slurm-oracle.md.
"""
import os
import random
import re
import sys

# --- machines -------------------------------------------------------------


def racks(sizes, block_sizes):
    """topology.conf lines for racks of the given sizes, nodes n000.. in order."""
    lines, first = [], 0
    for r, size in enumerate(sizes):
        last = first + size - 1
        lines.append("BlockName=r%d Nodes=n[%03d-%03d]" % (r, first, last))
        first = last + 1
    lines.append("BlockSizes=" + ",".join(str(b) for b in block_sizes))
    return "block", lines, first


def tree(spines, leaves_per_spine, nodes_per_leaf):
    """topology.conf lines for leaves under spines (under one core when
    there are two or more spines); nodes n000.. in leaf order."""
    lines, first, leaf = [], 0, 0
    for _ in range(spines * leaves_per_spine):
        last = first + nodes_per_leaf - 1
        lines.append("SwitchName=leaf%d Nodes=n[%03d-%03d]" % (leaf, first, last))
        first, leaf = last + 1, leaf + 1
    for s in range(spines):
        lo, hi = s * leaves_per_spine, (s + 1) * leaves_per_spine - 1
        lines.append("SwitchName=spine%d Switches=leaf[%d-%d]" % (s, lo, hi))
    if spines > 1:
        lines.append("SwitchName=core Switches=spine[0-%d]" % (spines - 1))
    return "tree", lines, first


# --- workloads ------------------------------------------------------------


class Script:
    def __init__(self, comment, machine):
        self.kind, self.conf, self.nodes = machine
        self.comment = comment
        self.actions = []
        self.next_job = 1
        self.live = []  # submitted and not cancelled, oldest first

    def submit(self, nodes, **opts):
        name = "j%d" % self.next_job
        self.next_job += 1
        words = ["submit", name, "nodes=%d" % nodes]
        if opts.get("segment"):
            words.append("segment=%d" % opts["segment"])
        if opts.get("consolidate"):
            words.append("consolidate")
        if opts.get("exclusive_topo"):
            words.append("exclusive=topo")
        if opts.get("switches"):
            words.append("switches=%d" % opts["switches"])
        self.actions.append(" ".join(words))
        self.live.append(name)
        return name

    def cancel(self, name):
        self.live.remove(name)
        self.actions.append("cancel " + name)

    def text(self):
        out = ["# " + line for line in self.comment.strip().split("\n")]
        out.append("topology " + self.kind)
        out += ["conf " + line for line in self.conf]
        out += self.actions
        return "\n".join(out) + "\n"


def churn(s, rng, jobs, submit_one, live_max=8, cancel_p=0.45):
    """Submits `jobs` jobs through submit_one(rng); between submissions
    cancels random live jobs (mostly old ones, which are the ones running),
    more eagerly the more jobs are live. Cancels what is left at the end."""
    for _ in range(jobs):
        while s.live and (len(s.live) >= live_max or rng.random() < cancel_p):
            k = min(len(s.live), 4)
            s.cancel(s.live[rng.randrange(k)])
            if rng.random() < 0.5:
                break
        submit_one(rng)
    while s.live:
        s.cancel(s.live[rng.randrange(min(len(s.live), 3))])


def sized(lo, hi):
    def one(s, rng):
        s.submit(rng.randint(lo, hi))
    return one


def gen_block_full(rng):
    s = Script(
        "topology/block: 8 racks of 18 nodes, BlockSizes up to the whole machine.\n"
        "Starts with a 10-node job on the empty machine, then random sizes 1-72\n"
        "and random cancels.",
        racks([18] * 8, [18, 36, 72, 144]))
    j = s.submit(10)
    s.cancel(j)
    churn(s, rng, 36, lambda r: s.submit(r.randint(1, 72)))
    return s


def gen_block_top72(rng):
    s = Script(
        "topology/block: 8 racks of 18 nodes, BlockSizes stop at 72 (half the\n"
        "machine); random sizes 1-72 with some jobs of 73-144 nodes.",
        racks([18] * 8, [18, 36, 72]))
    s.submit(100)
    s.cancel("j1")
    s.submit(144)
    s.cancel("j2")

    def one(r):
        if r.random() < 0.2:
            s.submit(r.randint(73, 144))
        else:
            s.submit(r.randint(1, 72))
    churn(s, rng, 32, one)
    return s


def gen_block_uneven(rng):
    s = Script(
        "topology/block: 8 racks of uneven sizes (18,18,12,6,18,12,18,6 = 108\n"
        "nodes), BlockSizes=18,36,72,144; random sizes 1-54.",
        racks([18, 18, 12, 6, 18, 12, 18, 6], [18, 36, 72, 144]))
    churn(s, rng, 36, lambda r: s.submit(r.randint(1, 54)))
    return s


SEGMENTS = [2, 3, 4, 6, 8, 9, 12, 18]


def segmented(r, consolidate):
    seg = r.choice(SEGMENTS)
    count = r.randint(1, max(1, min(8, 72 // seg)))
    return dict(nodes=seg * count, segment=seg, consolidate=consolidate)


def gen_block_segment(rng, consolidate):
    which = "with" if consolidate else "without"
    s = Script(
        "topology/block: 8 racks of 18 nodes, BlockSizes=18,36,72,144; jobs\n"
        "with --segment %s --consolidate-segments (node count a multiple of\n"
        "the segment), some plain jobs in between. Starts with 36 nodes in\n"
        "segments of 12 and other segment sizes on the empty machine." % which,
        racks([18] * 8, [18, 36, 72, 144]))
    for nodes, seg in [(36, 12), (24, 12), (12, 12), (36, 9), (30, 6), (20, 4)]:
        j = s.submit(nodes, segment=seg, consolidate=consolidate)
        s.cancel(j)

    def one(r):
        if r.random() < 0.25:
            s.submit(r.randint(1, 40))
        else:
            s.submit(**segmented(r, consolidate))
    churn(s, rng, 32, one)
    return s


def gen_block_exclusive_topo(rng):
    s = Script(
        "topology/block: 8 racks of 18 nodes, BlockSizes=18,36,72,144; jobs\n"
        "with --exclusive=topo mixed with plain jobs.",
        racks([18] * 8, [18, 36, 72, 144]))

    def one(r):
        s.submit(r.randint(1, 40), exclusive_topo=r.random() < 0.5)
    churn(s, rng, 40, one)
    return s


def gen_tree_8leaf(rng):
    s = Script(
        "topology/tree: 8 leaf switches of 18 nodes under one spine; random\n"
        "sizes 1-72, some jobs with --switches=1 or --switches=2.",
        tree(1, 8, 18))

    def one(r):
        x = r.random()
        if x < 0.2:
            s.submit(r.randint(1, 18), switches=1)
        elif x < 0.4:
            s.submit(r.randint(1, 36), switches=2)
        else:
            s.submit(r.randint(1, 72))
    churn(s, rng, 40, one)
    return s


def gen_tree_3level(rng):
    s = Script(
        "topology/tree: 3 levels, 2 spines of 4 leaf switches of 18 nodes\n"
        "under one core switch; random sizes 1-90, some --switches jobs.",
        tree(2, 4, 18))

    def one(r):
        x = r.random()
        if x < 0.15:
            s.submit(r.randint(1, 18), switches=1)
        elif x < 0.3:
            s.submit(r.randint(1, 54), switches=3)
        else:
            s.submit(r.randint(1, 90))
    churn(s, rng, 40, one)
    return s


def gen_block_long(rng):
    s = Script(
        "topology/block: 8 racks of 18 nodes, BlockSizes=18,36,72,144; a long\n"
        "mixed run of 100 jobs: plain, --segment (with and without\n"
        "--consolidate-segments) and --exclusive=topo.",
        racks([18] * 8, [18, 36, 72, 144]))

    def one(r):
        x = r.random()
        if x < 0.55:
            s.submit(r.randint(1, 72))
        elif x < 0.7:
            s.submit(**segmented(r, False))
        elif x < 0.85:
            s.submit(**segmented(r, True))
        else:
            s.submit(r.randint(1, 40), exclusive_topo=True)
    churn(s, rng, 100, one, live_max=10)
    return s


def gen_tree_long(rng):
    s = Script(
        "topology/tree: 8 leaf switches of 18 nodes under one spine; a long\n"
        "run of 100 jobs, sizes 1-100, some --switches jobs.",
        tree(1, 8, 18))

    def one(r):
        x = r.random()
        if x < 0.15:
            s.submit(r.randint(1, 18), switches=1)
        elif x < 0.25:
            s.submit(r.randint(10, 54), switches=3)
        else:
            s.submit(r.randint(1, 100))
    churn(s, rng, 100, one, live_max=10)
    return s


GENERATED = {
    "block-full": (gen_block_full, 101),
    "block-top72": (gen_block_top72, 102),
    "block-uneven": (gen_block_uneven, 103),
    "block-segment": (lambda r: gen_block_segment(r, False), 104),
    "block-segment-consolidate": (lambda r: gen_block_segment(r, True), 105),
    "block-exclusive-topo": (gen_block_exclusive_topo, 106),
    "tree-8leaf": (gen_tree_8leaf, 108),
    "tree-3level": (gen_tree_3level, 109),
    "block-long": (gen_block_long, 110),
    "tree-long": (gen_tree_long, 111),
}


def scenarios(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name, (gen, seed) in GENERATED.items():
        s = gen(random.Random(seed))
        with open(os.path.join(outdir, name + ".scn"), "w") as f:
            f.write("# generated by scripts/slurm-oracle-gen.py (seed %d)\n" % seed)
            f.write(s.text())


# --- hostlists ------------------------------------------------------------

PREFIXES = ["n", "node", "gpu", "rack-a", "x", "c", "tux", "s"]


def num(r, width):
    v = r.randint(0, 120 if width < 3 else 1100)
    return str(v).zfill(width) if width else str(v)


def bracket(r):
    """One bracket's content: ranges and single numbers, maybe padded,
    maybe unsorted, duplicated or descending."""
    width = r.choice([0, 0, 0, 2, 3]) if r.random() < 0.8 else None
    parts = []
    for _ in range(r.choice([1, 1, 2, 3, 4])):
        w = width if width is not None else r.choice([0, 1, 2, 3])
        a = r.randint(0, 40)
        x = r.random()
        if x < 0.45:
            b = a + r.randint(0, 6)
            parts.append("%s-%s" % (str(a).zfill(w), str(b).zfill(w)))
        elif x < 0.5:  # descending range
            b = max(0, a - r.randint(1, 4))
            parts.append("%s-%s" % (str(a).zfill(w), str(b).zfill(w)))
        else:
            parts.append(str(a).zfill(w))
    if r.random() < 0.15 and parts:
        parts.append(r.choice(parts))  # duplicate
    return ",".join(parts)


def expression(r):
    x = r.random()
    if x < 0.1:  # plain names, some without numbers
        names = [r.choice(PREFIXES) + r.choice(["", num(r, r.choice([0, 2, 3]))])
                 for _ in range(r.randint(1, 4))]
        return ",".join(names)
    groups = r.choice([1, 1, 1, 2, 2, 3, 4])
    parts = []
    for g in range(groups):
        pre = r.choice(PREFIXES) if g == 0 else r.choice(["", "c", "n", "-", "s"])
        parts.append(pre + "[" + bracket(r) + "]")
    expr = "".join(parts)
    if r.random() < 0.2:
        expr += r.choice(["a", "-ib", "x1", "e"])
    if r.random() < 0.3:  # another item in the list
        expr += "," + r.choice([expression(r), r.choice(PREFIXES) + num(r, 0)])
    return expr


def size(expr):
    """About how many names expr expands to (descending ranges count 1)."""
    total = 0
    for item in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", expr):
        n = 1
        for body in re.findall(r"\[([^\]]*)\]", item):
            k = 0
            for part in body.split(","):
                lo, _, hi = part.partition("-")
                k += max(1, int(hi) - int(lo) + 1) if hi else 1
            n *= k
        total += n
    return total


def names_list(r):
    """A comma list of names for `scontrol show hostlist`."""
    x = r.random()
    pre = r.choice(PREFIXES)
    width = r.choice([0, 0, 2, 3])
    n = r.randint(1, 12)
    names = []
    for _ in range(n):
        p = pre if r.random() < 0.8 else r.choice(PREFIXES)
        w = width if r.random() < 0.85 else r.choice([0, 1, 2, 3])
        v = r.randint(0, 30)
        suffix = ""
        if x < 0.15:
            suffix = r.choice(["", "a", "-ib"])
        if x > 0.9:  # two-dimensional names
            names.append("%sx%dy%d" % (p, r.randint(0, 2), v))
        else:
            names.append(p + str(v).zfill(w) + suffix)
    if r.random() < 0.1:
        names.append(r.choice(PREFIXES))
    if r.random() < 0.3:
        names.append(r.choice(names))
    return ",".join(names)


HAND = [
    ("expand", "s[1-2]c[1-2]n[1-2]"),
    ("compress", "x0y21,x0y20"),
    ("expand", "x0y21,x0y20"),
    ("expand", "n[1-3]a"),
    ("expand", "n[01-10]"),
    ("expand", "n[1,02,003]"),
    ("expand", "n[3,1,2]"),
    ("expand", "n[1-3,2]"),
    ("expand", "n[5-3]"),
    ("expand", "n[000-017]"),
    ("expand", "rack[0-1]n[0-2]"),
    ("expand", "a,b,c"),
    ("expand", "n[1-2],m[3-4],n[5]"),
    ("expand", "n[1-3"),
    ("expand", "n]1["),
    ("expand", "n[a-b]"),
    ("expand", "n[]"),
    ("expand", "n[1-3]]"),
    ("compress", "n1,n2,n3"),
    ("compress", "n3,n1,n2"),
    ("compress", "n1,n1,n2"),
    ("compress", "n01,n1,n001"),
    ("compress", "n009,n010,n011"),
    ("compress", "n9,n10,n11"),
    ("compress", "a,b,c"),
    ("compress", "n1a,n2a,n3a"),
    ("compress", "s1c1n1,s1c1n2,s1c2n1,s2c1n1"),
    ("compress", "gpu126,gpu127,gpu128,gpu135"),
    ("compress", "n1,m1,n2"),
]


def hostlists():
    r = random.Random(20261126)
    seen = set()
    cases = []
    for kind, arg in HAND:
        seen.add((kind, arg))
        cases.append((kind, arg))
    while len(cases) < 1100:
        if r.random() < 0.55:
            case = ("expand", expression(r))
            if size(case[1]) > 40:  # keeps the golden file small
                continue
        else:
            case = ("compress", names_list(r))
        if case not in seen:
            seen.add(case)
            cases.append(case)
    for kind, arg in cases:
        print(kind + "\t" + arg)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "scenarios":
        scenarios(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "hostlists":
        hostlists()
    else:
        sys.exit(__doc__)
