#!/usr/bin/env python3
"""bench/report.py - turns bench/run.sh's results.txt into docs/bench.md
(medians of the repetitions, absolute values and ratios of portals, and of
portals with its shared-memory transport off ("portals (tcp)"), against
shm, tcp;ofi_rxm, net, the raw socket and, for Open MPI, vader; the
targets of issues 8 and 21 checked) and a gnuplot script with its data
files for the plots.

Usage: report.py <results.txt> <outdir>

Input lines: "<rep> <provider> RESULT <test> <param> <value>",
"<rep> <provider> NA <test> <param> <reason...>" and "# <metadata>".
"""
import os
import re
import statistics
import sys

MAIN = "portals"
TCPV = "portals@FI_PORTALS_SHM=0"   # portals over loopback TCP
SHM = "shm"
TCP_OTHERS = ["tcp;ofi_rxm", "net"]
OTHERS = [SHM] + TCP_OTHERS
VADER = "vader"                     # Open MPI's pml ob1 + btl vader
RAW = "raw"
KNOWN = [MAIN, TCPV] + OTHERS + [VADER, RAW]
# ratio columns of the tables, (numerator, denominator), when both ran
RATIOS = [(MAIN, SHM), (MAIN, "tcp;ofi_rxm"), (MAIN, "net"),
          (TCPV, "tcp;ofi_rxm"), (TCPV, "net"), (MAIN, VADER), (MAIN, RAW),
          (TCPV, RAW)]
NAMES = {TCPV: "portals (tcp)"}


def pname(p):
    """A column's name in the report."""
    return NAMES.get(p, p)

# test -> (title, unit, lower is better)
TESTS = [
    ("lat", "Tagged ping-pong latency, one way", "us", True),
    ("bw", "Tagged bandwidth, window 64", "MB/s", False),
    ("rate", "8 B tagged message rate by window", "Mmsg/s", False),
]
MATCH_PATS = ["ign0", "ompi", "ompi_any", "wild"]
for mode in ("posted", "unexp"):
    for pat in MATCH_PATS:
        TESTS.append(("match_%s_%s" % (mode, pat),
                      "Matching, %s receives, pattern %s (8 B, window 64), "
                      "by depth N" % (
                          "pre-posted" if mode == "posted" else "unexpected",
                          pat), "Mmsg/s", False))
TESTS += [
    ("rma_write_lat", "RMA write latency (post to delivery-complete)",
     "us", True),
    ("rma_read_lat", "RMA read latency (post to completion)", "us", True),
    ("rma_write_bw", "RMA write bandwidth, window 64", "MB/s", False),
    ("rma_read_bw", "RMA read bandwidth, window 64", "MB/s", False),
    ("atomic_rate", "Atomic FI_SUM uint64 rate, window 64", "Mops/s", False),
    ("trig", "Triggered operations: 8 B sends posted directly or triggered "
     "(window 64), chained by the provider (triggered on the send "
     "counter) or by the application (depth N), per send", "us", True),
    ("mpi_lat", "Open MPI ping-pong latency, one way (providers: pml cm, "
     "mtl ofi; vader: pml ob1, btl self,vader)", "us", True),
    ("mpi_bw", "Open MPI bandwidth, window 64", "MB/s", False),
    ("mpi_rate", "Open MPI 8 B message rate, window 64", "Mmsg/s", False),
]
# test groups whose NA lines use a group name
NA_ALIAS = {"rma_lat": ["rma_write_lat", "rma_read_lat"],
            "rma_bw": ["rma_write_bw", "rma_read_bw"]}


def load(path):
    vals, na, meta = {}, {}, []
    with open(path) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith("#"):
                meta.append(line[1:].strip())
                continue
            parts = line.split(" ", 5)
            if len(parts) < 6:
                continue
            _rep, prov, kind, test, param, rest = parts
            if kind == "RESULT":
                try:
                    vals.setdefault((test, prov), {}).setdefault(
                        param, []).append(float(rest))
                except ValueError:
                    pass
            elif kind == "NA":
                for t in NA_ALIAS.get(test, [test]):
                    na.setdefault((t, prov), {})[param] = rest
    return vals, na, meta


