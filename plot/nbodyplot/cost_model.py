"""The per-step cost model of docs/scaling.md, fitted to runs measured over G ranks.

    exchange=allgather:  T(G, N) = T(1, N)/G + (1 - 1/G) t_fixed + X(G, N)
    exchange=overlap:    T(G, N) = T(1, N)/G + (1 - 1/G) t_fixed + t_overlap + max(0, X(G, N) - H)
    X(G, N) = L(G) + (G - 1)/G * S(N)/B     the all-gather: L(G) = lambda + (G - 1) alpha within one node
    H = (T(1, N) - t_fixed)/G^2             the owned block's pull from itself, which needs no remote data
    S(N) = N * dim * bytes per real         the positions gathered each step

T(1, N) is measured (the compute term at the single-GPU rate of the same N); t_fixed is the part of a
step that does not divide over ranks (the map of all N on every rank, launches), t_overlap the
overlapped exchange's own cost (its second launch, fork and join); lambda is each all-gather's own
latency, alpha what each further GPU of the ring adds. Standard library only: the
plot tool and scripts/scaling_model.py share it.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

BYTES_PER_REAL = {"fp32": 4, "fp64": 8}
LAUNCH, LATENCY, INVERSE_BANDWIDTH, OVERLAP = "launch", "latency", "inverse_bandwidth", "overlap"
# The shared terms' fields of Terms; every other term is a workload's t_fixed (fixed_name).
SHARED_TERM_ATTRIBUTES = {LAUNCH: "launch_s", LATENCY: "latency_s", INVERSE_BANDWIDTH: "inverse_bandwidth",
                          OVERLAP: "overlap_s"}


def fixed_name(workload: tuple) -> tuple:
    return ("fixed", workload)


@dataclass(frozen=True)
class Observation:
    """One configuration measured over `ranks` > 1, with the single-rank time of the same problem."""
    workload: tuple          # (dim, precision, integrator)
    n: int
    ranks: int
    exchange: str            # "allgather" or "overlap"
    time: float              # s per step over `ranks`
    single_time: float       # T(1, N), s per step
    exposed: float | None = None  # the measured exposed exchange (allgather breakdown), s per step


@dataclass(frozen=True)
class ExposedExchange:
    """An all-gather's measured duration per step (the breakdown's exposed communication with exchange=allgather)."""
    workload: tuple
    n: int
    ranks: int
    seconds: float


def parse_exposed(text: str) -> ExposedExchange:
    """W:N:G:SECONDS, e.g. 2d/fp32/euler:16384:4:13.594e-6 (a `run`'s step breakdown with exchange=allgather)."""
    try:
        workload, n, ranks, seconds = text.split(":")
        dim, precision, integrator = workload.split("/")
        exposed = ExposedExchange(({"2d": 2, "3d": 3}[dim], precision, integrator), int(n), int(ranks), float(seconds))
    except (ValueError, KeyError):
        raise ValueError(f"wants W:N:G:SECONDS (2d/fp32/euler:16384:4:13.594e-6), got '{text}'") from None
    if exposed.workload[1] not in BYTES_PER_REAL or exposed.ranks < 2 or not exposed.seconds > 0:
        raise ValueError(f"wants a precision fp32|fp64, G >= 2 and a time > 0, got '{text}'")
    return exposed


@dataclass(frozen=True)
class Network:
    """Beyond one node (predictions only): ring hops between nodes have their own latency and bandwidth."""
    gpus_per_node: int
    inter_node_latency_s: float
    inter_node_bandwidth: float  # bytes/s per GPU


@dataclass
class Terms:
    launch_s: float = 0.0              # lambda, per all-gather whatever G
    latency_s: float = 0.0             # alpha, per ring hop
    inverse_bandwidth: float = 0.0     # 1/B in s per byte; 0 when the fit finds no bandwidth cost
    fixed_s: dict = field(default_factory=dict)  # workload -> t_fixed
    overlap_s: float | None = None     # None: no overlapped run to fit it from

    @property
    def bandwidth(self) -> float:
        return math.inf if self.inverse_bandwidth <= 0 else 1.0 / self.inverse_bandwidth

    def value(self, name) -> float:
        if name in SHARED_TERM_ATTRIBUTES:
            return getattr(self, SHARED_TERM_ATTRIBUTES[name]) or 0.0  # overlap_s: None when not fitted
        return self.fixed_s.get(name[1], 0.0)

    def set_value(self, name, value: float) -> None:
        if name in SHARED_TERM_ATTRIBUTES:
            setattr(self, SHARED_TERM_ATTRIBUTES[name], value)
        else:
            self.fixed_s[name[1]] = value


def exchange_bytes(workload: tuple, n: int) -> int:
    dim, precision, _ = workload
    return n * dim * BYTES_PER_REAL[precision]


def ring_latency(terms: Terms, ranks: int, network: Network | None = None) -> float:
    """L(G): lambda and G - 1 hops in one node; over several nodes one hop per node crosses the network."""
    if network is None or ranks <= network.gpus_per_node:
        return terms.launch_s + (ranks - 1) * terms.latency_s
    nodes = math.ceil(ranks / network.gpus_per_node)
    return terms.launch_s + (ranks - nodes) * terms.latency_s + nodes * network.inter_node_latency_s


def exchange_time(terms: Terms, workload: tuple, n: int, ranks: int, network: Network | None = None) -> float:
    if ranks <= 1:
        return 0.0
    received = (ranks - 1) / ranks * exchange_bytes(workload, n)
    inverse_bandwidth = terms.inverse_bandwidth
    if network is not None and ranks > network.gpus_per_node:  # the ring runs at its slowest link
        inverse_bandwidth = max(inverse_bandwidth, 1.0 / network.inter_node_bandwidth)
    return ring_latency(terms, ranks, network) + received * inverse_bandwidth


@dataclass(frozen=True)
class Prediction:
    time: float        # s per step
    compute: float     # T(1)/G + (1 - 1/G) t_fixed
    exchange: float    # X
    exposed: float     # what of X (and of the overlap's own cost) the step waits for
    latency: float     # L(G), part of X
    hidden_by: float   # H: the owned block's pull, which an overlapped exchange can hide behind

    def efficiency(self, single_time: float, ranks: int) -> float:
        return single_time / (ranks * self.time)


def predict(terms: Terms, workload: tuple, n: int, ranks: int, exchange: str, single_time: float,
            network: Network | None = None) -> Prediction:
    fixed = terms.fixed_s.get(workload, 0.0)
    compute = single_time / ranks + (1 - 1 / ranks) * fixed
    x = exchange_time(terms, workload, n, ranks, network)
    hidden_by = (single_time - fixed) / ranks ** 2
    if exchange == "overlap" and ranks > 1:
        exposed = (terms.overlap_s or 0.0) + max(0.0, x - hidden_by)
    else:
        exposed = x
    return Prediction(compute + exposed, compute, x, exposed, ring_latency(terms, ranks, network), hidden_by)


# ---------------------------------------------------------------------------------------------
# The fit: least squares of the relative residuals (model - measured) / measured, every term >= 0.


@dataclass
class FittedPoint:
    observation: Observation
    model_time: float
    shared: bool     # its workload fitted the shared terms (alpha, B, t_overlap); else only its own t_fixed

    @property
    def residual(self) -> float:
        return self.model_time / self.observation.time - 1

    @property
    def efficiency(self) -> float:
        return self.observation.single_time / (self.observation.ranks * self.observation.time)

    @property
    def model_efficiency(self) -> float:
        return self.observation.single_time / (self.observation.ranks * self.model_time)


@dataclass
class Fit:
    terms: Terms
    reference: tuple                   # the workload whose points fitted the shared terms
    points: list                       # FittedPoint, every observation
    exposed: list                      # (ExposedExchange, model seconds)
    rms: float                         # over the reference workload's points and the exposed exchanges

    def point(self, workload, n, ranks, exchange) -> FittedPoint | None:
        return next((p for p in self.points if (p.observation.workload, p.observation.n, p.observation.ranks,
                                                p.observation.exchange) == (workload, n, ranks, exchange)), None)


def _linear_row(o: Observation, exposed_branch: bool) -> tuple[float, dict]:
    """(constant, {term: coefficient}) with T_model = constant + sum of coefficient x term."""
    g, w = o.ranks, o.workload
    received = (g - 1) / g * exchange_bytes(w, o.n)
    constant, row = o.single_time / g, {fixed_name(w): 1 - 1 / g}
    if o.exchange != "overlap" or exposed_branch:
        row[LAUNCH], row[LATENCY], row[INVERSE_BANDWIDTH] = 1.0, g - 1, received
    if o.exchange == "overlap":
        row[OVERLAP] = 1.0
        if exposed_branch:  # - H = -(T(1) - t_fixed)/G^2
            constant -= o.single_time / g ** 2
            row[fixed_name(w)] += 1 / g ** 2
    return constant, row


def _exposed_row(e: ExposedExchange) -> tuple[float, dict]:
    g = e.ranks
    return 0.0, {LAUNCH: 1.0, LATENCY: g - 1, INVERSE_BANDWIDTH: (g - 1) / g * exchange_bytes(e.workload, e.n)}


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float] | None:
    """Least squares by the normal equations, columns scaled to unit norm (the terms span 12 decades)."""
    columns = len(matrix[0])
    norms = [math.sqrt(sum(r[j] ** 2 for r in matrix)) or 1.0 for j in range(columns)]
    a = [[sum(r[i] * r[j] for r in matrix) / (norms[i] * norms[j]) for j in range(columns)]
         + [sum(r[i] * y for r, y in zip(matrix, rhs)) / norms[i]] for i in range(columns)]
    for k in range(columns):
        pivot = max(range(k, columns), key=lambda i: abs(a[i][k]))
        if abs(a[pivot][k]) < 1e-12:
            return None
        a[k], a[pivot] = a[pivot], a[k]
        for i in range(columns):
            if i != k:
                factor = a[i][k] / a[k][k]
                a[i] = [x - factor * y for x, y in zip(a[i], a[k])]
    return [a[i][columns] / a[i][i] / norms[i] for i in range(columns)]


