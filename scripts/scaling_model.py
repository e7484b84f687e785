#!/usr/bin/env python3
"""The per-step cost model of docs/scaling.md fitted to runs over G ranks (plot/nbodyplot/cost_model.py, the
fit the report's figure draws): the fitted terms, each point's residual, weak-scaling checks, the fit's
profile over the bandwidth, predictions at more GPUs, and the pull kernel's grid per rank.

usage: scripts/scaling_model.py RESULTS.json ... [options]
  --exposed W:N:G:SECONDS     an all-gather's measured duration per step (a `run`'s step breakdown with
                              exchange=allgather) that the results files do not hold, e.g.
                              2d/fp32/euler:16384:4:13.594e-6; repeatable
  --predict-n N ...           sizes of the predictions (default 2^20 2^21 2^22)
  --predict-g G ...           GPU counts of the predictions (default 2 4 8 64 1024)
  --gpus-per-node K           GPUs sharing NVLink (default 8)            \\
  --inter-node-latency-us L   per ring hop between nodes (default 8)       > assumed, not measured
  --inter-node-bandwidth-gbs B  per GPU between nodes (default 50)       /
  --hold-bandwidth-gbs B      fit with B held at this value (how much the predictions depend on it)
  --resident W:BPT=R          resident blocks per SM of the pull kernel of workload W with BPT bodies per
                              thread (Nsight Compute's "Block Limit"), for the grid table; repeatable
  --slice-rule RULE           slices=auto of the binary that ran: thirty-two-waves (slice_count.hpp, default),
                              eight-waves (the rule before it: eight waves, more than 32 only as many as two
                              waves need), balanced (the rule before that: two waves or up to twice as many,
                              balanced over the SMs) or two-waves (the first: ceil(2 x SMs x resident / body blocks))
Residual = model / measured - 1 of the time per step; E = T(1) / (G T(G)).
"""
from __future__ import annotations

import argparse
import heapq
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plot"))
from nbodyplot import analysis, cost_model, scaling  # noqa: E402
from nbodyplot.results import InputError, load, workload_text  # noqa: E402

WORKLOAD_WORDS = {"2d": 2, "3d": 3}


def parse_workload(text: str) -> tuple:
    dim, precision, integrator = text.split("/")
    return WORKLOAD_WORDS[dim], precision, integrator


def parse_exposed(text: str) -> cost_model.ExposedExchange:
    try:
        return cost_model.parse_exposed(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_resident(text: str) -> tuple:
    try:
        kernel, blocks = text.split("=")
        workload, bodies = kernel.split(":")
        return (parse_workload(workload), int(bodies)), int(blocks)
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"--resident wants W:BPT=R (3d/fp64/euler:4=2), got '{text}'")


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us"


def print_fit(group: scaling.ScalingFit) -> None:
    t, f = group.fit.terms, group.fit
    print(f"== {group.device}, {group.variant}, build {group.build_label}")
    print(f"shared terms fitted on {workload_text(f.reference)} and the measured exposed exchanges:")
    print(f"  lambda (per all-gather)   {us(t.launch_s)}")
    print(f"  alpha (per ring hop)      {us(t.latency_s)}")
    print(f"  B (all-gather bandwidth)  " + ("unbounded (1/B fitted 0)" if t.inverse_bandwidth <= 0 else
                                             f"{t.bandwidth / 1e9:.1f} GB/s"))
    print(f"  t_overlap                 " + ("- (no overlapped run)" if t.overlap_s is None else us(t.overlap_s)))
    for workload, value in sorted(t.fixed_s.items()):
        print(f"  t_fixed {workload_text(workload):<17} {us(value)}")
    print(f"  rms relative residual     {100 * f.rms:.2f} % (the reference workload's points and the exposed exchanges)")
    fitted_from = sum(p.shared for p in f.points) + len(f.exposed)
    terms = 3 + (t.overlap_s is not None)
    if fitted_from < terms:
        print(f"  ({fitted_from} values for {terms} terms: the fit does not determine them)")
    # excess: T(G) - T(1)/G, what the step takes beyond a perfect split; model: the same from the model's
    # t_fixed and exchange terms.
    print(f"{'workload':<15}{'N':>9}{'G':>3} {'exchange':<10}{'N/G':>8}{'T(G) s':>12}{'T(1) s':>12}"
          f"{'E':>7}{'E model':>8}{'resid':>8}{'excess us':>11}{'model us':>10}  fitted")
    for p in group.points:
        fitted = group.fit.point(p.config.workload, p.config.n, p.ranks, scaling.exchange_of(p.config))
        split = p.base.time / p.ranks
        print(f"{workload_text(p.config.workload):<15}{p.config.n:>9}{p.ranks:>3} {scaling.exchange_of(p.config):<10}"
              f"{p.bodies_per_rank:>8}{p.config.time:>12.4e}{p.base.time:>12.4e}{p.efficiency:>7.3f}"
              f"{fitted.model_efficiency:>8.3f}{100 * fitted.residual:>+7.2f}%"
              f"{(p.config.time - split) * 1e6:>11.1f}{(fitted.model_time - split) * 1e6:>10.1f}  "
              + ("shared terms" if fitted.shared else "own t_fixed only"))
    for e, model in f.exposed:
        print(f"exposed exchange {workload_text(e.workload)} N={e.n} G={e.ranks}: measured {us(e.seconds)}, "
              f"model {us(model)} ({100 * (model / e.seconds - 1):+.2f} %)")