def med(vals, test, prov, param):
    xs = vals.get((test, prov), {}).get(param)
    return statistics.median(xs) if xs else None


def fmt(x):
    if x is None:
        return "–"
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    if x >= 0.1:
        return "%.2f" % x
    return "%.3g" % x


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_ratio(r):
    return "–" if r is None else "%.2f×" % r


def params_of(vals, na, test):
    # numbers in order; names in the order the programs wrote them
    ps = []
    for (t, _p), d in list(vals.items()) + list(na.items()):
        if t == test:
            ps += [k for k in d if k != "*" and k not in ps]
    return sorted(ps, key=lambda s: float(s) if s.replace(".", "").isdigit()
                  else 0.0)


def size_label(p):
    try:
        n = int(p)
    except ValueError:
        return p
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    if n >= 1024 and n % 1024 == 0:
        return "%d KiB" % (n >> 10)
    return "%d B" % n


def na_reason(na, test, prov, param):
    d = na.get((test, prov), {})
    return d.get(param) or d.get("*")


def columns(vals, na, test):
    """portals first, its variants, the others, vader, raw: those that ran
    (or said NA) for test; portals always."""
    ran = {p for (t, p) in list(vals) + list(na) if t == test}
    extras = sorted(p for p in ran if p not in KNOWN)
    return [p for p in [MAIN, TCPV] + extras + OTHERS + [VADER, RAW]
            if p == MAIN or p in ran]


def ratio_cols(vals, test, cols):
    """The ratios whose two columns both have values for test."""
    return [(a, b) for a, b in RATIOS if a in cols and b in cols and
            (test, a) in vals and (test, b) in vals]


def table(out, vals, na, test, title, unit, lower):
    params = params_of(vals, na, test)
    cols = columns(vals, na, test)
    rcols = ratio_cols(vals, test, cols)
    out.append("### %s (%s, %s is better)\n" % (
        title, unit, "lower" if lower else "higher"))
    notes = []
    for prov in cols:
        reason = na_reason(na, test, prov, "*")
        if reason and (test, prov) not in vals:
            notes.append("`%s`: NA (%s)" % (pname(prov), reason))
    if not params:
        out.append("Not measured: " + "; ".join(notes) + "\n" if notes else
                   "No data.\n")
        return
    hdr = ["param"] + ["`%s`" % pname(c) for c in cols] + \
        ["%s / `%s`" % (pname(a), pname(b)) for a, b in rcols]
    out.append("| " + " | ".join(hdr) + " |")
    out.append("|" + "---|" * len(hdr))
    for p in params:
        label = size_label(p) if test.endswith(("lat", "bw")) else p
        row = [label]
        for c in cols:
            v = med(vals, test, c, p)
            row.append(fmt(v) if v is not None else
                       ("NA" if na_reason(na, test, c, p) else "–"))
        for a, b in rcols:
            row.append(fmt_ratio(ratio(med(vals, test, a, p),
                                       med(vals, test, b, p))))
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    for n in notes:
        out.append("- " + n)
    for prov in cols:
        # one line per reason: "N=1, 1024: NA (...)"
        by_reason = {}
        for p, reason in na.get((test, prov), {}).items():
            if p != "*":
                by_reason.setdefault(reason, []).append(p)
        for reason, ps in by_reason.items():
            label = ", ".join(ps)
            if all(x.isdigit() for x in ps):
                label = "N=" + label
            out.append("- `%s` %s: NA (%s)" % (pname(prov), label, reason))
    out.append("")


SYS_ROWS = [
    ("sys_send", "sends (sendmsg, sendto, writev, write)"),
    ("sys_recv", "receives that returned data"),
    ("sys_recv_empty", "receives that found nothing (EAGAIN: busy polling)"),
    ("sys_poll", "poll / epoll_wait calls"),
]