def _nonnegative_least_squares(rows: list[tuple[float, dict, float]], free: list) -> dict:
    """The terms in `free`, all >= 0, minimising sum ((constant + row . terms - y) / y)^2: every subset of
    free terms solved without the bound, the best whose terms are all >= 0 kept (at most 5 terms here)."""
    best, best_cost = {name: 0.0 for name in free}, math.inf
    for size in range(len(free) + 1):
        for subset in itertools.combinations(free, size):
            matrix = [[row.get(name, 0.0) / y for name in subset] for _, row, y in rows]
            rhs = [(y - constant) / y for constant, _, y in rows]
            solution = _solve(matrix, rhs) if subset else []
            if solution is None or any(v < 0 for v in solution):
                continue
            values = {name: 0.0 for name in free} | dict(zip(subset, solution))
            cost = sum(((constant + sum(c * values[n] for n, c in row.items() if n in values) - y) / y) ** 2
                       for constant, row, y in rows)
            if cost < best_cost - 1e-15:
                best, best_cost = values, cost
    return best


def _fit_terms(observations, exposed, free: list, terms: Terms) -> Terms:
    """Fits the free terms (the others fixed at `terms`' values); the overlap's max(0, X - H) is linear on
    either side, so the side of each overlapped point is taken from the previous estimate until none changes."""
    branches = None
    for _ in range(20):
        new_branches = {o: exchange_time(terms, o.workload, o.n, o.ranks) > (o.single_time - terms.fixed_s.get(
            o.workload, 0.0)) / o.ranks ** 2 for o in observations if o.exchange == "overlap"}
        if new_branches == branches:
            break
        branches = new_branches
        rows = []
        for o in observations:
            constant, row = _linear_row(o, branches.get(o, False))
            rows.append((constant, row, o.time))
        for e in exposed:
            constant, row = _exposed_row(e)
            rows.append((constant, row, e.seconds))
        # Terms not free enter as constants.
        fixed_rows = []
        for constant, row, y in rows:
            constant += sum(c * terms.value(n) for n, c in row.items() if n not in free)
            fixed_rows.append((constant, {n: c for n, c in row.items() if n in free}, y))
        values = _nonnegative_least_squares(fixed_rows, free)
        for name, v in values.items():
            terms.set_value(name, v)
    return terms