def print_weak_checks(group: scaling.ScalingFit, configs) -> None:
    """Runs over ranks without a single-rank run of their N (weak scaling): the base is the single-rank N
    nearest N / sqrt(G) (within 2 %), scaled by (N / N1)^2 (the model's rate at a rank's share)."""
    singles = [c for c in analysis.ok(configs) if c.ranks == 1 and c.base_device == group.device
               and c.variant == group.variant and c.build_label == group.build_label]
    strong = {(p.config.workload, p.config.n, p.ranks, scaling.exchange_of(p.config)) for p in group.points}
    rows = []
    for c in analysis.ok(configs):
        if c.ranks < 2 or c.base_device != group.device or c.variant != group.variant \
                or c.build_label != group.build_label or (c.workload, c.n, c.ranks, scaling.exchange_of(c)) in strong:
            continue
        target = c.n / math.sqrt(c.ranks)
        bases = [s for s in singles if s.workload == c.workload and s.d == c.d and abs(s.n / target - 1) <= 0.02]
        if not bases:
            continue
        base = min(bases, key=lambda s: abs(s.n - target))
        single = base.time * (c.n / base.n) ** 2
        model = cost_model.predict(group.fit.terms, c.workload, c.n, c.ranks, scaling.exchange_of(c), single)
        rows.append((c, base, base.time / c.time, base.time / model.time, model.time / c.time - 1))
    if rows:
        print("weak-scaling checks (not fitted): E = T(1, N1) / T(G, N), N1 = N / sqrt(G)")
        for c, base, measured, model, residual in sorted(rows, key=lambda r: (r[0].workload, scaling.exchange_of(r[0]),
                                                                                 r[0].ranks, r[0].n)):
            print(f"  {workload_text(c.workload):<15}N={c.n:>7} G={c.ranks} {scaling.exchange_of(c):<10}N1={base.n:>7}"
                  f"  E {measured:.3f} model {model:.3f} resid {100 * residual:+.2f}%")


def print_profile(group: scaling.ScalingFit, exposed) -> None:
    observations = [o.observation for o in group.fit.points]
    print("profile over B (the other terms refitted): B, rms relative residual, lambda, alpha, t_fixed of the reference "
          "workload, t_overlap")
    held = [(f"{b / 1e9:.0f} GB/s", cost_model.fit(observations, exposed, inverse_bandwidth=1 / b))
            for b in (10e9, 20e9, 50e9, 100e9, 350e9)]
    best = cost_model.fit(observations, exposed)
    held.append((f"fitted ({'unbounded' if best.terms.inverse_bandwidth <= 0 else f'{best.terms.bandwidth / 1e9:.1f} GB/s'})",
                 best))
    for label, f in held:
        overlap = "-" if f.terms.overlap_s is None else us(f.terms.overlap_s)
        print(f"  {label:<20}{100 * f.rms:6.2f} %   lambda {us(f.terms.launch_s)}   alpha {us(f.terms.latency_s)}   t_fixed "
              f"{us(f.terms.fixed_s[f.reference])}   t_overlap {overlap}")