def sys_table(out, vals):
    provs = [p for p in [MAIN, TCPV] + sorted({p for (t, p) in vals
                                               if t == "sys_send"} -
                                              set(KNOWN)) +
             OTHERS + [RAW] if ("sys_send", p) in vals]
    if not provs:
        return
    out.append("### System calls per 8 B round trip, client side\n")
    out.append("Counted with `strace -f -c` as the difference between "
               "2200 and 220 round trips of `fb_lat -S 8` (set-up cancels "
               "out), so they do not depend on the machine's load, except "
               "the empty receives and polls, which count how often the "
               "process polled while it waited.\n")
    out.append("| per round trip | " +
               " | ".join("`%s`" % pname(p) for p in provs) + " |")
    out.append("|---|" + "---|" * len(provs))
    for test, what in SYS_ROWS:
        cells = []
        for p in provs:
            v = med(vals, test, p, "8")
            # the empty polls differ between the two runs: can go below 0
            cells.append("≈0" if v is not None and v < 0 else fmt(v))
        out.append("| %s | " % what + " | ".join(cells) + " |")
    out.append("")


def mains_of(vals):
    """One target column per portals variant that ran: portals, portals
    (tcp), and any other portals@VAR=value run.sh measured."""
    variants = sorted({p for (_t, p) in vals if p.startswith(MAIN + "@")},
                      key=lambda p: (p != TCPV, p))
    return [MAIN] + variants


def target_rows(vals, checks):
    mains = mains_of(vals)
    rows = ["| target | goal | " +
            " | ".join("`%s`" % pname(m) for m in mains) + " |",
            "|---|---|" + "---|" * len(mains)]
    for label, goal, value, ok in checks:
        cells = []
        for m in mains:
            r = value(m)
            cells.append("–" if r is None else "%s %s" % (
                fmt_ratio(r), "met" if ok(r) else "**not met**"))
        rows.append("| %s | %s | %s |" % (label, goal, " | ".join(cells)))
    return rows


def bw_worst(vals, test, m, others, lo, hi):
    """The smallest ratio of m to the best of others over the sizes
    lo..hi bytes that both measured."""
    worst = None
    for p in params_of(vals, {}, test):
        if not lo <= int(p) <= hi:
            continue
        best = max([v for v in (med(vals, test, o, p) for o in others)
                    if v is not None] or [0])
        r = ratio(med(vals, test, m, p), best)
        if r is not None and (worst is None or r < worst):
            worst = r
    return worst


def targets_intra(vals):
    """Issue 21: portals against shm and Open MPI's vader on one host."""
    def at(test, m, o, p):
        return ratio(med(vals, test, m, p), med(vals, test, o, p))

    checks = [
        ("8 B tagged latency, portals / shm", "≤ 1.0×",
         lambda m: at("lat", m, SHM, "8"), lambda r: r <= 1.0),
        ("bandwidth 64 KiB–8 MiB, worst portals / shm", "≥ 1.0×",
         lambda m: bw_worst(vals, "bw", m, [SHM], 65536, 8 << 20),
         lambda r: r >= 1.0),
        ("8 B rate at window 64, portals / shm", "≥ 1.0×",
         lambda m: at("rate", m, SHM, "64"), lambda r: r >= 1.0),
        ("Open MPI (mtl ofi) 8 B latency, portals / vader", "≤ 2×",
         lambda m: at("mpi_lat", m, VADER, "8"), lambda r: r <= 2.0),
        ("Open MPI (mtl ofi) 1 MiB bandwidth, portals / vader", "≥ 0.8×",
         lambda m: at("mpi_bw", m, VADER, str(1 << 20)),
         lambda r: r >= 0.8),
    ]
    return target_rows(vals, checks)


