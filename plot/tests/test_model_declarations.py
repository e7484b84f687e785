"""The plot tool names, orders and groups models by what each model declares (models/<name>/model.cmake,
docs/adding-a-model.md): from a results file's context where it records them, else from the checkout."""
import copy
import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from nbodyplot import analysis, models, performance_portability, results  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixture" / "real_cpu.json"
TWIN = {"id": "omptwin", "name": "OpenMP twin", "family": "OpenMP-twin", "order": 45, "native_spaces": [],
        "in_build": True, "status": "on (OpenMP 4.5)"}


def context_models(*extra):
    """context.models as a build of the checkout's models (all in the build) plus extra entries writes it."""
    written = [{"id": m.id, "name": m.name, "family": m.family, "order": m.order, "native_spaces": list(m.native_spaces),
                "in_build": True, "status": "on"} for m in models.checkout_models().values()]
    return written + list(extra)


class CheckoutDeclarations(unittest.TestCase):
    def test_every_model_folder_declares_its_name_family_and_order(self):
        declared = models.from_checkout()
        self.assertEqual(declared["omp"], models.Model("omp", "OpenMP", "hand-written", 40, ("openmp", "threads")))
        self.assertEqual(declared["cuda"].native_spaces, ("cuda",))
        # a quoted TITLE, a call over three lines
        self.assertEqual((declared["omp_target"].name, declared["omp_target"].family), ("OpenMP offload", "OpenMP-offload"))
        # FAMILY defaults to TITLE
        self.assertEqual(declared["kokkos"].family, "Kokkos")
        self.assertEqual(declared["serial"].family, "hand-written")
        folders = {p.parent.name for p in models.CHECKOUT_MODELS.glob("*/model.cmake")}
        self.assertEqual(set(declared), folders)
        orders = [m.order for m in declared.values()]
        self.assertEqual(len(orders), len(set(orders)), "two models share a REPORT_ORDER")

    def test_a_new_folder_is_a_new_model_without_a_plot_edit(self):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "newmodel"
            folder.mkdir()
            (folder / "model.cmake").write_text(
                '# a comment naming nbody_register_model( is not the call\n'
                'option(NBODY_ENABLE_NEW "x" ON)\n'
                'nbody_register_model(NAME newmodel TITLE "New (model)" IN_BUILD ${NBODY_WITH_NEW}\n'
                '                     STATUS "${NBODY_MODEL_STATUS_NEW}"  # why it is off\n'
                '                     REPORT_ORDER 5 PACKAGES libfoo-dev libbar1 NATIVE_SPACES hip)\n')
            declared = models.from_checkout(Path(tmp))
        self.assertEqual(declared, {"newmodel": models.Model("newmodel", "New (model)", "New (model)", 5, ("hip",))})

    def test_a_declaration_that_cannot_be_read_names_its_file(self):
        for text, message in (("set(X 1)\n", "expected one nbody_register_model( call, found 0"),
                              ("nbody_register_model(NAME a STATUS on\n", "no closing parenthesis"),
                              ("nbody_register_model(NAME a STATUS on)\n", "REPORT_ORDER '' is not an integer"),
                              ("nbody_register_model(NAME A REPORT_ORDER 1)\n", "NAME 'A' is not a model name"),
                              ("nbody_register_model(NAME a TITLE x y REPORT_ORDER 1)\n", "unexpected argument 'y'")):
            with self.assertRaises(models.DeclarationError) as raised:
                models.parse_declaration(text, "models/a/model.cmake")
            self.assertIn("models/a/model.cmake: ", str(raised.exception))
            self.assertIn(message, str(raised.exception))


class ResultsDeclarations(unittest.TestCase):
    def tearDown(self):
        models.use_contexts([])

    def write(self, folder, document) -> str:
        path = Path(folder) / "results.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        return str(path)

    def twin_document(self, context_entries):
        """The fixture with omp.simd renamed omptwin.simd, its context declaring context_entries (None: no models)."""
        document = json.loads(FIXTURE.read_text(encoding="utf-8"))
        for entry in document["benchmarks"]:
            if entry["variant"] == "omp.simd":
                entry["variant"], entry["backend"] = "omptwin.simd", "omptwin"
                entry["name"] = entry["name"].replace("omp.simd", "omptwin.simd")
                entry["run_name"] = entry["run_name"].replace("omp.simd", "omptwin.simd")
        if context_entries is not None:
            document["context"]["models"] = context_entries
        return document

    def test_a_file_without_declarations_reads_the_checkouts(self):
        self.assertNotIn("models", json.loads(FIXTURE.read_text(encoding="utf-8"))["context"])
        _, configs = results.load([str(FIXTURE)])
        self.assertEqual(models.current().by_id, models.checkout_models())
        self.assertEqual({c.model for c in configs}, {"OpenMP", "serial"})
        self.assertEqual(sorted({c.model for c in configs}, key=analysis.model_key), ["OpenMP", "serial"])

    def test_a_model_the_context_declares_is_named_ordered_and_grouped_as_declared(self):
        with tempfile.TemporaryDirectory() as tmp:
            _, configs = results.load([self.write(tmp, self.twin_document(context_models(TWIN)))])
        self.assertEqual({c.model for c in configs if c.variant == "omptwin.simd"}, {"OpenMP twin"})
        # order 45: after OpenMP (40), before serial (90)
        self.assertEqual(sorted({c.model for c in configs}, key=analysis.model_key), ["OpenMP", "OpenMP twin", "serial"])
        families = performance_portability.best_of_families()
        self.assertTrue(families["best OpenMP-twin variant"]("omptwin.simd"))
        self.assertFalse(families["best hand-written variant"]("omptwin.simd"))
        self.assertTrue(families["best hand-written variant"]("omp.static"))

    def test_the_contexts_declaration_replaces_the_checkouts_and_a_model_left_out_is_not_read(self):
        renamed = [dict(m, name="OpenMP 5") if m["id"] == "omp" else m for m in context_models()]
        left_out = dict(TWIN, name="not this", in_build=False, status="off: not in NBODY_MODELS (omp)")
        with tempfile.TemporaryDirectory() as tmp:
            _, configs = results.load([self.write(tmp, self.twin_document(renamed + [left_out]))])
        self.assertEqual({c.model for c in configs}, {"OpenMP 5", "omptwin", "serial"})
        self.assertEqual(analysis.hand_written_model("openmp"), "OpenMP 5")

    def test_a_checkout_model_cmake_that_cannot_be_read_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "broken").mkdir()
            (Path(tmp) / "broken" / "model.cmake").write_text("nbody_register_model(NAME broken STATUS on)\n")
            saved = models.CHECKOUT_MODELS, models._checkout
            models.CHECKOUT_MODELS, models._checkout = Path(tmp), None
            try:
                with self.assertRaises(results.InputError) as raised:
                    results.load([str(FIXTURE)])
            finally:
                models.CHECKOUT_MODELS, models._checkout = saved
        self.assertIn("broken/model.cmake: nbody_register_model(broken): REPORT_ORDER", str(raised.exception))

    def test_a_context_whose_models_break_the_schema_is_refused(self):
        broken = copy.deepcopy(TWIN)
        del broken["order"]
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(results.InputError) as raised:
                results.load([self.write(tmp, self.twin_document(context_models(broken)))])
        self.assertIn("not a valid results file", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
