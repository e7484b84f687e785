"""The published 2D-tiling ladder (docs/references.md) in the shape of its Table 2: each rung (GPU0
simple pairwise ... GPU8 block parameterization), its speedup over the previous rung, over GPU0 and
over GPU1 at N = 20k, 100k, 200k; ours (best tuning of each rung, per GPU) beside its GTX 980."""
from __future__ import annotations

from .results import Config, num

WORKLOAD = (3, "fp32", "leapfrog")
SIZES = (20000, 100000, 200000)
STEPWISE = "cuda.tiled2d_stepwise"

# The published Appendix 2 Table 2: seconds per iteration of each rung's best run on its GTX 980.
REPORT_SECONDS = {
    "GPU0": (0.025041, 0.604406, 2.407589),
    "GPU1": (0.008573, 0.198012, 0.746396),
    "GPU2": (0.009988, 0.221566, 0.910918),
    "GPU3": (0.006311, 0.140021, 0.582640),
    "GPU4": (0.003790, 0.085134, 0.340424),
    "GPU5": (0.003802, 0.085289, 0.347615),
    "GPU6": (0.003801, 0.085570, 0.355724),
    "GPU7": (0.003830, 0.082145, 0.332343),
    "GPU8": (0.003661, 0.078378, 0.316398),
}

RUNG_NAMES = {"GPU0": "simple pairwise", "GPU1": "Nvidia tiling", "GPU2": "2D tiling", "GPU3": "rsqrt",
              "GPU4": "basic 2D tiling (shared memory)", "GPU5": "register reduction",
              "GPU6": "bank-conflict avoidance", "GPU7": "cuBLAS accumulation", "GPU8": "block parameterization"}

# Each rung of cuda.tiled2d_stepwise builds on the previous one: the tunings it sets.
_STEPS = [("GPU2", {"rsqrt": "off", "shared_memory": "off", "register_reduction": "off",
                    "bank_conflict_avoidance": "off", "compile_time_shape": "off", "reduction": "hand"}),
          ("GPU3", {"rsqrt": "on"}), ("GPU4", {"shared_memory": "on"}), ("GPU5", {"register_reduction": "on"}),
          ("GPU6", {"bank_conflict_avoidance": "on"}), ("GPU7", {"reduction": "cublas"}),
          ("GPU8", {"compile_time_shape": "on"})]


def _rung_tunings() -> dict:
    out, current = {}, {}
    for rung, changes in _STEPS:
        current = {**current, **changes}
        out[rung] = dict(current)
    return out


RUNG_TUNINGS = _rung_tunings()


def rung_of(c: Config) -> str | None:
    """The published rung a configuration runs, or None."""
    if c.variant == "cuda.pairwise":
        return "GPU0"
    if c.variant == "cuda.tiled":
        return "GPU1"
    if c.variant == STEPWISE:
        for rung, tunings in RUNG_TUNINGS.items():
            if all(str(c.tuning.get(k)) == v for k, v in tunings.items()):
                return rung
    return None


def best_times(configs: list[Config]) -> dict:
    """(device, rung, N) -> (fastest verified time per step, its Config) on the published ladder's workload."""
    best = {}
    for c in configs:
        rung = rung_of(c)
        if rung is None or c.workload != WORKLOAD or c.n not in SIZES or c.failed or c.verdict == "failed":
            continue
        key = (c.device, rung, c.n)
        if key not in best or c.time < best[key][0]:
            best[key] = (c.time, c)
    return best


def _ratio(numerator, denominator) -> str:
    if numerator is None or denominator is None:
        return "—"
    return f"{num(numerator / denominator)}×"


def table_rows(times: dict) -> list[list[str]]:
    """Rows of Table 2 from rung -> (seconds at 20k, 100k, 200k), None where not measured."""
    rows = []
    previous = None
    for rung in REPORT_SECONDS:
        own = times.get(rung, (None,) * len(SIZES))
        row = [f"{rung} {RUNG_NAMES[rung]}"]
        row += [_ratio(previous[k] if previous else None, own[k]) if rung not in ("GPU0", "GPU1", "GPU2") else ""
                for k in range(len(SIZES))]
        for base in ("GPU0", "GPU1"):
            base_times = times.get(base, (None,) * len(SIZES))
            row += ["" if rung <= base else _ratio(base_times[k], own[k]) for k in range(len(SIZES))]
        rows.append(row)
        previous = own
    return rows


HEADER = (["rung"] + [f"vs previous {n // 1000}k" for n in SIZES] + [f"vs GPU0 {n // 1000}k" for n in SIZES]
          + [f"vs GPU1 {n // 1000}k" for n in SIZES])


def section(configs: list[Config], table) -> list[str]:
    """The section: Table 2 per GPU that ran the ladder, the published one first; [] without one."""
    best = best_times(configs)
    devices = sorted({device for device, _, _ in best})
    if not devices:
        return []
    lines = ["## 2D-tiling ladder against its published GTX 980 times", "",
             "Speedup of each rung's fastest verified run (any tuning of the rung) over the previous rung, over "
             "GPU0 and over GPU1, on the published ladder's workload (3D, float32, leapfrog; docs/references.md). "
             "GPU0 is `cuda.pairwise`, GPU1 `cuda.tiled` (with rsqrtf, where the published one used sqrt and "
             "divide), GPU2–GPU8 `cuda.tiled2d_stepwise` with the rung's tunings (docs/performance-cuda.md). "
             "GPU2 has no \"vs previous\" (it is not built on GPU1).", "",
             "Published (GTX 980, its Appendix 2 Table 2):", ""]
    lines += table(HEADER, table_rows(REPORT_SECONDS))
    for device in devices:
        times = {rung: tuple(best[(device, rung, n)][0] if (device, rung, n) in best else None for n in SIZES)
                 for rung in REPORT_SECONDS}
        lines += [f"Ours on {device}:", ""] + table(HEADER, table_rows(times))
        lines += [f"Fastest tuning per rung on {device} (time per step at 20k / 100k / 200k):", ""]
        detail = []
        for rung in REPORT_SECONDS:
            cells = []
            for n in SIZES:
                hit = best.get((device, rung, n))
                if hit is None:
                    cells.append("—")
                    continue
                shown = {k: v for k, v in hit[1].tuning.items() if k in ("len", "wid", "luf", "block_size")}
                cells.append(f"{num(hit[0] * 1e3)} ms ({' '.join(f'{k}={v}' for k, v in sorted(shown.items()))})")
            detail.append([rung] + cells)
        lines += table(["rung"] + [f"{n // 1000}k" for n in SIZES], detail)
    return lines