def targets(vals):
    """Issue 8 (TCP transport): portals against tcp;ofi_rxm, net and the
    raw socket, and matching at depth."""
    checks = []

    def lat8(m, o):
        return ratio(med(vals, "lat", m, "8"), med(vals, "lat", o, "8"))

    checks.append(("8 B latency, portals / net", "≤ 1.05×",
                   lambda m: lat8(m, "net"), lambda r: r <= 1.05))
    checks.append(("8 B latency, portals / tcp;ofi_rxm", "≤ 0.9×",
                   lambda m: lat8(m, "tcp;ofi_rxm"), lambda r: r <= 0.9))
    checks.append(("8 B latency, portals / raw socket", "≤ 1.2×",
                   lambda m: lat8(m, RAW), lambda r: r <= 1.2))
    checks.append(("bandwidth 64 KiB–8 MiB, worst portals / best of "
                   "tcp;ofi_rxm and net", "≥ 1.0×",
                   lambda m: bw_worst(vals, "bw", m, TCP_OTHERS, 65536,
                                      1 << 62),
                   lambda r: r >= 1.0))
    checks.append(("8 B rate at window 64, portals / tcp;ofi_rxm", "≥ 2×",
                   lambda m: ratio(med(vals, "rate", m, "64"),
                                   med(vals, "rate", "tcp;ofi_rxm", "64")),
                   lambda r: r >= 2.0))
    for mode in ("posted", "unexp"):
        for pat in ("ign0", "ompi", "ompi_any"):
            t = "match_%s_%s" % (mode, pat)
            checks.append(("matching %s %s, portals N=64k / N=1" % (mode, pat),
                           "≥ 0.8×",
                           lambda m, t=t: ratio(med(vals, t, m, "65536"),
                                                med(vals, t, m, "1")),
                           lambda r: r >= 0.8))
    return target_rows(vals, checks)


def gnuplot(outdir, vals):
    """Writes bench-<plot>.dat files and bench.gp; returns the PNG names."""
    plots = []
    specs = [
        ("lat", "lat", "one-way latency (us)", True, True,
         [MAIN, TCPV] + OTHERS + [RAW]),
        ("bw", "bw", "bandwidth (MB/s)", True, False,
         [MAIN, TCPV] + OTHERS + [RAW]),
        ("rate", "rate", "8 B message rate (Mmsg/s)", True, False,
         [MAIN, TCPV] + OTHERS + [RAW]),
        ("match", "match_posted_ompi",
         "rate with N posted, Open MPI pattern (Mmsg/s)", True, False,
         [MAIN, TCPV] + OTHERS),
        ("mpi_lat", "mpi_lat", "Open MPI one-way latency (us)", True, True,
         [MAIN, TCPV] + OTHERS + [VADER]),
    ]
    gp = ["set terminal pngcairo noenhanced size 720,440 font ',10'",
          "set grid", "set key top left", "set style data linespoints"]
    for name, test, ylabel, logx, logy, provs in specs:
        params = params_of(vals, {}, test)
        extras = sorted({p for (t, p) in vals if t == test and
                         p not in KNOWN})
        series = [p for p in provs[:2] + extras + provs[2:]
                  if (test, p) in vals]
        if not params or not series:
            continue
        dat = "bench-%s.dat" % name
        with open(os.path.join(outdir, dat), "w") as fh:
            for p in params:
                row = [p] + [fmt_num(med(vals, test, s, p)) for s in series]
                fh.write(" ".join(row) + "\n")
        png = "bench-%s.png" % name
        gp.append("set output '%s'" % png)
        gp.append("set xlabel '%s'" % ("window" if name == "rate" else
                                       "N" if name == "match" else
                                       "message size (bytes)"))
        gp.append("set ylabel '%s'" % ylabel)
        gp.append("set logscale x 2" if logx else "unset logscale x")
        gp.append("set format x '%.0b %B'" if name in ("lat", "bw", "mpi_lat")
                  else "set format x '%g'")
        gp.append("set logscale y 10" if logy else "unset logscale y")
        gp.append("set yrange [0:*]" if not logy else "set yrange [*:*]")
        cmds = ["'%s' using 1:%d title '%s'" % (dat, i + 2, pname(s))
                for i, s in enumerate(series)]
        gp.append("plot " + ", ".join(cmds))
        plots.append(png)
    with open(os.path.join(outdir, "bench.gp"), "w") as fh:
        fh.write("\n".join(gp) + "\n")
    return plots


def fmt_num(x):
    return "NaN" if x is None else "%.6g" % x