def print_predictions(group: scaling.ScalingFit, args) -> None:
    workload = group.fit.reference
    singles = [p.base for p in group.points if p.config.workload == workload]
    largest = max(singles, key=lambda c: c.n)
    rate = largest.n ** 2 / largest.time
    network = cost_model.Network(args.gpus_per_node, args.inter_node_latency_us * 1e-6, args.inter_node_bandwidth_gbs * 1e9)
    # owned: H, the owned block's pull an overlapped exchange hides behind.
    print(f"predictions, {workload_text(workload)}: T(1, N) = N^2 / {rate:.4g} interactions/s (measured at N = {largest.n});"
          f" {network.gpus_per_node} GPUs per node; between nodes {args.inter_node_latency_us:g} us per hop and"
          f" {args.inter_node_bandwidth_gbs:g} GB/s per GPU (assumed)")
    print(f"{'G':>5}{'N':>9} {'exchange':<10}{'T(G) s':>12}{'compute s':>12}{'exchange s':>12}{'latency s':>12}"
          f"{'owned s':>12}{'exposed s':>12}{'E':>8}")
    for g in args.predict_g:
        for n in args.predict_n:
            single = n * n / rate
            for exchange in ("allgather", "overlap"):
                p = cost_model.predict(group.fit.terms, workload, n, g, exchange, single, network)
                print(f"{g:>5}{n:>9} {exchange:<10}{p.time:>12.4e}{p.compute:>12.4e}{p.exchange:>12.4e}"
                      f"{p.latency:>12.4e}{p.hidden_by:>12.4e}{p.exposed:>12.4e}{p.efficiency(single, g):>8.5f}")


