#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (corpus/<reader>/) and corpus/expected.tsv, the
outcome each file must have: tests/test_reliability.cpp reads every file with its reader and checks
it, and docs/reliability.md lists them. corpus/results/valid-small.json (a results file written by
`nbody-bench matrix`) is the one input; everything else is derived here. Run from anywhere:
    python3 fuzz/make_corpus.py            # every file and expected.tsv
    python3 fuzz/make_corpus.py --large    # only the large files (million-*, 2-3 MB each), which git
                                           # ignores: the tests' configure step and scripts/fuzz.sh write them
"""
import json
import pathlib
import random
import sys

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"

# (reader, file, options, outcome, message part, what it tries)
rows = []
LARGE_ONLY = "--large" in sys.argv[1:]


def is_large(name):
    return name.startswith("million-")


def put(reader, name, data, outcome, message="", options="-", what=""):
    rows.append((reader, name, options, outcome, message, what))
    if LARGE_ONLY and not is_large(name):
        return
    path = CORPUS / reader / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


# --- CSV states (SPEC §1, §2): options dim=2|3, fp32|fp64, n=N ------------------------------------
S = "state_csv"
put(S, "valid-2d.csv", "# x,y,vx,vy,m\n0.1,0.2,0,0,0.5\n\n0.3,0.4,1,-1,0.5\n", "accepted", "", "dim=2", "a 2D state with a comment and a blank line")
put(S, "valid-3d.csv", "0.1,0.2,0.3,0,0,0,1\n0.4,0.5,0.6,1,1,1,1\n", "accepted", "", "dim=3", "a 3D state")
put(S, "valid-defaults.csv", ",,,,\n0.5,,,,\n,,0.25,,2\n", "accepted", "", "dim=2", "empty fields take their defaults")
put(S, "valid-crlf.csv", "0.1,0.2,0,0,1\r\n0.3,0.4,0,0,1\r\n", "accepted", "", "dim=2", "CRLF line ends")
put(S, "valid-bom.csv", b"\xef\xbb\xbf0.1,0.2,0,0,1\n", "accepted", "", "dim=2", "a UTF-8 byte-order mark")
put(S, "valid-blanks-plus.csv", "\t+0.1 ,\t0.2 , +1e-3,0 ,1\n", "accepted", "", "dim=2", "blanks around fields, a leading +")
put(S, "valid-fp64-huge.csv", "1e300,0.2,0,0,1\n", "accepted", "", "dim=2 fp64", "a value beyond float32 but within float64")
put(S, "valid-n-matches.csv", "0.1,0.2,0,0,1\n0.3,0.4,0,0,1\n", "accepted", "", "dim=2 n=2", "N given and matched")
put(S, "empty.csv", "", "refused", "contains no bodies", "dim=2", "an empty file")
put(S, "comments-only.csv", "# nothing\n\n   \n", "refused", "contains no bodies", "dim=2", "comments and blank lines only")
put(S, "utf16.csv", "0.1,0.2,0,0,1\n".encode("utf-16"), "refused", "is UTF-16", "dim=2", "a UTF-16 file")
put(S, "huge-number.csv", "1e39,0.2,0,0,1\n", "refused", "field 1 (x): '1e39' is out of float32 range", "dim=2", "a number beyond float32")
put(S, "huge-number-fp64.csv", "0.1,0.2,0,1e309,1\n", "refused", "field 4 (vy): '1e309' is out of float64 range", "dim=2 fp64", "a number beyond float64")
put(S, "tiny-number.csv", "1e-50,0.2,0,0,1\n", "refused", "field 1 (x): '1e-50' is out of float32 range", "dim=2", "a nonzero number that rounds to zero in float32")
put(S, "nan-position.csv", "nan,0.2,0,0,1\n", "refused", "field 1 (x): 'nan' is not finite", "dim=2", "NaN position")
put(S, "inf-velocity.csv", "0.1,0.2,-inf,0,1\n", "refused", "field 3 (vx): '-inf' is not finite", "dim=2", "infinite velocity")
put(S, "nan-mass.csv", "0.1,0.2,0,0,NaN\n", "refused", "field 5 (m): 'NaN' is not finite", "dim=2", "NaN mass")
put(S, "inf-mass-3d.csv", "0.1,0.2,0.3,0,0,0,Infinity\n", "refused", "field 7 (m): 'Infinity' is not finite", "dim=3", "infinite mass")
put(S, "negative-mass.csv", "0.1,0.2,0,0,-1\n", "refused", "field 5 (m): mass must be positive, got '-1'", "dim=2", "negative mass")
put(S, "zero-mass.csv", "0.1,0.2,0,0,-0.0\n", "refused", "mass must be positive", "dim=2", "zero mass (-0.0)")
put(S, "missing-field.csv", "0.1,0.2,0,1\n", "refused", "expected 5 fields x,y,vx,vy,m (--dim 2), found 4", "dim=2", "a field missing")
put(S, "extra-field.csv", "0.1,0.2,0,0,1,\n", "refused", "found 6", "dim=2", "a trailing comma (a sixth field)")
put(S, "five-fields-in-3d.csv", "0.1,0.2,0,0,1\n", "refused", "expected 7 fields x,y,z,vx,vy,vz,m (--dim 3), found 5", "dim=3", "a 2D file read in 3D")
put(S, "n-mismatch.csv", "0.1,0.2,0,0,1\n0.3,0.4,0,0,1\n", "refused", "holds 2 bodies but N = 3 was asked for", "dim=2 n=3", "fewer bodies than N")
put(S, "n-too-many.csv", "0.1,0.2,0,0,1\n" * 4, "refused", "holds 4 bodies but N = 3 was asked for", "dim=2 n=3", "more bodies than N")
put(S, "million-fields.csv", "0," * 1000000 + "0\n", "refused", "line longer than 65536 bytes", "dim=2", "10^6 fields on one line")
put(S, "long-blank-line.csv", " " * 70000 + "0.1,0.2,0,0,1\n", "refused", "line longer than 65536 bytes", "dim=2", "a line of 70000 blanks and a body")
put(S, "text.csv", "0.1,abc,0,0,1\n", "refused", "field 2 (y): 'abc' is not a number", "dim=2", "text in a field")
put(S, "sign-after-plus.csv", "+-1,0.2,0,0,1\n", "refused", "'+-1' is not a number", "dim=2", "two signs")
put(S, "hex-float.csv", "0x1p3,0.2,0,0,1\n", "refused", "'0x1p3' is not a number", "dim=2", "a hexadecimal float")
put(S, "decimal-comma.csv", "0,1;0,2;0;0;1\n", "refused", "expected 5 fields", "dim=2", "semicolons and decimal commas")
put(S, "quoted-fields.csv", '"0.1","0.2",0,0,1\n', "refused", "'\"0.1\"' is not a number", "dim=2", "quoted fields")
put(S, "cr-only.csv", "0.1,0.2,0,0,1\r0.3,0.4,0,0,1\r", "refused", "carriage return inside the line", "dim=2", "old Mac line ends (CR only)")
put(S, "nul-byte.csv", b"0.1,0\x00.2,0,0,1\n", "refused", "field 2 (y): '0\\x00.2' is not a number", "dim=2", "a NUL byte in a field")
rng = random.Random(17)
put(S, "binary.csv", bytes(rng.randrange(256) for _ in range(4096)), "refused", "", "dim=2", "4 KiB of random bytes")

# --- matrices (matrices/README.md) ---------------------------------------------------------------
M = "matrix"
small = {"name": "small", "steps": 2, "warmup_steps": 0, "repetitions": 1,
         "groups": [{"variants": ["serial.reference"], "n": [64, 100], "d": [4], "dim": [2, 3]}]}
small_text = json.dumps(small) + "\n"
put(M, "valid-small.json", small_text, "accepted", "", "-", "a small matrix sweeping a workload axis")
put(M, "valid-quick.json", (HERE.parent / "matrices" / "quick.json").read_text(), "accepted", "", "-", "matrices/quick.json")
put(M, "valid-crlf.json", json.dumps(small, indent=1).replace("\n", "\r\n") + "\r\n", "accepted", "", "-", "CRLF line ends")
put(M, "valid-bom.json", b"\xef\xbb\xbf" + small_text.encode(), "accepted", "", "-", "a UTF-8 byte-order mark")
put(M, "empty.json", "", "refused", "not valid JSON at line 1, column 1", "-", "an empty file")
put(M, "truncated.json", small_text[: len(small_text) // 2], "refused", "not valid JSON at line", "-", "a file cut in the middle")
put(M, "trailing-garbage.json", small_text + "x", "refused", "not valid JSON at line", "-", "text after the document")
put(M, "nan.json", small_text.replace('"steps": 2', '"steps": NaN'), "refused", "not valid JSON at line", "-", "NaN (not JSON)")
put(M, "number-overflow.json", small_text.replace('"steps": 2', '"steps": 1e400'), "refused", "not valid JSON", "-", "a number beyond the double range")
put(M, "huge-integer.json", small_text.replace("[64, 100]", "[18446744073709551616]"), "refused", "groups[0].n[0]: must be an integer", "-", "an integer beyond 64 bits")
put(M, "n-above-max.json", small_text.replace("[64, 100]", "[67108865]"), "refused", "groups[0].n[0]: must be in [1, 67108864], got 67108865", "-", "N above the largest")
put(M, "negative-seed.json", small_text.replace('"name": "small"', '"name": "small", "seed": -1'), "refused", "seed: must be an integer in [0, 18446744073709551615], got -1", "-", "a negative seed")
put(M, "zero-dt.json", small_text.replace('"name": "small"', '"name": "small", "constants": {"dt": 0}'), "refused", "constants.dt: must be a positive finite number", "-", "a zero time step")
put(M, "missing-groups.json", '{"name": "x"}', "refused", "\"groups\" must be a non-empty list", "-", "no groups")
put(M, "missing-name.json", '{"groups": [{"variants": ["serial.*"], "n": [8], "d": [2]}]}', "refused", "missing \"name\"", "-", "no name")
put(M, "missing-n.json", '{"name": "x", "groups": [{"variants": ["serial.*"], "d": [2]}]}', "refused", "groups[0]: missing \"n\"", "-", "a group without N")
put(M, "wrong-type-n.json", small_text.replace("[64, 100]", '"64"'), "refused", "groups[0].n: must be a non-empty list of integers", "-", "N as a string")
put(M, "wrong-type-groups.json", '{"name": "x", "groups": {}}', "refused", "\"groups\" must be a non-empty list", "-", "groups as an object")
put(M, "wrong-type-top.json", "[1, 2]", "refused", "top level: must be an object", "-", "a list instead of an object")
put(M, "wrong-workload.json", small_text.replace('"dim": [2, 3]', '"dim": [2, 4]'), "refused", "groups[0].dim[1]: dim '4' is not one of 2|3", "-", "dimension 4")
put(M, "unknown-key.json", small_text.replace('"steps": 2', '"stepz": 2'), "refused", "top level: unknown key \"stepz\"", "-", "a misspelt key")
put(M, "control-char-key.json", small_text.replace('"steps": 2', '"st\\u0000eps": 2'), "refused", "unknown key \"st\\x00eps\"", "-", "a NUL inside a key")
put(M, "control-char-name.json", small_text.replace('"name": "small"', '"name": "a\\nb"'), "refused", "name: holds a control character", "-", "a newline inside the name")
put(M, "long-name.json", small_text.replace('"name": "small"', '"name": "' + "a" * 5000 + '"'), "refused", "name: longer than 4096 bytes", "-", "a 5000-byte name")
put(M, "invalid-utf8.json", small_text.encode().replace(b'"small"', b'"sm\xffall"'), "refused", "not valid JSON", "-", "a string that is not UTF-8")
put(M, "duplicate-key.json", small_text.replace('"steps": 2', '"steps": 2, "steps": 3'), "refused", "/steps\": key \"steps\" appears twice in one object", "-", "a key twice (JSON would keep the last)")
put(M, "deep-nesting.json", "[" * 10000 + "]" * 10000, "refused", "nested deeper than 64 levels", "-", "lists nested 10^4 deep")
put(M, "deep-in-description.json", '{"name": "x", "description": ' + '{"a": ' * 10000 + "1" + "}" * 10000 + ', "groups": []}', "refused", "nested deeper than 64 levels", "-", "objects nested 10^4 deep inside a valid key")
put(M, "million-sizes.json", '{"name": "x", "groups": [{"variants": ["serial.reference"], "n": [' + ",".join(str(i) for i in range(1, 1000001)) + '], "d": [4]}]}', "refused", "more than 100000 configurations", "-", "10^6 values of N")
put(M, "explosion.json", '{"name": "x", "groups": [{"variants": ["serial.reference"], "n": [' + ",".join(str(i) for i in range(1, 401)) + '], "d": [' + ",".join(str(i) for i in range(1, 401)) + "]}]}", "refused", "more than 100000 configurations", "-", "400 N x 400 D")
put(M, "misspelt-variant.json", small_text.replace('"serial.reference"', '"serail.reference"'), "refused", "group \"group0\": variant pattern \"serail.reference\" matches no variant", "-", "a misspelt variant id")
put(M, "unknown-model.json", small_text.replace('"serial.reference"', '"serial.reference", "sycl.*"'), "refused", "variant pattern \"sycl.*\" matches no variant (no model \"sycl\"", "-", "a pattern of no model of the suite beside a good one")
put(M, "duplicate-n.json", small_text.replace("[64, 100]", "[64, 100, 64]"), "refused", "groups[0].n: lists 64 twice", "-", "a value listed twice in n")
put(M, "duplicate-tuning.json", small_text.replace('"dim": [2, 3]', '"tunings": {"map": ["recount", "recount"]}'), "refused", "groups[0].tunings.map: lists \"recount\" twice", "-", "a tuning value listed twice")
put(M, "duplicate-variant.json", small_text.replace('"serial.reference"', '"serial.reference", "serial.reference"'), "refused", "groups[0].variants: lists \"serial.reference\" twice", "-", "a variant listed twice")


def put_small_with(name, top_keys, outcome, message, what):
    """The small matrix with `top_keys` (JSON text) added at its top level."""
    put(M, name, small_text.replace('"name": "small"', '"name": "small", ' + top_keys), outcome, message, "-", what)


put_small_with("capped-to-nothing.json", '"max_n": {"serial.*": 50}', "refused", "group \"group0\" expands to no configuration: serial.reference not run at N=64 (cap 50)", "every N above the cap")
put_small_with("seed-2-to-64.json", '"seed": 18446744073709551616', "refused", "seed: must be an integer in [0, 18446744073709551615]", "a seed of 2^64")
put_small_with("seed-fraction.json", '"seed": 1e23', "refused", "seed: must be an integer in [0, 18446744073709551615]", "a seed written as 1e23")
put_small_with("valid-largest-seed.json", '"seed": 18446744073709551615', "accepted", "", "the largest seed, 2^64 - 1")
put_small_with("softening-underflow.json", '"constants": {"softening": 1e-20}', "refused", "constants.softening 1e-20: its square underflows in fp32", "a softening whose square is 0 in float32")
put(M, "dt-overflow.json", small_text.replace('"name": "small"', '"name": "small", "constants": {"dt": 1e200}').replace('"dim": [2, 3]', '"precision": "fp64"'), "refused", "constants.dt 1e+200: its square overflows in fp64", "-", "a time step whose square is infinite in float64")
put(M, "binary.json", bytes(rng.randrange(256) for _ in range(4096)), "refused", "not valid JSON", "-", "4 KiB of random bytes")

# --- results files (docs/results-format.md) ------------------------------------------------------
R = "results"
valid = json.loads((CORPUS / R / "valid-small.json").read_text())
rows.append((R, "valid-small.json", "-", "accepted", "", "a results file `matrix` wrote (2D fp32 and 3D fp64 leapfrog)"))


def results(doc, indent=1):
    return json.dumps(doc, indent=indent) + "\n"


def changed(edit, indent=1):
    doc = json.loads(json.dumps(valid))
    edit(doc)
    return results(doc, indent)


put(R, "valid-crlf.json", results(valid).replace("\n", "\r\n"), "accepted", "", "-", "CRLF line ends")
put(R, "valid-bom.json", b"\xef\xbb\xbf" + results(valid).encode(), "accepted", "", "-", "a UTF-8 byte-order mark")


def version_1(doc):
    doc["context"]["nbody_results_version"] = 1
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b.get("dim", 2) == 2]
    for b in doc["benchmarks"]:
        for key in ("dim", "precision", "integrator", "efficiency_limit_inputs"):
            b.pop(key, None)


put(R, "valid-version1.json", changed(version_1), "accepted", "", "-", "a version-1 file (no workload fields)")
definitions = [{"name": "group0", "variants": ["serial.reference"], "n": [64], "d": [4], "dim": [2], "precision": ["fp32"],
                "integrator": ["euler"], "steps": 2, "warmup_steps": 0, "min_time_s": 0, "repetitions": 1, "verify_steps": 10,
                "tunings": {}, "max_n": []}]
put(R, "valid-group-definitions.json", changed(lambda d: d["context"]["matrix"].update(group_definitions=definitions)), "accepted", "", "-", "the groups a resume compares, as matrix records them")
put(R, "wrong-type-group-definitions.json", changed(lambda d: d["context"]["matrix"].update(group_definitions={"n": [64]})), "refused", "/context/matrix/group_definitions: value {\"n\":[64]} is not of type \"array\"", "-", "group definitions as an object")
put(R, "seed-2-to-64.json", changed(lambda d: d["context"]["matrix"].update(seed=2 ** 64)), "refused", "/context/matrix/seed", "-", "a recorded seed of 2^64")
put(R, "empty.json", "", "refused", "not valid JSON at line 1, column 1", "-", "an empty file")
put(R, "truncated.json", results(valid)[:5000], "refused", "not valid JSON at line", "-", "a file cut in the middle (a killed writer)")
put(R, "nan.json", results(valid).replace('"time_per_step_s": ', '"time_per_step_s": NaN, "x": ', 1), "refused", "not valid JSON at line", "-", "NaN (not JSON)")
put(R, "huge-n.json", changed(lambda d: d["benchmarks"][0].update(n=1e300)), "refused", "/benchmarks/0/n: value 1e+300 is not of type \"integer\"", "-", "N = 1e300")
put(R, "int-overflow.json", changed(lambda d: d["benchmarks"][0].update(d=3e9)), "refused", "/benchmarks/0/d: 3000000000.0 does not fit the range of an int", "-", "D beyond an int")
put(R, "negative-n.json", changed(lambda d: d["benchmarks"][0].update(n=-16)), "refused", "/benchmarks/0/n: -16 is below the minimum 1", "-", "a negative N")
put(R, "missing-field.json", changed(lambda d: d["benchmarks"][0].pop("n")), "refused", "/benchmarks/0: missing required field \"n\"", "-", "an entry without N")
put(R, "missing-context.json", changed(lambda d: d.pop("context")), "refused", "missing required field \"context\"", "-", "no context")
put(R, "wrong-type.json", changed(lambda d: d["benchmarks"][0].update(n="16")), "refused", "/benchmarks/0/n: value \"16\" is not of type \"integer\"", "-", "N as a string")
put(R, "wrong-type-top.json", "[]", "refused", "is not of type \"object\"", "-", "a list instead of an object")
put(R, "wrong-workload.json", changed(lambda d: d["benchmarks"][0].update(precision="fp16")), "refused", "/benchmarks/0/precision: value \"fp16\" is not one of", "-", "precision fp16")
put(R, "inconsistent-rate.json", changed(lambda d: d["benchmarks"][0].update(interactions_per_second=1.0)), "refused", "interactions_per_second is not n^2 / time_per_step_s", "-", "a rate that is not N^2 / time per step")
put(R, "missing-repetition.json", changed(lambda d: d["benchmarks"].pop(0)), "refused", "1 iteration entries for 2 repetitions", "-", "a repetition missing")
put(R, "newline-run-name.json", changed(lambda d: d["benchmarks"][0].update(run_name="a\nb")), "refused", "run_name \"a\\x0ab\" does not name its fields", "-", "a newline inside run_name")
put(R, "long-variant.json", changed(lambda d: d["benchmarks"][0].update(variant="a" * 100000)), "refused", "string longer than 1024 characters", "-", "a 10^5-byte variant id (regex)")
put(R, "duplicate-key.json", results(valid).replace('"benchmarks": [', '"benchmarks": [], "benchmarks": [', 1), "refused", "key \"benchmarks\" appears twice", "-", "a key twice")
put(R, "deep-nesting.json", '{"context": ' + "[" * 10000 + "]" * 10000 + "}", "refused", "nested deeper than 64 levels", "-", "lists nested 10^4 deep")
put(R, "million-entries.json", changed(lambda d: d.update(benchmarks=[0] * 1000000), indent=None), "refused", "/benchmarks/0: value 0 is not of type \"object\"", "-", "10^6 numbers as entries")
put(R, "million-extra.json", changed(lambda d: d.update(extra=[0] * 1000000), indent=None), "accepted", "", "-", "10^6 numbers in a top-level field the schema does not name (it allows others, as Google Benchmark's files have)")
put(R, "binary.json", bytes(rng.randrange(256) for _ in range(4096)), "refused", "not valid JSON", "-", "4 KiB of random bytes")

# Bodies on and outside the unit square's edges and corners, far away, and too far apart for |d|^2:
# the verifier's map check and the fast 1/sqrt paths (fuzz/verifier_corpus_shapes.py).
sys.path.insert(0, str(HERE))
from verifier_corpus_shapes import SHAPES  # noqa: E402

for shape in SHAPES:
    put(*shape)

if LARGE_ONLY:
    print(f"{sum(is_large(row[1]) for row in rows)} large corpus files")
else:
    with open(CORPUS / "expected.tsv", "w") as out:
        out.write("# reader\tfile\toptions\toutcome\tmessage part\twhat it tries (written by fuzz/make_corpus.py)\n")
        for row in rows:
            out.write("\t".join(row) + "\n")
    print(f"{len(rows)} corpus files")