def overloaded(meta):
    """A warning when the load average exceeded the CPUs during the run."""
    text = " ".join(meta)
    cpus = re.search(r"(\d+) cpu\(s\)", text)
    loads = [float(x) for x in re.findall(r"load at (?:start|end) ([\d.]+)",
                                          text)]
    if cpus and loads and max(loads) > int(cpus.group(1)):
        return ("the load average reached %.1f on %s CPUs during this run "
                "(other jobs were running)." % (max(loads), cpus.group(1)))
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: report.py <results.txt> <outdir>")
    vals, na, meta = load(sys.argv[1])
    outdir = sys.argv[2]
    out = ["# Benchmarks: portals against shm, tcp;ofi_rxm, net, a raw "
           "socket and Open MPI's vader",
           "",
           "Written by `make bench` (bench/run.sh, bench/report.py); do not "
           "edit by hand. Every value is the median of the repetitions; "
           "providers were run interleaved (A B C A B C …), two processes on "
           "one host, through the same benchmark binaries (public libfabric "
           "API only). Columns: `portals` is the provider as users get it "
           "(same-host peers over its shared-memory transport); `portals "
           "(tcp)` is the same with `FI_PORTALS_SHM=0`, over loopback TCP; "
           "`shm` is libfabric's shared-memory provider; `tcp;ofi_rxm` and "
           "`net` run over loopback TCP; `raw` is a TCP_NODELAY socket "
           "ping-pong (the floor for TCP); in the Open MPI tables the "
           "providers run under `pml cm` + `mtl ofi` and `vader` is Open "
           "MPI's own shared memory (`pml ob1`, `btl self,vader`). Ratios "
           "are the named portals column divided by the other: for latency "
           "below 1 is better, for bandwidth and rates above 1 is better. "
           "NA: the provider cannot run that cell (the reason follows the "
           "table); –: not measured in this run.",
           ""]
    for m in meta:
        out.append("- " + m)
    out.append("")
    warn = overloaded(meta)
    if warn:
        out.append("**Warning: " + warn + "** Busy-polling ping-pongs then "
                   "measure the scheduler more than the providers (two "
                   "processes that must both be on a CPU at once); single "
                   "values vary by 10-100x between repetitions. Treat the "
                   "ratios below as unreliable and rerun `make bench` on an "
                   "idle machine. The load-independent measurements "
                   "(syscalls per message, allocations and locks on the data "
                   "path) are in the first table and the last section.\n")
    out.append("## Targets, one host (issue 21)\n")
    out.append("Against libfabric's `shm` and Open MPI's `vader`; they "
               "concern `portals` (its shared-memory transport), the other "
               "column shows where TCP stands. Matching at 64 Ki posted "
               "receives (≥ 0.8× the 1-posted rate, as on TCP) is in the "
               "next table.\n")
    out.extend(targets_intra(vals))
    out.append("")
    out.append("## Targets, TCP transport (issue 8)\n")
    out.append("Set for the TCP transport: with the shared-memory transport "
               "in, `portals (tcp)` is the column they concern (`portals` "
               "then compares shared memory with TCP).\n")
    out.extend(targets(vals))
    out.append("")
    plots = gnuplot(outdir, vals) if os.environ.get("BENCH_PLOTS") == "1" \
        else []
    if plots:
        out.append("## Plots\n")
        for p in plots:
            out.append("![%s](%s)" % (p[6:-4], p))
        out.append("")
    out.append("## Tables\n")
    sys_table(out, vals)
    for test, title, unit, lower in TESTS:
        table(out, vals, na, test, title, unit, lower)
    engine = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])),
                          "engine.txt")
    if os.path.exists(engine):
        out.append("## Engine micro-benchmarks (issue 3)\n")
        out.append("The same `make bench`, before the suite above: "
                   "`bench/match_bench` times the matching structures "
                   "alone, `bench/eng_bench` the whole engine on its "
                   "in-process loop transport (no sockets). Thread CPU "
                   "time; the sizes of a row are run in turn. "
                   "`bench/shm_bench` (wall clock) the shared-memory "
                   "transport with idle links.\n")
        with open(engine) as fh:
            out.append(fh.read())
    notes = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "notes.md")
    if os.path.exists(notes):
        with open(notes) as fh:
            out.append(fh.read())
    with open(os.path.join(outdir, "bench.md"), "w") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
