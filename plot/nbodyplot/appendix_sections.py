"""appendix.md's tables of every configuration and file: the host compilers, the verification, all measurements,
and appendices A-C (results files and builds, devices, contexts)."""
from __future__ import annotations

from . import analysis
from .report_text import counts_text, percent, sort_key, table
from .results import ERROR_FIELDS, VERDICTS, Config, Source, num, workload_text

ERROR_TITLES = {"max_pos_err": "max pos err", "rms_pos_err": "RMS pos err",
                "max_vel_err": "max vel err", "map_diff": "map diff"}
DIRTY_MARK = " (dirty build)"
DIRTY_COLUMN = "dirty build"


def scalars(mapping: dict, prefix: str = ""):
    """(dotted key, value) of every scalar in a context, nested objects flattened (lists left out)."""
    for key, value in mapping.items():
        if isinstance(value, dict):
            yield from scalars(value, f"{prefix}{key}.")
        elif value is None or isinstance(value, (str, int, float, bool)):
            yield f"{prefix}{key}", "—" if value is None else value


def dirty_cell(c: Config) -> str:
    return "DIRTY" if c.build.dirty else ""


def compiler_label(build) -> str:
    """A host build as the compiler table's columns name it: compiler and ISA (-march)."""
    return f"{build.compiler}, {build.isa}"


