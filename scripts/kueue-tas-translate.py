#!/usr/bin/env python3
# Usage: extract pkg/cache/scheduler of a Kueue release to /tmp/kueue, then
#   python3 scripts/kueue-tas-translate.py data/kueue-tas
"""Extracts the facts (machine, usage, request, expected assignment) of
simple TestFindTopologyAssignments cases of Kueue into golden YAML files."""
import re, sys, os, json
TAG = "v0.19.2"
SRC = "/tmp/kueue/pkg/cache/scheduler/tas_cache_test.go"
OUT = sys.argv[1]
lines = open(SRC).read().split("\n")
text = "\n".join(lines)
CONST = {"tasDataCenterLabel": "cloud.com/datacenter", "tasAIZoneLabel": "cloud.com/aizone",
         "tasBlockLabel": "cloud.com/topology-block", "tasRackLabel": "cloud.com/topology-rack",
         "tasSubBlockLabel": "cloud.com/topology-subblock", "corev1.LabelHostname": "kubernetes.io/hostname"}
RES = {"corev1.ResourceCPU": "cpu", "corev1.ResourceMemory": "memory", "corev1.ResourcePods": "pods"}

def sval(tok):
    tok = tok.strip()
    m = re.fullmatch(r'new\((?:string\()?(.+?)\)?\)', tok)
    if m: tok = m.group(1)
    if tok.startswith('"'): return tok.strip('"')
    if tok in CONST: return CONST[tok]
    raise ValueError("unknown token " + tok)

def rname(tok):
    tok = tok.strip()
    if tok.startswith('"'): return tok.strip('"')
    if tok in RES: return RES[tok]
    raise ValueError("unknown resource " + tok)