def reference_workload(observations) -> tuple:
    """The workload with the most points (the first in sorted order on a tie): it fits the shared terms."""
    counts: dict = {}
    for o in observations:
        counts[o.workload] = counts.get(o.workload, 0) + 1
    return min(counts, key=lambda w: (-counts[w], w))


# A recorded all-gather breakdown is the exchange's duration only while the ranks reach it together.
# From N = 2^18 a step lasts milliseconds and the slower GPU's lag lands in the others' all-gather
# wait (4.4 ms recorded at N = 2^20 on 2 H200s, where the exchange itself takes about 0.07 ms).
RECORDED_EXCHANGE_MAX_N = 65536


def fit(observations: list[Observation], exposed: list[ExposedExchange] = (),
        inverse_bandwidth: float | None = None) -> Fit:
    """lambda, alpha, B and t_overlap (shared) with t_fixed of the reference workload from that workload's points and
    every measured exposed exchange; then each other workload's own t_fixed from its points with the shared
    terms held. Why not all at once: a workload whose compute term is off (a kernel's grid that fits the
    GPU worse at N/G bodies than at N) would push its error into the exchange terms. `inverse_bandwidth`
    holds 1/B at that value (the profile of the fit over B)."""
    if not observations:
        raise ValueError("no observation over several ranks to fit")
    exposed = list(exposed) + [ExposedExchange(o.workload, o.n, o.ranks, o.exposed) for o in observations
                               if o.exposed is not None and o.exchange == "allgather"
                               and o.n <= RECORDED_EXCHANGE_MAX_N]
    reference = reference_workload(observations)
    shared_points = [o for o in observations if o.workload == reference]
    terms = Terms(inverse_bandwidth=inverse_bandwidth or 0.0)
    free = [LAUNCH, LATENCY] + ([INVERSE_BANDWIDTH] if inverse_bandwidth is None else []) + [fixed_name(reference)]
    if any(o.exchange == "overlap" for o in shared_points):
        free.append(OVERLAP)
        terms.overlap_s = 0.0
    _fit_terms(shared_points, exposed, free, terms)
    for workload in sorted({o.workload for o in observations} - {reference}):
        _fit_terms([o for o in observations if o.workload == workload], [], [fixed_name(workload)], terms)
    points = [FittedPoint(o, predict(terms, o.workload, o.n, o.ranks, o.exchange, o.single_time).time,
                          o.workload == reference) for o in observations]
    exposed_model = [(e, exchange_time(terms, e.workload, e.n, e.ranks)) for e in exposed]
    squares = [p.residual ** 2 for p in points if p.shared] + [(m / e.seconds - 1) ** 2 for e, m in exposed_model]
    return Fit(terms, reference, points, exposed_model, math.sqrt(sum(squares) / len(squares)))