def compiler_section(configs) -> list[str]:
    """Per CPU device, workload and N: each CPU variant (its fastest tuning; a tuning run by several files,
    its median run) under every compiler x ISA that ran it, with its efficiency, then the best Kokkos
    variant ÷ the best hand-written one per compiler. Only when the host results come from two or more
    compilers."""
    host = [c for c in configs if c.device_kind == "CPU" and not c.failed and c.space != "cuda"]
    if len({c.build.compiler for c in host}) < 2:
        return []
    lines = ["## Host compilers", "",
             "Each CPU variant at its fastest tuning under each compiler and ISA (the build's `-march`), in "
             "interactions/s, and its efficiency (fraction of the host's FP32 limit, SPEC §3); a configuration "
             "that several results files of one compiler and ISA ran shows its median run. The last row of "
             "each table: the fastest Kokkos variant ÷ the fastest hand-written one (serial, OpenMP) of the same "
             "build. The builds' full flags are in Appendix A.", ""]
    groups = {}
    for c in host:
        groups.setdefault((c.device, c.workload, c.n, c.d), []).append(c)
    for (device, workload, n, d), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2], kv[0][3])):
        columns = sorted({compiler_label(c.build) for c in group})
        # One configuration run by several files of the same compiler x ISA (repeated calls on a shared
        # host, whose runs differ by up to 2x): its median run, not its fastest.
        runs = {}
        for c in group:
            if c.values.get("interactions_per_second") is not None:
                runs.setdefault((c.variant, compiler_label(c.build), c.tuning_text), []).append(c)
        best = {}
        for (variant, label, _), same in runs.items():
            same.sort(key=lambda c: c.values["interactions_per_second"])
            c = same[(len(same) - 1) // 2]
            key = (variant, label)
            if key not in best or c.values["interactions_per_second"] > best[key].values["interactions_per_second"]:
                best[key] = c
        variants = sorted({v for v, _ in best}, key=lambda v: (v.startswith("kokkos."), v))
        header = ["variant"] + [f"{col}: {what}" for col in columns for what in ("interactions/s", "efficiency")]
        rows = []
        for v in variants:
            row = [v]
            for col in columns:
                c = best.get((v, col))
                row += [num(c.values["interactions_per_second"]) if c else "—",
                        num(c.efficiency) if c and c.efficiency is not None else "—"]
            rows.append(row)
        ratio_row = ["Kokkos ÷ hand-written"]
        for col in columns:
            in_col = [c for (v, label), c in best.items() if label == col]
            kokkos = [c for c in in_col if c.variant.startswith("kokkos.")]
            hand = [c for c in in_col if not c.variant.startswith("kokkos.")]
            if kokkos and hand:
                k = max(kokkos, key=lambda c: c.values["interactions_per_second"])
                h = max(hand, key=lambda c: c.values["interactions_per_second"])
                ratio_row += [num(k.values["interactions_per_second"] / h.values["interactions_per_second"]),
                              f"{k.variant} ÷ {h.variant}"]
            else:
                ratio_row += ["—", "—"]
        lines += [f"### {device}, {workload_text(workload)}, N = {n}, D = {d}", ""]
        lines += table(header, rows + [ratio_row])
    return lines


def error_cell(c: Config, name: str) -> str:
    value, limit = c.values.get(name), c.thresholds.get(name)
    if value is None:
        return "—"
    if limit is None:
        return num(value)
    return f"{num(value)} {'≤' if value <= limit else '>'} {num(limit)}"


def verification_section(configs, anchors: dict) -> list[str]:
    rows = []
    counts = {v: sum(c.verdict == v for c in configs) for v in VERDICTS}
    # Failures first, so that a long table cannot hide them.
    for c in sorted(configs, key=lambda c: (c.verdict != "failed", sort_key(c))):
        if c.verdict == "not verified" and not any(n in c.values for n in ERROR_FIELDS):
            continue
        verdict = {"verified": "PASS", "failed": "FAIL", "inconclusive": "INCONCLUSIVE", "refused": "REFUSED",
                   "not verified": "—"}[c.verdict]
        check = "—" if c.verification is None else (
            c.verification + (f", {c.verify_steps} step{'s' if c.verify_steps != 1 else ''}"
                              if c.verify_steps is not None else ""))
        device = (f'<a id="{anchors[id(c)]}"></a>' if id(c) in anchors else "") + c.device
        rows.append([device, c.variant, c.build_label, workload_text(c.workload), c.tuning_text, c.n, c.d, check]
                    + [error_cell(c, n) for n in ERROR_FIELDS] + [verdict, c.error or "", dirty_cell(c)])
    return ["## Verification", "",
            f"{counts_text(counts)}.", "",
            "Errors against the float64 reference (SPEC §5), each against its threshold "
            "(`context.matrix.verification`) where the results record one; PASS/FAIL is the harness's "
            "`verified` (FAIL also for a configuration that raised an error; REFUSED for a tuning the variant "
            "refused before running because it is over the device's resources, e.g. registers per thread, with "
            "the reason in the error column). Check: `full` = the whole state "
            "against the reference after that many steps, `sampled` = accelerations of a sample of bodies after "
            "the first step (large N).", ""] + table(
        ["device", "variant", "build", "workload", "tuning", "N", "D", "check"]
        + [ERROR_TITLES[n] for n in ERROR_FIELDS] + ["verdict", "error", DIRTY_COLUMN], rows)


def measurements_section(configs) -> list[str]:
    rows = [[c.device, c.variant, c.reproducibility or "—", c.build_label, workload_text(c.workload), c.tuning_text,
             c.n, c.d, c.steps, c.repetitions, num(c.time), num(c.time_stddev_s),
             num(c.values.get("interactions_per_second")), num(c.efficiency), num(c.values.get("upload_s")),
             num(c.values.get("download_s")), dirty_cell(c)]
            for c in sorted(configs, key=sort_key) if not c.failed]
    failed = [[c.device, c.variant, c.build_label, workload_text(c.workload), c.tuning_text, c.n, c.d, c.steps,
               num(c.time), c.error or "no time recorded"]
              for c in sorted(configs, key=sort_key) if c.failed and c.verdict != "refused"]
    refused = [[c.device, c.variant, c.build_label, workload_text(c.workload), c.tuning_text, c.n, c.d, c.refusal]
               for c in sorted(configs, key=sort_key) if c.verdict == "refused"]
    lines = ["## All measurements", "",
             "Median of the repetitions (Google Benchmark's median aggregate where present). Upload of the "
             "initial state and download of state and map are timed apart from the steps (SPEC §3). "
             "Reproducibility: how two runs of the variant from the same state agree, as it declares it "
             "(bitwise, order-fixed or run-to-run; docs/results-format.md); — where the results do not record it.",
             ""]
    lines += table(["device", "variant", "reproducibility", "build", "workload", "tuning", "N", "D", "steps",
                    "repetitions",
                    "time per step (s)", "stddev (s)", "interactions/s", "efficiency", "upload (s)", "download (s)",
                    DIRTY_COLUMN],
                   rows)
    if failed:
        lines += ["### Failed configurations", "",
                  "Not in the figures: a configuration that raised an error or did not verify.", ""] + table(
            ["device", "variant", "build", "workload", "tuning", "N", "D", "steps", "time per step (s)", "error"],
            failed)
    if refused:
        lines += ["### Refused tunings", "",
                  "Not run: the variant refused the tuning because the device cannot hold it (registers, scratch "
                  "or memory); the reason is the variant's own message.", ""] + table(
            ["device", "variant", "build", "workload", "tuning", "N", "D", "reason"], refused)
    return lines


def sources_section(sources: list[Source], configs) -> list[str]:
    """One line per results file (where and when it ran, on what, which build), then the builds."""
    labels = {c.build: c.build_label for c in configs}
    rows = []
    for s in sources:
        c = dict(scalars(s.context))
        clock = c.get("gpu.sm_clock_hz")
        rows.append([s.path, c.get("date", "—"), labels.get(s.build, s.build.short_commit),
                     c.get("matrix.name", "—"),
                     f"{c.get('host_cpu.model_name', '—')} ({c.get('num_cpus', '?')} CPUs, "
                     f"{c.get('host_cpu.physical_cores', '?')} cores counted for the limit)",
                     c.get("gpu.name", "—"), c.get("gpu.sm_count", "—"),
                     f"{num(clock / 1e9)} GHz" if isinstance(clock, (int, float)) else "—",
                     c.get("cuda_runtime_version", "—"), c.get("kokkos_version", "—")])
    builds = sorted({s.build for s in sources}, key=lambda b: labels.get(b, b.short_commit))
    build_rows = [[labels.get(b, b.short_commit) + (DIRTY_MARK if b.dirty else ""), b.commit, b.compiler, b.build_type,
                   f"`{b.flags}`", b.facts_text,
                   ", ".join(f"`{s.path}`" for s in sources if s.build == b)] for b in builds]
    return (["## Appendix A: results files and builds", ""] + table(
        ["file", "date", "build", "matrix", "host CPU", "GPU", "SMs", "SM clock", "CUDA runtime", "Kokkos"], rows)
        + ["A build is a results file's `git_commit`, `compiler`, `build_type`, `build_flags` and `build_facts` "
           "(docs/plots.md): results of different builds are never joined in one line. Its label names the "
           "fewest of commit, ISA (`-march` of the C++ flags), compiler, build type, flags and facts that tell "
           "the builds apart.", ""]
        + table(["build", "git commit", "compiler", "build type", "build flags", "build facts", "files"], build_rows))


def devices_section(configs) -> list[str]:
    rows = []
    notes = {n.device: n for n in analysis.limit_disagreements(configs)}
    for dev, kind in analysis.devices(configs):
        on = [c for c in configs if c.device == dev]
        limits = {c.source: c.device_limit for c in on if c.device_limit}
        spread = max(limits.values()) / min(limits.values()) - 1 if limits else None
        recorded = "—" if not limits else num(analysis.device_limits(on)[dev]) + (
            f" (files within {percent(spread)})" if len(limits) > 1 else "")
        rows.append([dev, kind, recorded, len(on), sum(c.verdict == "failed" for c in on)])
    lines = ["## Appendix B: devices", "",
             "The device of a GPU variant is the GPU named in its file's context; of a CPU variant, the host "
             "CPU (with the number of CPUs Google Benchmark counted, `num_cpus`). The FP32 limit (SPEC §3) is the "
             "one recorded in the context: `gpu.fp32_interaction_limit` or `host_cpu.fp32_interaction_limit` (all "
             "cores; a CPU entry's `efficiency` is against the cores it used); the median over the files, which "
             f"are said to disagree only when they differ by more than {percent(analysis.LIMIT_TOLERANCE)}.", ""]
    lines += table(["device", "kind", "FP32 limit (interactions/s)", "configurations", "failed"], rows)
    for dev, note in notes.items():
        lines += [f"Note: {dev}: " + "; ".join(f"{num(limit)} in `{path}`" for path, limit in note.by_file.items())
                  + f" (spread {percent(note.spread)}).", ""]
    return lines


def context_section(sources: list[Source]) -> list[str]:
    lines = ["## Appendix C: context of each results file", "",
             "Every scalar of each file's `context` (docs/results-format.md).", ""]
    for s in sources:
        lines += [f"**{s.path}**", ""] + table(["context key", "value"], list(scalars(s.context)))
    return lines