SUF = {"": 1, "m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4}
def units(res, q):
    m = re.fullmatch(r'([0-9.]+)([a-zA-Z]*)', q)
    v = float(m.group(1)) * SUF[m.group(2)]
    import math
    return int(round(v * 1000)) if res == "cpu" else int(math.ceil(v - 1e-9))

def nodes_in(body):
    out = []
    for m in re.finditer(r'testingnode\.MakeNode\("([^"]+)"\)(.*?)Obj\(\)', body, re.S):
        name, chain = m.group(1), m.group(2)
        chain = re.sub(r'//[^\n]*', '', chain)
        chain = re.sub(r'\s+', '', chain)
        if "NotReady" in chain or "Taint" in chain or "Unschedulable" in chain: raise ValueError("node state")
        labels = [(sval(a), b) for a, b in re.findall(r'\.Label\(([^,]+),\s*"([^"]*)"\)', chain)]
        alloc = [(rname(a), b) for a, b in re.findall(r'([\w."/-]+):\s*resource\.MustParse\("([^"]+)"\)', chain)]
        rest = re.sub(r'\.Label\([^)]*\)|\.StatusAllocatable\(corev1\.ResourceList\{.*?\}\)|\.Ready\(\)|\.$', '', chain, flags=re.S)
        if rest: raise ValueError("node chain: " + rest[:60])
        out.append((name, labels, alloc))
    return out

def block_of(varname):
    m = re.search(r'\t' + varname + r' := \[\]corev1\.Node\{(.*?)\n\t\}\n', text, re.S)
    return m.group(1)

def named_levels(name):
    m = re.search(r'\t' + name + r' := \[\]string\{(.*?)\}', text, re.S)
    return [sval(t) for t in m.group(1).split(",") if t.strip()]

def levels_of(expr):
    expr = expr.strip().rstrip(",")
    if expr.startswith("[]string{"):
        return [sval(t) for t in expr[len("[]string{"):-1].split(",") if t.strip()]
    return named_levels(expr)

def balanced_braces(s, i):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{": depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0: return j
    raise ValueError("braces")

def yq(s):
    return json.dumps(s)

cases = []
for i, l in enumerate(lines[:8333]):
    m = re.match(r'^\t\t"(.+)": \{$', l)
    if m and i > 390: cases.append((m.group(1), i))
written = 0; skipped = {}
for k, (name, s) in enumerate(cases):
    e = cases[k + 1][1] if k + 1 < len(cases) else 8330
    body = "\n".join(lines[s:e])
    try:
        keys = set(re.findall(r'^\t\t\t(\w+):', body, re.M))
        if keys & {"workload", "nodeLabels", "priorFlavorUsage", "priorOwnUsage", "aggregatedDomainUsages"}:
            raise ValueError("field " + str(keys))
        if re.search(r'tolerations:|nodeSelector:|nodeAffinity:|podSetGroupName:|previousAssignment:|Constraints|Leader', body):
            raise ValueError("podset field")
        gates = re.findall(r'features\.(\w+):\s*(\w+)', body)
        if any(g not in ("TASProfileMixed", "TASBalancedPlacement") for g, _ in gates): raise ValueError("gate")
        gates_on = [g for g, v in gates if v == "true"]
        mnodes = re.search(r'^\t\t\tnodes:\s*(\w+),$', body, re.M)
        if mnodes: nodes = nodes_in(block_of(mnodes.group(1)))
        else:
            i0 = body.index("\t\t\tnodes: []corev1.Node{")
            nodes = nodes_in(body[i0:balanced_braces(body, body.index("{", i0 + 20)) + 1])
        if not nodes: raise ValueError("no nodes")
        lv = re.search(r'^\t\t\tlevels:\s*(.+)$', body, re.M).group(1)
        levels = levels_of(lv)
        usage = []
        if "\t\t\tpods:" in body:
            i0 = body.index("\t\t\tpods:")
            pb = body[i0:balanced_braces(body, body.index("{", i0)) + 1]
            for pm in re.finditer(r'testingpod\.MakePod\((.*?)Obj\(\)', pb, re.S):
                chain = re.sub(r'\s+', '', pm.group(1))
                if re.search(r'Label|Annotation|Toleration', chain): raise ValueError("pod kind")
                nn = re.search(r'\.NodeName\("([^"]+)"\)', chain)
                ph = re.search(r'StatusPhase\(corev1\.(\w+)\)', chain)
                if not nn or (ph and ph.group(1) in ("PodFailed", "PodSucceeded")): continue
                reqs = [(rname(a), units(rname(a), b)) for a, b in re.findall(r'\.Request\(([^,]+),\s*"([^"]+)"\)', chain)]
                usage.append((nn.group(1), reqs))
        # pod sets
        i0 = body.index("podSets: []PodSetTestCase{")
        psb = body[i0:balanced_braces(body, body.index("{", i0 + 20)) + 1]
        # split into top-level {...} items
        items = []; j = psb.index("{") + 1
        while True:
            a = psb.find("{", j)
            if a < 0: break
            b = balanced_braces(psb, a); items.append(psb[a:b + 1]); j = b + 1
        podsets = []
        for it in items:
            tr = re.search(r'topologyRequest:\s*(nil|&kueue\.PodSetTopologyRequest\{)', it)
            fields = {}
            if tr and tr.group(1) != "nil":
                a = it.index("{", tr.start()); b = balanced_braces(it, a)
                for fk, fv in re.findall(r'(\w+):\s*([^,\n}]+(?:\)\))?)', it[a + 1:b]):
                    fields[fk] = fv.strip().rstrip(",")
            if "Unconstrained" in fields and "true" not in fields["Unconstrained"]: raise ValueError("unc false")
            ps = {}
            if "Required" in fields: ps["mode"] = "required"; ps["level"] = sval(fields["Required"])
            elif "Preferred" in fields: ps["mode"] = "preferred"; ps["level"] = sval(fields["Preferred"])
            else: ps["mode"] = "unconstrained"
            if "PodSetSliceRequiredTopology" in fields:
                ps["slice-level"] = sval(fields["PodSetSliceRequiredTopology"])
                sz = re.search(r'int32\((\d+)\)', fields.get("PodSetSliceSize", "")); 
                ps["slice-size"] = int(sz.group(1)) if sz else 0
            # A slice size without a slice level is ignored (no constraint).
            algo = "best-fit"
            if ps["mode"] == "unconstrained": algo = "least-free-capacity"  # TASProfileMixed is on by default in v0.19
            if ps["mode"] == "preferred" and "TASBalancedPlacement" in gates_on: algo = "balanced"
            ps["algorithm"] = algo
            rq = re.search(r'requests:\s*map\[corev1\.ResourceName\]int64\{(.*?)\}', it, re.S)
            ps["requests"] = [(rname(a), int(b)) for a, b in re.findall(r'([\w."/-]+):\s*(\d+)', rq.group(1))] if rq else []
            ps["count"] = int(re.search(r'\bcount:\s*(\d+)', it).group(1))
            wa = re.search(r'wantAssignment:\s*&tas\.TopologyAssignment\{', it)
            wr = re.search(r'wantReason:\s*((?:"(?:[^"\\]|\\.)*"\s*\+?\s*)+|`[^`]*`)', it)
            if wa:
                a = it.index("{", wa.start()); b = balanced_braces(it, a); w = it[a:b + 1]
                lm = re.search(r'Levels:\s*(\[\]string\{[^}]*\}|\w+)', w, re.S)
                wl = levels_of(re.sub(r'\s+', '', lm.group(1)))
                doms = []
                for dm in re.finditer(r'\{\s*(?:Count:\s*(\d+),\s*Values:\s*\[\]string\{([^}]*)\}|Values:\s*\[\]string\{([^}]*)\},\s*Count:\s*(\d+))[,\s]*\}', w, re.S):
                    cnt = int(dm.group(1) or dm.group(4)); vals = dm.group(2) if dm.group(2) is not None else dm.group(3)
                    doms.append(([sval(v) for v in vals.split(",") if v.strip()], cnt))
                if not doms and "Count" in w: raise ValueError("domains unparsed")
                ps["expect"] = (wl, doms)
            elif wr:
                reason = wr.group(1)[1:-1] if wr.group(1).startswith('`') else "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', wr.group(1))).replace('\\"', '"')
                m1 = re.search(r"doesn't allow to fit any of (\d+) (pod|slice)", reason)
                m2 = re.search(r"allows to fit only (\d+) out of (\d+) (pod|slice)", reason)
                if m1: ps["fail"] = (0, int(m1.group(1)), m1.group(2))
                elif m2: ps["fail"] = (int(m2.group(1)), int(m2.group(2)), m2.group(3))
                elif reason.startswith("no requested topology level"): ps["error"] = "unknown-level"
                elif reason.startswith("podset slice topology") and "is above" in reason: ps["error"] = "slice-above-level"
                elif "slice size not provided" in reason: ps["error"] = "slice-size"
                else: raise ValueError("reason " + reason[:50])
                ps["reason"] = reason
            else: raise ValueError("no expectation")
            podsets.append(ps)
        # Write.
        slug = re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')[:80]
        o = [f"# Facts of one case of Kueue's own tests, translated (inputs and expected output).",
             f"kueue: {TAG}", "file: pkg/cache/scheduler/tas_cache_test.go", "test: TestFindTopologyAssignments",
             f"case: {yq(name)}", f"gates: [{', '.join(gates_on)}]", f"levels: [{', '.join(levels)}]", "nodes:"]
        for n, lab, al in nodes:
            o.append(f"  - name: {n}")
            o.append("    labels: {" + ", ".join(f"{a}: {yq(b)}" for a, b in lab) + "}")
            o.append("    allocatable: {" + ", ".join(f"{a}: {yq(b)}" for a, b in al) + "}")
        o.append("usage:" + ("" if usage else " []"))
        for n, r in usage:
            o.append(f"  - node: {n}")
            o.append("    requests: {" + ", ".join(f"{a}: {b}" for a, b in r) + "}")
        o.append("podsets:")
        for ps in podsets:
            o.append(f"  - count: {ps['count']}")
            o.append("    requests: {" + ", ".join(f"{a}: {b}" for a, b in ps['requests']) + "}")
            o.append(f"    mode: {ps['mode']}")
            if "level" in ps: o.append(f"    level: {ps['level']}")
            if "slice-level" in ps:
                o.append(f"    slice-size: {ps['slice-size']}"); o.append(f"    slice-level: {ps['slice-level']}")
            o.append(f"    algorithm: {ps['algorithm']}")
            if "expect" in ps:
                wl, doms = ps["expect"]
                o.append(f"    expect-levels: [{', '.join(wl)}]")
                o.append("    expect:" + ("" if doms else " []"))
                for v, c in doms: o.append(f"      - {{values: [{', '.join(v)}], count: {c}}}")
            elif "fail" in ps:
                f = ps["fail"]; o.append(f"    expect-fail: {{fit: {f[0]}, total: {f[1]}, unit: {f[2]}}}")
                o.append(f"    reason: {yq(ps['reason'])}")
            else:
                o.append(f"    expect-error: {ps['error']}"); o.append(f"    reason: {yq(ps['reason'])}")
        open(os.path.join(OUT, slug + ".yaml"), "w").write("\n".join(o) + "\n")
        written += 1
    except (ValueError, AttributeError) as ex:
        skipped[name] = str(ex)[:70]
print("written", written, "skipped", len(skipped))
for n, r in skipped.items(): print("  skip:", n[:70], "|", r)
