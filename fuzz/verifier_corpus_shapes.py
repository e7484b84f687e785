#!/usr/bin/env python3
"""CSV state shapes for the state_csv corpus that the verifier and the fast 1/sqrt paths must handle
(docs/verification.md, "Bodies outside the unit square"; docs/reliability.md): bodies just outside
each edge and corner of the unit square and far away, and bodies so far apart that |d|^2 overflows
the precision. Every one is accepted by the reader; `verify --input` on each must pass.

SHAPES holds make_corpus.py's put() arguments (reader, file, data, outcome, message part, options,
what it tries), for make_corpus.py to add:
    from verifier_corpus_shapes import SHAPES
    for shape in SHAPES: put(*shape)
Run alone, it prints the rows expected.tsv gains.
"""

E = 1e-6
_OUTSIDE_2D = [(-E, 0.5), (1.0, 0.5), (1.0 + E, 0.25), (0.5, -E), (0.5, 1.0), (0.75, 1.0 + E), (-E, -E), (1.0, -E),
               (-E, 1.0), (1.0, 1.0), (-0.01, -0.01), (2.0, -1.0), (100.0, 100.0), (-1e6, 3.0)]
_INSIDE_2D = [(0.3, 0.6), (0.5, 0.5), (0.25, 0.75), (0.6, 0.2)]


def _csv(rows, dim):
    lines = []
    for row in rows:
        position = list(row) + [0.5] * (dim - len(row))
        lines.append(",".join(repr(v) for v in position) + "," * (dim + 1) + "\n")  # empty velocities, mass
    return "".join(lines)


S = "state_csv"
SHAPES = [
    (S, "outside-edges-corners-far.csv", _csv(_INSIDE_2D + _OUTSIDE_2D, 2), "accepted", "", "dim=2",
     "bodies just outside each edge and corner and far away (never counted in the map)"),
    (S, "outside-edges-corners-far-3d.csv", _csv(_INSIDE_2D + [(x, y, 7.0) for x, y in _OUTSIDE_2D[:4]], 3), "accepted",
     "", "dim=3", "3D bodies outside the square in x-y, at z = 7 (the map is the x-y projection)"),
    (S, "far-apart-fp32.csv", _csv(_INSIDE_2D + [(1e30, 1e30), (-1e30, -1e30)], 2), "accepted", "", "dim=2",
     "bodies 2e30 apart: |d|^2 overflows float32"),
    (S, "far-apart-fp64.csv", _csv(_INSIDE_2D + [(1e200, 1e200), (-1e200, -1e200)], 2), "accepted", "", "dim=2 fp64",
     "bodies 2e200 apart: |d|^2 overflows float64"),
]

if __name__ == "__main__":
    for reader, name, _data, outcome, message, options, what in SHAPES:
        print("\t".join([reader, name, options, outcome, message, what]))