def grid(owned: int, n: int, sources: int, block: int, bodies_per_thread: int, slices_tuning: str, sms: int,
         resident: int, slice_rule: str = "thirty-two-waves") -> dict:
    """cuda.sliced's launch (models/cuda/float4.cu): blocks of `block` threads x `bodies_per_thread` bodies i,
    slices of the bodies j (auto: models/cuda/slice_count.hpp's rule, 32 waves of resident blocks in a
    power of two, at most one slice per tile), and how evenly
    its blocks share the SMs in launch order (x fastest): each block to the SM or the slot with least work."""
    body_blocks = max(1, -(-owned // (block * bodies_per_thread)))
    if slices_tuning != "auto":
        tuned = int(slices_tuning)
    elif slice_rule == "thirty-two-waves":
        tuned = power_of_two_slices(32 * max(1, sms) * max(1, resident), body_blocks, -(-n // block))
    elif slice_rule == "eight-waves":
        tuned = eight_wave_slice_count(body_blocks, -(-n // block), sms, resident)
    elif slice_rule == "two-waves":
        tuned = max(1, min(-(-2 * sms * resident // body_blocks), -(-n // block)))
    else:
        tuned = balanced_slice_count(body_blocks, -(-n // block), sms, resident)
    tiles = -(-sources // block)
    slices = max(1, min(tuned, tiles))
    blocks = body_blocks * slices
    # SM: an SM's blocks share its throughput (a lone block runs as fast as several); slot: they do not.
    return dict(body_blocks=body_blocks, slices=slices, blocks=blocks, per_sm=blocks / sms,
                sm_balance=processor_balance(body_blocks, slices, tiles, sms),
                slot_balance=processor_balance(body_blocks, slices, tiles, sms * resident))


def processor_balance(body_blocks: int, slices: int, tiles: int, processors: int) -> float:
    """The share of the processors' time the grid keeps busy (slice_count.hpp's processor_balance)."""
    per_slice = -(-tiles // slices)
    works = [max(0, min(tiles, (y + 1) * per_slice) - y * per_slice) for y in range(slices) for _ in range(body_blocks)]
    loads = [0] * processors
    for w in works:
        heapq.heappush(loads, heapq.heappop(loads) + w)
    return sum(works) / processors / max(loads)


def power_of_two_slices(wanted_blocks: int, body_blocks: int, tiles: int) -> int:
    """slices=auto (core's nbody/slice_count.hpp, as models/cuda/slice_count.hpp's slice_count calls it)."""
    slices = 1
    while slices * max(1, body_blocks) < wanted_blocks and slices < tiles:
        slices *= 2
    return min(slices, max(1, tiles))


def eight_wave_slice_count(body_blocks: int, tiles: int, processors: int, resident: int) -> int:
    """slices=auto of the binaries before the 32-wave rule."""
    def covering(wanted: int) -> int:
        slices = 1
        while slices * max(1, body_blocks) < wanted:
            slices *= 2
        return slices
    wave = max(1, processors) * max(1, resident)
    return max(1, min(covering(8 * wave), max(32, covering(2 * wave)), tiles))


def balanced_slice_count(body_blocks: int, tiles: int, processors: int, resident: int) -> int:
    """slices=auto of the binaries before the eight-wave rule."""
    least = max(1, -(-2 * processors * max(1, resident) // max(1, body_blocks)))
    best = min(least, max(1, tiles))
    best_balance = processor_balance(body_blocks, best, tiles, processors)
    for s in range(best + 1, min(2 * least, max(1, tiles)) + 1):
        balance = processor_balance(body_blocks, s, tiles, processors)
        if balance > best_balance + 0.005:
            best, best_balance = s, balance
    return best


def bodies_per_thread(tuning: str, owned: int) -> int:
    """cuda.sliced's bodies_per_thread (auto: models/cuda/slice_count.hpp's auto_bodies_per_thread)."""
    if tuning == "auto":
        return 1 if owned < 8192 else 4
    return int(tuning)


def print_grids(configs, sources, residents: dict, slice_rule: str) -> None:
    sms_of = {s.path: (s.context.get("gpu") or {}).get("sm_count") for s in sources}
    rows = []
    for c in analysis.ok(configs):
        owned = -(-c.n // c.ranks)
        bodies = bodies_per_thread(str(c.tuning.get("bodies_per_thread", 0) or 0), owned)
        resident = residents.get((c.workload, bodies))
        sms = sms_of.get(c.source)
        if resident is None or not sms or "slices" not in c.tuning:
            continue
        g = grid(owned, c.n, c.n, int(c.tuning.get("block_size", 256)), bodies, str(c.tuning["slices"]), sms, resident,
                 slice_rule)
        rows.append((c, owned, bodies, g, owned * c.n / c.time))
    if not rows:
        return
    print("pull kernel's grid per rank (every pull from all N bodies j; resident blocks per SM as given)")
    print(f"{'device':<24}{'variant':<15}{'workload':<15}{'BPT':>4}{'N':>9}{'G':>3} {'exchange':<10}{'N/G':>8}{'grid':>10}"
          f"{'blk/SM':>8}{'SM bal':>8}{'slot bal':>9}{'rate/GPU':>11}")
    for c, owned, bodies, g, rate in sorted(rows, key=lambda r: (r[0].base_device, r[0].variant, r[0].workload, r[2],
                                                                 r[0].ranks > 1, scaling.exchange_of(r[0]), r[0].n, r[0].ranks)):
        print(f"{c.base_device[:23]:<24}{c.variant[:14]:<15}{workload_text(c.workload):<15}"
              f"{bodies:>4}{c.n:>9}{c.ranks:>3} {scaling.exchange_of(c) if c.ranks > 1 else '-':<10}{owned:>8}"
              f"{g['body_blocks']:>6}x{g['slices']:<3}{g['per_sm']:>8.2f}{g['sm_balance']:>8.3f}{g['slot_balance']:>9.3f}"
              f"{rate:>11.3e}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--exposed", type=parse_exposed, action="append", default=[])
    parser.add_argument("--predict-n", type=int, nargs="+", default=[2 ** 20, 2 ** 21, 2 ** 22])
    parser.add_argument("--predict-g", type=int, nargs="+", default=[2, 4, 8, 64, 1024])
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--inter-node-latency-us", type=float, default=8.0)
    parser.add_argument("--inter-node-bandwidth-gbs", type=float, default=50.0)
    parser.add_argument("--hold-bandwidth-gbs", type=float)
    parser.add_argument("--resident", type=parse_resident, action="append", default=[])
    parser.add_argument("--slice-rule", choices=["thirty-two-waves", "eight-waves", "balanced", "two-waves"],
                        default="thirty-two-waves")
    args = parser.parse_args(argv)
    try:
        sources, configs = load(args.results)
    except InputError as e:
        print(f"scaling_model.py: {e}", file=sys.stderr)
        return 2
    held = None if args.hold_bandwidth_gbs is None else 1 / (args.hold_bandwidth_gbs * 1e9)
    groups = scaling.strong_scaling_fits(configs, args.exposed, inverse_bandwidth=held)
    if not groups:
        print("scaling_model.py: no run over several ranks with a single-rank run of the same problem", file=sys.stderr)
    for group in groups:
        print_fit(group)
        print_weak_checks(group, configs)
        print_profile(group, args.exposed)
        print_predictions(group, args)
        print()
    print_grids(configs, sources, dict(args.resident), args.slice_rule)
    return 0


if __name__ == "__main__":
    sys.exit(main())
